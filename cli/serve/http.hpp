#pragma once
// The HTTP side of `emco serve`: a small HTTP/1.1 server on libevent's evhttp
// (TLS through OpenSSL's bufferevent_openssl), with no knowledge of EMCO.
// Every listening socket is served by `workers` threads, each with its own
// event loop; a request is answered on the thread that accepted it, so a
// handler may block (it holds up only the requests of its own worker) and
// runs on several threads at once.

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace emco::cli::http {

struct Request {
  std::string method;                          // GET, POST, PUT, DELETE, HEAD, OPTIONS, PATCH
  std::string path;                            // percent-decoded, without the query
  std::string query;                           // the text after '?', verbatim ("" when none)
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  std::string peer;  // the client's address

  // A header's value ("" when absent); `name` in lower case.
  std::string header(const std::string& name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// Runs on a worker thread, concurrently with the other workers. Exceptions
// are answered 500 with their text.
using Handler = std::function<Response(const Request&)>;

struct Address {
  std::string host;  // "127.0.0.1", "::1", "0.0.0.0", a name
  int port = 0;      // 0: any free port
};

// "HOST:PORT", "[V6]:PORT" or ":PORT" (127.0.0.1). Error(usage) when it is
// none of them or the port is outside 0-65535.
Address parse_address(const std::string& text);
// Only 127.0.0.1, ::1 and "localhost" are loopback for `emco serve`: any
// other address (127.0.0.2 included) is treated as reachable from elsewhere.
bool is_loopback(const std::string& host);

struct Options {
  std::vector<Address> listen;
  std::size_t workers = 4;
  std::string tls_cert, tls_key;  // PEM files; both or neither
  std::size_t max_body = std::size_t{1} << 30;  // larger request bodies are refused (413)
  int idle_timeout_s = 120;
};

class Server {
public:
  Server(Options options, Handler handler);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds every address and starts the workers. Error(unreachable) when an
  // address cannot be bound, Error(usage) when the TLS files do not load.
  void start();
  // "http://127.0.0.1:9015" (https with TLS), one per address, with the
  // port bound.
  std::vector<std::string> urls() const;
  // Stops the workers (a request in progress finishes first) and closes
  // the sockets. Idempotent.
  void stop();

  struct Impl;

private:
  std::unique_ptr<Impl> m_impl;
};

}  // namespace emco::cli::http
