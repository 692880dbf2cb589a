// libFuzzer target: what the Kubernetes API server answers, as the kube client parses it.
// The seam is HttpClient (plugins/targets/kube/http.hpp), where bytes from the server become
// an HttpResponse: a fake transport answers every request of a real KubeClient with the next
// response of the input, and the client's operations (discovery, aggregated and legacy;
// apply, create, get, list with continue tokens, delete, CSR approval, CRD establishment,
// /version, Status objects and their causes, Retry-After) parse them. The live objects read
// back go through evaluate_readiness too. Only emco::Error may leave an operation, and its
// message is bounded, printable (no terminal control but tab and line feed) and free of the
// credentials.
//
// Input: responses separated by a line "%%". The first part is the script: one letter per
// operation (v version, d discovery, r resource_for, a apply, c create_if_absent, g get,
// l list, x delete, n namespace, p approve CSR, e wait established, i invalidate discovery).
// Every other part is one response: a first line "STATUS [name: value]..." (headers
// separated by " | "; STATUS 0 is a broken connection), then the body. When the parts run
// out, every request fails to connect. Built by scripts/fuzz.sh; not part of the CMake build.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "plugins/targets/kube/kube_client.hpp"
#include "plugins/targets/kube/readiness.hpp"

namespace {

using namespace emco::kube;
using json = nlohmann::json;

std::vector<std::string_view> split_parts(std::string_view in) {
  std::vector<std::string_view> parts;
  for (;;) {
    auto at = in.find("\n%%\n");
    if (at == std::string_view::npos) {
      parts.push_back(in);
      return parts;
    }
    parts.push_back(in.substr(0, at));
    in.remove_prefix(at + 4);
  }
}

HttpResponse response_of(std::string_view part) {
  HttpResponse r;
  auto nl = part.find('\n');
  std::string_view head = part.substr(0, nl);
  r.body = nl == std::string_view::npos ? std::string() : std::string(part.substr(nl + 1));
  std::size_t i = 0;
  int status = 0;
  while (i < head.size() && head[i] >= '0' && head[i] <= '9' && status < 1000) status = status * 10 + (head[i++] - '0');
  if (status == 0) {
    r.failure = TransportFailure::broken;
    r.failure_detail = "connection closed";
    return r;
  }
  r.status = status;
  std::string_view rest = head.substr(i);
  while (!rest.empty()) {
    auto bar = rest.find(" | ");
    std::string_view h = rest.substr(0, bar);
    rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 3);
    auto colon = h.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name(h.substr(0, colon));
    while (!name.empty() && name.front() == ' ') name.erase(0, 1);
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value(h.substr(colon + 1));
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    r.headers.emplace_back(std::move(name), std::move(value));
  }
  return r;
}

class ScriptedServer : public HttpClient {
public:
  explicit ScriptedServer(std::shared_ptr<std::vector<std::string_view>> parts) : m_parts(std::move(parts)) {}
  HttpResponse send(const HttpRequest&) override {
    ++m_requests;
    if (m_parts->empty()) {
      HttpResponse r;
      r.failure = TransportFailure::connect;
      r.failure_detail = "connection refused";
      return r;
    }
    std::string_view part = m_parts->front();
    m_parts->erase(m_parts->begin());
    return response_of(part);
  }
  HttpStats stats() const override { return {m_requests, 1}; }

private:
  std::shared_ptr<std::vector<std::string_view>> m_parts;
  std::uint64_t m_requests = 0;
};

const json& objects() {
  static const json all = json::array({
      {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"metadata", {{"name", "web"}, {"namespace", "ns1"}}}},
      {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "ns1"}}}},
      {{"apiVersion", "example.com/v1"}, {"kind", "Widget"}, {"metadata", {{"name", "w"}}}},
      {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "cm"}}}, {"data", {{"a", "b"}}}},
  });
  return all;
}

// What the server wrote reaches the user only as bounded, printable text, and the
// credentials never do.
void check_message(const std::string& text) {
  bool bad = text.size() > 8192 || text.find("secret-token") != std::string::npos;
  for (unsigned char c : text) bad = bad || (c < 0x20 && c != '\t' && c != '\n') || c == 0x7F;
  if (!bad) return;
  std::fprintf(stderr, "bad message (%zu bytes): %.2000s\n", text.size(), text.c_str());
  std::abort();
}

void check_readiness(const json& live) {
  if (live.is_object()) (void)evaluate_readiness(live);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  auto parts = std::make_shared<std::vector<std::string_view>>(split_parts(in));
  std::string script(parts->front().substr(0, 16));
  parts->erase(parts->begin());

  ClusterAccess access;
  access.label = "fuzz";
  access.server = "https://127.0.0.1:6443";
  access.token = "secret-token";
  KubeClientOptions options;
  options.max_retries = 2;
  options.sleep = [](std::chrono::milliseconds) {};
  options.establish_timeout = std::chrono::milliseconds(0);
  options.builtin_kinds = !script.empty() && script[0] == 'B';
  KubeClient client(access, options, [parts](const TransportOptions&) { return std::make_unique<ScriptedServer>(parts); });

  std::size_t n = 0;
  for (char op : script) {
    const json& object = objects()[n++ % objects().size()];
    Gvk gvk = Gvk::of(object["apiVersion"].get<std::string>(), object["kind"].get<std::string>());
    try {
      switch (op) {
        case 'v': (void)client.server_version(std::chrono::milliseconds(1000)); break;
        case 'd': (void)client.discovery_is_aggregated(); break;
        case 'r': {
          auto info = client.resource_for(gvk);
          (void)client.path_for(info, "ns1", "x");
          break;
        }
        case 'a': (void)client.apply(object, "default"); break;
        case 'c': (void)client.create_if_absent(object, "default"); break;
        case 'g': check_readiness(client.get(gvk, "ns1", "web")); break;
        case 'l':
          for (const auto& live : client.list(gvk, n % 2 ? "" : "ns1", "app=web")) check_readiness(live);
          break;
        case 'x': (void)client.remove(gvk, "ns1", "web"); break;
        case 'n': client.ensure_namespace("ns" + std::to_string(n)); break;
        case 'p': client.approve_csr("csr1"); break;
        case 'e': client.wait_established("widgets.example.com"); break;
        case 'i': client.invalidate_discovery(); break;
        default: break;
      }
    } catch (const emco::Error& e) {
      check_message(e.message());
      check_message(e.hint());
    }
  }
  return 0;
}
