#include "test_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <chrono>
#include <csignal>
#include <stdexcept>

namespace emco::kube::test {

TestServer::TestServer(Handler handler, std::optional<KeyPair> tls, std::string client_ca_pem)
    : m_handler(std::move(handler)) {
  // A client that goes away mid-answer must not kill the test binary.
  ::signal(SIGPIPE, SIG_IGN);
  if (tls) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    BIO* cb = BIO_new_mem_buf(tls->cert_pem.data(), static_cast<int>(tls->cert_pem.size()));
    X509* cert = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
    BIO_free(cb);
    BIO* kb = BIO_new_mem_buf(tls->key_pem.data(), static_cast<int>(tls->key_pem.size()));
    EVP_PKEY* key = PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr);
    BIO_free(kb);
    SSL_CTX_use_certificate(ctx, cert);
    SSL_CTX_use_PrivateKey(ctx, key);
    X509_free(cert);
    EVP_PKEY_free(key);
    if (!client_ca_pem.empty()) {
      BIO* ab = BIO_new_mem_buf(client_ca_pem.data(), static_cast<int>(client_ca_pem.size()));
      X509* ca = PEM_read_bio_X509(ab, nullptr, nullptr, nullptr);
      BIO_free(ab);
      X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), ca);
      X509_free(ca);
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    }
    // A client resuming a session (libcurl shares its session cache between
    // a client's connections) is refused with an "internal error" alert by
    // a server that asks for certificates without a session id context.
    static const unsigned char k_session_context[] = "emco-test-server";
    SSL_CTX_set_session_id_context(ctx, k_session_context, sizeof k_session_context - 1);
    m_ctx = ctx;
  }
  m_listen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(m_listen, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(m_listen, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(m_listen, 64) != 0)
    throw std::runtime_error("test server cannot listen");
  socklen_t len = sizeof addr;
  ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&addr), &len);
  m_port = ntohs(addr.sin_port);
  m_accept = std::thread([this] { accept_loop(); });
}

TestServer::~TestServer() {
  m_stop = true;
  m_accept.join();
  {
    std::lock_guard lock(m_mutex);
    for (int fd : m_open) ::shutdown(fd, SHUT_RDWR);
  }
  for (auto& t : m_workers) t.join();
  ::close(m_listen);
  if (m_ctx) SSL_CTX_free(static_cast<SSL_CTX*>(m_ctx));
}

std::string TestServer::url() const {
  return std::string(m_ctx ? "https" : "http") + "://127.0.0.1:" + std::to_string(m_port);
}

void TestServer::accept_loop() {
  while (!m_stop) {
    pollfd p{m_listen, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    int fd = ::accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ++m_connections;
    std::lock_guard lock(m_mutex);
    m_open.insert(fd);
    m_workers.emplace_back([this, fd] { serve(fd); });
  }
}

void TestServer::serve(int fd) {
  SSL* ssl = nullptr;
  std::string client_cn;
  auto io_read = [&](char* buf, int n) -> int { return ssl ? SSL_read(ssl, buf, n) : static_cast<int>(::read(fd, buf, static_cast<size_t>(n))); };
  auto io_write = [&](const std::string& s) {
    if (ssl) SSL_write(ssl, s.data(), static_cast<int>(s.size()));
    else (void)!::write(fd, s.data(), s.size());
  };
  bool ok = true;
  if (m_ctx) {
    ssl = SSL_new(static_cast<SSL_CTX*>(m_ctx));
    SSL_set_fd(ssl, fd);
    if (SSL_accept(ssl) != 1) {
      ok = false;
    } else if (X509* peer = SSL_get1_peer_certificate(ssl)) {
      char cn[256] = {};
      X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn, sizeof cn);
      client_cn = cn;
      X509_free(peer);
    }
    ERR_clear_error();
  }
  std::string buffer;
  while (ok && !m_stop) {
    size_t end;
    while ((end = buffer.find("\r\n\r\n")) == std::string::npos) {
      char buf[8192];
      int n = io_read(buf, sizeof buf);
      if (n <= 0) {
        ok = false;
        break;
      }
      buffer.append(buf, static_cast<size_t>(n));
    }
    if (!ok) break;
    TestRequest req;
    req.client_cn = client_cn;
    std::string head = buffer.substr(0, end);
    buffer.erase(0, end + 4);
    size_t line_end = head.find("\r\n");
    std::string first = head.substr(0, line_end);
    size_t sp1 = first.find(' '), sp2 = first.rfind(' ');
    req.method = first.substr(0, sp1);
    req.target = first.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t e = head.find("\r\n", pos);
      if (e == std::string::npos) e = head.size();
      std::string line = head.substr(pos, e - pos);
      pos = e + 2;
      size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      size_t v = line.find_first_not_of(' ', colon + 1);
      req.headers[name] = v == std::string::npos ? "" : line.substr(v);
    }
    size_t length = req.headers.count("content-length") ? std::stoul(req.headers["content-length"]) : 0;
    while (buffer.size() < length) {
      char buf[8192];
      int n = io_read(buf, sizeof buf);
      if (n <= 0) {
        ok = false;
        break;
      }
      buffer.append(buf, static_cast<size_t>(n));
    }
    if (!ok) break;
    req.body = buffer.substr(0, length);
    buffer.erase(0, length);
    ++m_requests;
    TestResponse res = m_handler(req);
    if (res.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(res.delay_ms));
    std::string out = "HTTP/1.1 " + std::to_string(res.status) + " X\r\nContent-Length: " +
                      std::to_string(res.body.size()) + "\r\n";
    bool has_type = false;
    for (const auto& [k, v] : res.headers) {
      out += k + ": " + v + "\r\n";
      if (k == "Content-Type") has_type = true;
    }
    if (!has_type) out += "Content-Type: application/json\r\n";
    out += "\r\n" + res.body;
    io_write(out);
  }
  if (ssl) {
    SSL_free(ssl);
  }
  std::lock_guard lock(m_mutex);
  m_open.erase(fd);
  ::close(fd);
}

}  // namespace emco::kube::test
