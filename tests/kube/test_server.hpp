#pragma once
// A tiny HTTP/1.1 server on 127.0.0.1 for transport tests: optional TLS
// (OpenSSL, optional client-certificate check), keep-alive, a connection
// counter, and a handler per request. Each connection gets a thread.

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pki.hpp"

namespace emco::kube::test {

struct TestRequest {
  std::string method;
  std::string target;  // path and query
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string client_cn;  // subject CN of the client certificate, if any
};

struct TestResponse {
  int status = 200;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  int delay_ms = 0;  // sleep before answering
};

class TestServer {
public:
  using Handler = std::function<TestResponse(const TestRequest&)>;
  // `tls`: serve HTTPS with this certificate; `client_ca`: ask for client
  // certificates signed by it (not required).
  explicit TestServer(Handler handler, std::optional<KeyPair> tls = {}, std::string client_ca_pem = {});
  ~TestServer();
  int port() const { return m_port; }
  std::string url() const;
  int connections() const { return m_connections.load(); }
  int requests() const { return m_requests.load(); }

private:
  void accept_loop();
  void serve(int fd);

  Handler m_handler;
  void* m_ctx = nullptr;  // SSL_CTX*
  int m_listen = -1;
  int m_port = 0;
  std::atomic<bool> m_stop{false};
  std::atomic<int> m_connections{0};
  std::atomic<int> m_requests{0};
  std::thread m_accept;
  std::mutex m_mutex;
  std::vector<std::thread> m_workers;
  std::set<int> m_open;
};

}  // namespace emco::kube::test
