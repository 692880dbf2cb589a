#pragma once
// The HTTP seam between the Kubernetes client and the network.
//
// HttpClient sends one request and returns the response or a classified
// transport failure; it never throws for network problems. One instance
// serves one cluster and keeps its connections alive between requests. The
// libcurl implementation is thread-safe and shares connections between the
// instances of one endpoint and TLS identity (curl_http.cpp); tests
// substitute a fake.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace emco::kube {

struct TlsOptions {
  std::string ca_pem;  // empty: the system trust store
  bool insecure_skip_verify = false;
  std::string server_name;  // verify (and send SNI for) this name instead of the URL's host
  std::string client_cert_pem;
  std::string client_key_pem;
};

struct TransportOptions {
  TlsOptions tls;
  std::string proxy_url;  // empty: the usual proxy environment variables apply, as for kubectl
  std::chrono::milliseconds connect_timeout{5000};
};

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method = "GET";
  std::string url;  // absolute
  Headers headers;
  std::string body;
  std::chrono::milliseconds timeout{30000};  // whole request
  std::chrono::milliseconds connect_timeout{0};  // 0: the transport's default
  // A longer answer is not read on (failure too_large): a hostile or broken
  // server cannot make emco hold an unbounded body.
  std::size_t max_body_bytes = std::size_t{256} << 20;
};

enum class TransportFailure {
  none,
  resolve,     // DNS
  connect,     // refused, unreachable network
  timeout,     // connect or request time-out
  tls_verify,  // the server's certificate did not verify
  tls,         // other TLS failures (handshake, client certificate refused)
  proxy,
  broken,      // the answer was cut off or is not HTTP (truncated chunks, a closed connection, garbage)
  too_large,   // the body exceeded max_body_bytes
  other,
};

struct HttpResponse {
  int status = 0;  // 0 when failure != none
  Headers headers;  // names lower-cased
  std::string body;
  TransportFailure failure = TransportFailure::none;
  std::string failure_detail;  // the library's explanation, no secrets

  // First header with this (lower-case) name, or "".
  std::string header(std::string_view name) const;
};

struct HttpStats {
  uint64_t requests = 0;
  uint64_t connections = 0;  // new connections opened (TCP + TLS handshakes)
};

class HttpClient {
public:
  virtual ~HttpClient() = default;
  virtual HttpResponse send(const HttpRequest& request) = 0;
  virtual HttpStats stats() const = 0;
};

// libcurl client with keep-alive: a pool of easy handles, each keeping its
// connection open; DNS and TLS session caches are shared. TLS verification is on
// unless options.tls.insecure_skip_verify; certificates come from memory.
std::unique_ptr<HttpClient> make_curl_client(const TransportOptions& options);

}  // namespace emco::kube
