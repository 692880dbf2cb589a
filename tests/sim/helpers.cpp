#include "helpers.hpp"

#include <curl/curl.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/util/base64.hpp"

namespace simtest {

namespace fs = std::filesystem;

TempDir::TempDir() {
  char tmpl[] = "/tmp/emco-simtest-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  path = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path, ec);
}

namespace {

size_t on_body(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  std::string line(data, size * n);
  auto colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ')) value.erase(0, 1);
    while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.pop_back();
    (*static_cast<std::map<std::string, std::string>*>(user))[name] = value;
  }
  return size * n;
}

}  // namespace

Http::Http(std::string base_url, std::string ca_file, Auth auth)
    : m_base(std::move(base_url)), m_ca(std::move(ca_file)), m_auth(std::move(auth)) {}

HttpResult Http::request(const std::string& method, const std::string& path, const std::string& body,
                         const std::string& content_type, const std::vector<std::string>& extra_headers,
                         long timeout_ms) const {
  HttpResult out;
  CURL* curl = curl_easy_init();
  std::string url = m_base + path;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(curl, CURLOPT_CAINFO, m_ca.c_str());
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &out.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &out.headers);
  if (!m_auth.cert_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERT, m_auth.cert_file.c_str());
    curl_easy_setopt(curl, CURLOPT_SSLKEY, m_auth.key_file.c_str());
  }
  curl_slist* headers = nullptr;
  std::string auth = "Authorization: Bearer " + m_auth.token;
  if (!m_auth.token.empty()) headers = curl_slist_append(headers, auth.c_str());
  std::string ct = "Content-Type: " + content_type;
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    headers = curl_slist_append(headers, ct.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  for (const auto& h : extra_headers) headers = curl_slist_append(headers, h.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  CURLcode rc = curl_easy_perform(curl);
  if (rc == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out.status);
    char* ctype = nullptr;
    curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &ctype);
    if (ctype) out.content_type = ctype;
  } else {
    out.error = curl_easy_strerror(rc);
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return out;
}

HttpResult Http::apply(const std::string& path, const nlohmann::json& obj, const std::string& manager,
                       bool force) const {
  std::string q = path + (path.find('?') == std::string::npos ? "?" : "&") + "fieldManager=" + manager;
  if (force) q += "&force=true";
  return request("PATCH", q, obj.dump(), "application/apply-patch+yaml");
}

Fleet::Fleet(emco::sim::SimOptions options) {
  options.dir = dir.path + "/sim";
  sim = std::make_unique<emco::sim::Simulator>(options);
  sim->start();
}

std::string Fleet::token(const std::string& cluster) const {
  return kubeconfig_field(sim->kubeconfig_path(cluster), "token");
}

Http Fleet::client(const std::string& cluster) const {
  Auth auth;
  std::string kc = sim->kubeconfig_path(cluster);
  auth.token = kubeconfig_field(kc, "token");
  if (auth.token.empty()) {
    auth.cert_file = dir.path + "/" + cluster + ".crt";
    auth.key_file = dir.path + "/" + cluster + ".key";
    write_file(auth.cert_file, base64_decode(kubeconfig_field(kc, "client-certificate-data")));
    write_file(auth.key_file, base64_decode(kubeconfig_field(kc, "client-key-data")));
  }
  return Http(sim->server_url(cluster), sim->ca_path(), auth);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
}

std::string kubeconfig_field(const std::string& path, const std::string& key) {
  std::istringstream in(read_file(path));
  std::string line;
  while (std::getline(in, line)) {
    auto pos = line.find(key + ": ");
    if (pos != std::string::npos && line.find_first_not_of(' ') == pos) return line.substr(pos + key.size() + 2);
  }
  return {};
}

std::string base64_decode(const std::string& in) { return emco::base64_decode(in, {.lenient = true}).value_or(""); }

RunResult run(const std::string& command) {
  RunResult r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string pb_varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}

std::string pb_bytes(int field, const std::string& value) {
  return pb_varint(static_cast<uint64_t>(field) << 3 | 2) + pb_varint(value.size()) + value;
}

std::string pb_int(int field, uint64_t value) { return pb_varint(static_cast<uint64_t>(field) << 3) + pb_varint(value); }

std::string pb_envelope(const std::string& api_version, const std::string& kind, const std::string& raw) {
  return std::string("k8s\0", 4) + pb_bytes(1, pb_bytes(1, api_version) + pb_bytes(2, kind)) + pb_bytes(2, raw);
}

}  // namespace simtest
