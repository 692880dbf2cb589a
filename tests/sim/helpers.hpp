#pragma once
// Test helpers: a simulator in a temporary directory, a small libcurl
// client that trusts the simulator's CA, and a command runner.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sim.hpp"

namespace simtest {

struct TempDir {
  TempDir();
  ~TempDir();
  std::string path;
};

struct HttpResult {
  long status = 0;        // 0: no HTTP answer (connection refused or closed)
  std::string body;
  std::string content_type;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string error;      // curl's message when status is 0
  nlohmann::json json() const { return nlohmann::json::parse(body, nullptr, false); }
};

struct Auth {
  std::string token;
  std::string cert_file;  // client certificate and key (PEM files)
  std::string key_file;
};

class Http {
public:
  Http(std::string base_url, std::string ca_file, Auth auth);
  HttpResult request(const std::string& method, const std::string& path, const std::string& body = {},
                     const std::string& content_type = "application/json",
                     const std::vector<std::string>& extra_headers = {}, long timeout_ms = 10000) const;
  HttpResult get(const std::string& path, const std::vector<std::string>& extra = {}) const {
    return request("GET", path, {}, {}, extra);
  }
  HttpResult apply(const std::string& path, const nlohmann::json& obj, const std::string& manager = "test",
                   bool force = false) const;

private:
  std::string m_base;
  std::string m_ca;
  Auth m_auth;
};

// A running simulator in a fresh directory.
struct Fleet {
  explicit Fleet(emco::sim::SimOptions options = {});
  TempDir dir;
  std::unique_ptr<emco::sim::Simulator> sim;
  Http client(const std::string& cluster) const;  // with the cluster's kubeconfig credentials
  std::string token(const std::string& cluster) const;
};

// The value of `key: value` in a kubeconfig.
std::string kubeconfig_field(const std::string& path, const std::string& key);
std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& content);
std::string base64_decode(const std::string& in);  // lenient; "" when not base64

// Protobuf wire encoding for hand-made request bodies: a varint, a
// length-delimited field, a varint field, and the "k8s\0" envelope around
// a runtime.Unknown of `kind` in `api_version`.
std::string pb_varint(uint64_t v);
std::string pb_bytes(int field, const std::string& value);
std::string pb_int(int field, uint64_t value);
std::string pb_envelope(const std::string& api_version, const std::string& kind, const std::string& raw);

struct RunResult {
  int rc = -1;
  std::string output;  // stdout and stderr
};
RunResult run(const std::string& command);

}  // namespace simtest
