#pragma once
// Loopback servers that misbehave on purpose, for the hostile-peer tests of
// the kube and GitOps clients, and the process's peak memory they measure.
// Header-only.

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace emco::test {

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
  int port() const { return m_port; }
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

// Writes all of `bytes`; false when the peer went first.
inline bool send_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Peak resident memory of this process (VmHWM), in MiB.
inline long peak_rss_mib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6)) / 1024;
  return -1;
}

}  // namespace emco::test
