// Hostile clusters (issue 23 point 5): servers that accept and never answer,
// answer one byte a second, send a 1 GiB body, invalid JSON, truncated
// chunks or a redirect to another host, and a TLS server whose certificate
// names another host. Each is bounded by a time-out or a size limit,
// reported as the cluster's error, and never crashes or hangs the client;
// the 1 GiB body does not raise the process's peak memory.

#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "pki.hpp"
#include "plugins/targets/kube/kube_client.hpp"
#include "kube_errors.hpp"
#include "test_server.hpp"

using namespace emco;
using namespace emco::kube;
using namespace emco::kube::test;
using namespace std::chrono;
using namespace std::chrono_literals;

namespace {

// A loopback TCP server that reads a request head and then behaves as
// `behave` says, writing raw bytes. `behave` gets the socket and a stop flag
// it must watch while it waits or streams.
class RawServer {
public:
  using Behaviour = std::function<void(int fd, const std::atomic<bool>& stop)>;
  explicit RawServer(Behaviour behave) : m_behave(std::move(behave)) {
    m_listen = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(m_listen >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(m_listen, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(m_listen, 16) == 0);
    socklen_t len = sizeof addr;
    ::getsockname(m_listen, reinterpret_cast<sockaddr*>(&addr), &len);
    m_port = ntohs(addr.sin_port);
    m_accept = std::thread([this] { accept_loop(); });
  }
  ~RawServer() {
    m_stop = true;
    ::shutdown(m_listen, SHUT_RDWR);
    ::close(m_listen);
    m_accept.join();
    for (auto& t : m_workers) t.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }

private:
  void accept_loop() {
    while (!m_stop) {
      pollfd p{m_listen, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      int fd = ::accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      m_workers.emplace_back([this, fd] {
        std::string head;
        char buf[4096];
        while (head.find("\r\n\r\n") == std::string::npos && !m_stop) {
          pollfd readable{fd, POLLIN, 0};
          if (::poll(&readable, 1, 100) <= 0) continue;
          ssize_t n = ::recv(fd, buf, sizeof buf, 0);
          if (n <= 0) break;
          head.append(buf, static_cast<size_t>(n));
        }
        m_behave(fd, m_stop);
        ::close(fd);
      });
    }
  }

  Behaviour m_behave;
  int m_listen = -1;
  int m_port = 0;
  std::atomic<bool> m_stop{false};
  std::thread m_accept;
  std::vector<std::thread> m_workers;
};

bool send_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void idle(const std::atomic<bool>& stop, milliseconds total) {
  for (auto end = steady_clock::now() + total; !stop && steady_clock::now() < end;) std::this_thread::sleep_for(20ms);
}

// Peak resident memory of this process (VmHWM), in MiB.
long peak_rss_mib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6)) / 1024;
  return -1;
}

// The client's requests end by the time-out plus this much.
constexpr auto k_slack = 3s;

}  // namespace

