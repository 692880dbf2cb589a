#include "cli/serve/http.hpp"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/util/error.hpp"
#include "core/util/socket_port.hpp"
#include "core/util/strings.hpp"

namespace emco::cli::http {

namespace {

const char* reason_phrase(int code) {
  switch (code) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
  }
  return "Status";
}

const char* method_name(evhttp_cmd_type t) {
  switch (t) {
    case EVHTTP_REQ_GET: return "GET";
    case EVHTTP_REQ_POST: return "POST";
    case EVHTTP_REQ_PUT: return "PUT";
    case EVHTTP_REQ_DELETE: return "DELETE";
    case EVHTTP_REQ_HEAD: return "HEAD";
    case EVHTTP_REQ_OPTIONS: return "OPTIONS";
    case EVHTTP_REQ_PATCH: return "PATCH";
    default: return "OTHER";
  }
}

// A listening socket on `a` (non-blocking, close-on-exec); -1 with `why` set.
int listen_on(const Address& a, std::string& why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(a.port);
  if (int rc = getaddrinfo(a.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    why = gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* ai = found; ai && fd < 0; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      why = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  return fd;
}

std::string ssl_error() {
  unsigned long e = ERR_get_error();
  if (!e) return "unknown TLS error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

std::once_flag g_sigpipe_once;

}  // namespace

std::string Request::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

Address parse_address(const std::string& text) {
  Address a;
  std::string port;
  if (starts_with(text, "[")) {
    auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      fail(ErrorKind::usage, "invalid address '" + text + "'", "an IPv6 address is written [::1]:9015");
    a.host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string::npos) fail(ErrorKind::usage, "invalid address '" + text + "': no port", "e.g. 127.0.0.1:9015");
    a.host = colon == 0 ? "127.0.0.1" : text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  const bool number = !port.empty() && port.size() <= 5 && port.find_first_not_of("0123456789") == std::string::npos;
  if (!number || std::stoi(port) > 65535)
    fail(ErrorKind::usage, "invalid port in '" + text + "'", "a port is a number from 0 to 65535 (0: any free port)");
  a.port = std::stoi(port);
  return a;
}

bool is_loopback(const std::string& host) { return host == "127.0.0.1" || host == "::1" || host == "localhost"; }

struct Server::Impl {
  struct Worker {
    Impl* impl = nullptr;
    event_base* base = nullptr;
    evhttp* http = nullptr;
    // stop() writes to it; its callback ends the loop from the loop's own
    // thread (a loop is not woken reliably from another thread otherwise).
    int wake_fd = -1;
    event* wake = nullptr;
    std::thread thread;
  };
  Options opts;
  Handler handler;
  SSL_CTX* ssl_ctx = nullptr;
  std::vector<int> sockets;
  std::vector<int> ports;
  std::vector<std::unique_ptr<Worker>> workers;
  bool started = false;

  static bufferevent* make_bev(event_base* base, void* arg) {
    auto* self = static_cast<Impl*>(arg);
    SSL* ssl = SSL_new(self->ssl_ctx);
    bufferevent* bev = bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
    if (bev) bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    return bev;
  }

  static void on_request(evhttp_request* req, void* arg) {
    auto* w = static_cast<Worker*>(arg);
    Request r;
    r.method = method_name(evhttp_request_get_command(req));
    const evhttp_uri* uri = evhttp_request_get_evhttp_uri(req);
    if (const char* p = uri ? evhttp_uri_get_path(uri) : nullptr) {
      size_t len = 0;
      if (char* decoded = evhttp_uridecode(p, 0, &len)) {
        r.path.assign(decoded, len);
        std::free(decoded);
      }
    }
    if (r.path.empty()) r.path = "/";
    if (const char* q = uri ? evhttp_uri_get_query(uri) : nullptr) r.query = q;
    const evkeyvalq* in = evhttp_request_get_input_headers(req);
    for (const evkeyval* kv = in->tqh_first; kv; kv = kv->next.tqe_next) r.headers[to_lower(kv->key)] = kv->value;
    evbuffer* body = evhttp_request_get_input_buffer(req);
    if (size_t len = evbuffer_get_length(body))
      r.body.assign(reinterpret_cast<const char*>(evbuffer_pullup(body, static_cast<ev_ssize_t>(len))), len);
    if (evhttp_connection* conn = evhttp_request_get_connection(req)) {
      char* address = nullptr;
      ev_uint16_t port = 0;
      evhttp_connection_get_peer(conn, &address, &port);
      if (address) r.peer = std::string(address) + ":" + std::to_string(port);
      // Small answers on keep-alive connections: without TCP_NODELAY, Nagle
      // and the client's delayed ACK add ~40 ms to each.
      if (bufferevent* bev = evhttp_connection_get_bufferevent(conn)) {
        int one = 1;
        setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      }
    }
    Response res;
    try {
      res = w->impl->handler(r);
    } catch (const std::exception& e) {
      res = {.status = 500, .content_type = "text/plain; charset=utf-8", .body = std::string(e.what()) + "\n"};
    }
    evkeyvalq* out = evhttp_request_get_output_headers(req);
    if (!res.content_type.empty() && res.status != 204) evhttp_add_header(out, "Content-Type", res.content_type.c_str());
    for (const auto& [k, v] : res.headers) evhttp_add_header(out, k.c_str(), v.c_str());
    evbuffer* buf = evbuffer_new();
    if (res.status != 204 && res.status != 304) evbuffer_add(buf, res.body.data(), res.body.size());
    evhttp_send_reply(req, res.status, reason_phrase(res.status), buf);
    evbuffer_free(buf);
  }

  void load_tls() {
    if (opts.tls_cert.empty() && opts.tls_key.empty()) return;
    if (opts.tls_cert.empty() || opts.tls_key.empty())
      fail(ErrorKind::usage, "TLS needs both --tls-cert and --tls-key");
    ssl_ctx = SSL_CTX_new(TLS_server_method());
    if (!ssl_ctx) fail(ErrorKind::failed, "cannot make a TLS context: " + ssl_error());
    SSL_CTX_set_min_proto_version(ssl_ctx, TLS1_2_VERSION);
    if (SSL_CTX_use_certificate_chain_file(ssl_ctx, opts.tls_cert.c_str()) != 1)
      fail(ErrorKind::usage, "cannot load the TLS certificate '" + opts.tls_cert + "': " + ssl_error(),
           "--tls-cert takes a PEM file (the certificate, then its chain)");
    if (SSL_CTX_use_PrivateKey_file(ssl_ctx, opts.tls_key.c_str(), SSL_FILETYPE_PEM) != 1)
      fail(ErrorKind::usage, "cannot load the TLS key '" + opts.tls_key + "': " + ssl_error(), "--tls-key takes a PEM file");
    if (SSL_CTX_check_private_key(ssl_ctx) != 1)
      fail(ErrorKind::usage, "the TLS key '" + opts.tls_key + "' does not match the certificate '" + opts.tls_cert + "'");
  }

  static void on_wake(evutil_socket_t, short, void* arg) { event_base_loopbreak(static_cast<Worker*>(arg)->base); }

  void release() {
    for (auto& w : workers) {
      if (w->http) evhttp_free(w->http);  // closes its copies of the sockets
      if (w->wake) event_free(w->wake);
      if (w->wake_fd >= 0) ::close(w->wake_fd);
      if (w->base) event_base_free(w->base);
    }
    workers.clear();
    for (int fd : sockets) ::close(fd);
    sockets.clear();
    if (ssl_ctx) SSL_CTX_free(ssl_ctx);
    ssl_ctx = nullptr;
  }
};

Server::Server(Options options, Handler handler) : m_impl(std::make_unique<Impl>()) {
  m_impl->opts = std::move(options);
  m_impl->handler = std::move(handler);
}

Server::~Server() { stop(); }

void Server::start() {
  Impl& s = *m_impl;
  if (s.started) return;
  std::call_once(g_sigpipe_once, [] {
    // A client that goes away mid-answer must not end the server: OpenSSL
    // writes to the socket without MSG_NOSIGNAL.
    std::signal(SIGPIPE, SIG_IGN);
  });
  try {
    s.load_tls();
    for (const auto& a : s.opts.listen) {
      std::string why;
      int fd = listen_on(a, why);
      if (fd < 0)
        fail(ErrorKind::unreachable, "cannot listen on " + a.host + ":" + std::to_string(a.port) + ": " + why,
             "is another server using the port? pick another with --listen");
      s.sockets.push_back(fd);
      s.ports.push_back(emco::bound_port(fd));
    }
    for (std::size_t i = 0; i < std::max<std::size_t>(s.opts.workers, 1); ++i) {
      auto w = std::make_unique<Impl::Worker>();
      w->impl = &s;
      w->base = event_base_new();
      w->http = w->base ? evhttp_new(w->base) : nullptr;
      w->wake_fd = w->http ? eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC) : -1;
      w->wake = w->wake_fd >= 0 ? event_new(w->base, w->wake_fd, EV_READ, &Impl::on_wake, w.get()) : nullptr;
      if (!w->wake || event_add(w->wake, nullptr) != 0) fail(ErrorKind::failed, "cannot start an HTTP worker (libevent)");
      evhttp_set_allowed_methods(w->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
                                              EVHTTP_REQ_HEAD | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_PATCH);
      evhttp_set_max_body_size(w->http, static_cast<ev_ssize_t>(s.opts.max_body));
      evhttp_set_timeout(w->http, s.opts.idle_timeout_s);
      evhttp_set_gencb(w->http, &Impl::on_request, w.get());
      if (s.ssl_ctx) evhttp_set_bevcb(w->http, &Impl::make_bev, &s);
      // Each worker accepts on its own copy of every socket: freeing its
      // evhttp closes the copy, never another worker's.
      for (int fd : s.sockets) {
        int mine = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (mine < 0 || evhttp_accept_socket(w->http, mine) != 0) {
          if (mine >= 0) ::close(mine);
          fail(ErrorKind::failed, "cannot accept connections on a listening socket (libevent)");
        }
      }
      s.workers.push_back(std::move(w));
    }
  } catch (...) {
    s.release();
    throw;
  }
  for (auto& w : s.workers) w->thread = std::thread([b = w->base] { event_base_dispatch(b); });
  s.started = true;
}

std::vector<std::string> Server::urls() const {
  std::vector<std::string> out;
  const Impl& s = *m_impl;
  for (std::size_t i = 0; i < s.opts.listen.size() && i < s.ports.size(); ++i) {
    const std::string& h = s.opts.listen[i].host;
    out.push_back(std::string(s.ssl_ctx ? "https://" : "http://") + (h.find(':') != std::string::npos ? "[" + h + "]" : h) +
                  ":" + std::to_string(s.ports[i]));
  }
  return out;
}

void Server::stop() {
  Impl& s = *m_impl;
  if (!s.started) return;
  for (auto& w : s.workers) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(w->wake_fd, &one, sizeof one);  // an eventfd takes it
  }
  for (auto& w : s.workers)
    if (w->thread.joinable()) w->thread.join();
  s.release();
  s.started = false;
}

}  // namespace emco::cli::http