TEST_CASE("hostile cluster: accepts and never answers, or answers a byte a second: bounded by the time-out",
          "[hostile]") {
  RawServer silent([](int, const std::atomic<bool>& stop) { idle(stop, 60s); });
  RawServer trickle([](int fd, const std::atomic<bool>& stop) {
    if (!send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")) return;
    for (int i = 0; i < 60 && !stop; ++i) {
      if (!send_all(fd, " ")) return;
      idle(stop, 1s);
    }
  });
  for (const auto* server : {&silent, &trickle}) {
    KubeClient client(access_for(server->url(), {}, "p+hostile"));
    auto start = steady_clock::now();
    KubeError e = kube_error_of([&] { client.server_version(1500ms); });
    CHECK(steady_clock::now() - start < 1500ms + k_slack);
    CHECK(e.category() == KubeErrorCategory::unreachable);
    CHECK(e.message().find("cluster 'p+hostile': request to '" + server->url() + "' timed out") == 0);
    CHECK(e.transient());
  }
}

TEST_CASE("hostile cluster: a 1 GiB body is not read on and does not grow memory", "[hostile]") {
  std::atomic<long long> sent{0};
  RawServer huge([&](int fd, const std::atomic<bool>& stop) {
    if (!send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n[")) return;
    const std::string chunk(1 << 16, ' ');
    for (long long total = 0; total < (1LL << 30) && !stop; total += static_cast<long long>(chunk.size())) {
      if (!send_all(fd, chunk)) return;  // the client hung up
      sent += static_cast<long long>(chunk.size());
    }
  });
  const long before = peak_rss_mib();
  KubeClient client(access_for(huge.url(), {}, "p+hostile"));
  KubeError e = kube_error_of([&] { client.server_version(60s); });
  CHECK(e.message().find("cluster 'p+hostile': GET /version: not read on: the answer is larger than 256 MiB") == 0);
  CHECK_FALSE(e.transient());
  const long after = peak_rss_mib();
  INFO("peak RSS before " << before << " MiB, after " << after << " MiB; sent " << (sent >> 20) << " MiB");
  // The body is dropped at the limit: the peak grows by at most the limit
  // (plus the string's growth), never by the gigabyte the server offers.
#ifdef __SANITIZE_ADDRESS__
  // ASan's quarantine keeps each buffer the string outgrew (up to 256 MiB).
  CHECK(after - before <= 1024);
#else
  CHECK(after - before <= 600);
#endif
  CHECK(sent < (1LL << 30));
}

TEST_CASE("hostile cluster: invalid JSON, truncated chunks, garbage and a redirect are errors of that cluster",
          "[hostile]") {
  RawServer invalid_json([](int fd, const std::atomic<bool>&) {
    send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{not json");
  });
  RawServer truncated([](int fd, const std::atomic<bool>&) {
    send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                 "40\r\n{\"major\":\"1\",\"mi");
  });
  RawServer garbage([](int fd, const std::atomic<bool>&) { send_all(fd, "SSH-2.0-OpenSSH_9.2\r\n\x01\x02\x03"); });
  RawServer redirect([](int fd, const std::atomic<bool>&) {
    send_all(fd, "HTTP/1.1 302 Found\r\nLocation: http://192.0.2.1:6443/version\r\nContent-Length: 0\r\n\r\n");
  });
  {
    KubeClient client(access_for(invalid_json.url(), {}, "p+hostile"));
    KubeError e = kube_error_of([&] { client.server_version(5s); });
    CHECK(e.message() == "cluster 'p+hostile': /version did not answer with a JSON object");
  }
  {
    KubeClient client(access_for(truncated.url(), {}, "p+hostile"));
    KubeError e = kube_error_of([&] { client.server_version(5s); });
    CHECK(e.message().find("cluster 'p+hostile': the answer of '" + truncated.url() + "' was cut off or is not HTTP") == 0);
    CHECK(e.transient());
  }
  {
    KubeClient client(access_for(garbage.url(), {}, "p+hostile"));
    KubeError e = kube_error_of([&] { client.server_version(5s); });
    CHECK(e.message().find("was cut off or is not HTTP") != std::string::npos);
  }
  {
    KubeClient client(access_for(redirect.url(), {}, "p+hostile"));
    KubeError e = kube_error_of([&] { client.server_version(5s); });
    CHECK(e.message() ==
          "cluster 'p+hostile': GET /version: the server redirects (HTTP 302) to 'http://192.0.2.1:6443/version'; "
          "emco does not follow redirects");
    CHECK(e.hint() == "point the kubeconfig's server at the API server itself");
  }
}

TEST_CASE("hostile cluster: a certificate for another name fails verification", "[hostile][tls]") {
  KeyPair ca = make_ca("hostile-ca");
  KeyPair other_name = make_cert(ca, "apiserver", {"api.other.example"}, {});
  TestServer server([](const TestRequest&) { return TestResponse{200, R"({"major":"1","minor":"32"})", {}}; }, other_name);
  KubeClient client(access_for(server.url(), ca.cert_pem, "p+hostile"));
  KubeError e = kube_error_of([&] { client.server_version(5s); });
  CHECK(e.category() == KubeErrorCategory::tls);
  CHECK(e.message().find("cluster 'p+hostile': TLS verification of '" + server.url() + "' failed: ") == 0);
  CHECK_FALSE(e.transient());
}
