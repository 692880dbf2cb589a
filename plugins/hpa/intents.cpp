// hpa's intents read from the store, checked, and the quantity arithmetic
// placement and action share.

#include <cmath>
#include <regex>

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "plugins/hpa/hpa.hpp"

namespace emco::plugins::hpa {

using nlohmann::json;

namespace {

std::string anchor_of(const store::Resource& r) { return resource::resource_anchor(*r.kind, r.key); }
std::string name_of(const store::Resource& r) { return r.key.parts.back().second; }
json spec_of(const store::Resource& r) { return json::parse(r.data).value("spec", json::object()); }

std::string str_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
long long int_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<long long>() : 0;
}

// The allocatable resources a Node reports: the standard ones, hugepages of
// any size, and extended resources named DOMAIN/NAME (device plugins).
bool known_resource(const std::string& name) {
  static const std::regex extended(R"([a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)");
  static const std::regex hugepages(R"(hugepages-[0-9]+(Ki|Mi|Gi|k|M|G)?)");
  return name == "cpu" || name == "memory" || name == "ephemeral-storage" || name == "pods" ||
         std::regex_match(name, hugepages) || std::regex_match(name, extended);
}

Requirement requirement(const store::Resource& r, const Consumer& c) {
  json s = spec_of(r);
  json res = s.value("resource", json::object());
  Requirement q;
  q.where = "hpa resource requirement '" + anchor_of(r) + "'";
  q.name = name_of(r);
  q.allocatable = s.value("allocatable", false);
  if (!q.allocatable) {
    q.key = str_at(res, "key");
    q.value = str_at(res, "value");
    if (q.key.empty())
      fail(ErrorKind::invalid, q.where + ": a non-allocatable requirement needs resource.key (a node label)",
           "e.g. resource: {key: feature.node.kubernetes.io/intel_qat, value: \"true\"}");
    return q;
  }
  q.resource = str_at(res, "name");
  q.requests = int_at(res, "requests");
  q.limits = int_at(res, "limits");
  if (q.resource.empty())
    fail(ErrorKind::invalid, q.where + ": an allocatable requirement needs resource.name",
         "e.g. resource: {name: cpu, requests: 2, limits: 2}");
  if (!known_resource(q.resource))
    fail(ErrorKind::invalid, q.where + ": hpa does not know resource '" + q.resource + "'",
         "allocatable resources are cpu (cores), memory (MB), ephemeral-storage, pods, hugepages-SIZE or an "
         "extended resource DOMAIN/NAME such as nvidia.com/gpu");
  if (q.requests < 0 || q.limits < 0)
    fail(ErrorKind::invalid, q.where + ": requests and limits of '" + q.resource + "' cannot be negative");
  if (q.requests == 0) q.requests = q.limits;  // upstream: a limit alone is also the request
  if (q.requests == 0)
    fail(ErrorKind::invalid, q.where + ": allocatable resource '" + q.resource + "' needs requests of at least 1");
  if (c.container.empty())
    fail(ErrorKind::invalid, q.where + ": an allocatable requirement needs its consumer '" + c.name + "' to name a container",
         "set spec.container of the consumer to the container that gets the requests");
  return q;
}

}  // namespace

std::vector<Intent> load(const store::Store& st, const resource::Key& dig) {
  std::vector<Intent> out;
  for (const auto& ri : st.list(resource::kind("hpaIntent"), dig)) {
    Intent in;
    in.where = "hpa intent '" + anchor_of(ri) + "'";
    in.name = name_of(ri);
    in.app = str_at(spec_of(ri), "app");
    for (const auto& rc : st.list(resource::kind("hpaConsumer"), ri.key)) {
      json s = spec_of(rc);
      Consumer c;
      c.where = "hpa consumer '" + anchor_of(rc) + "'";
      c.name = name_of(rc);
      c.workload = str_at(s, "name");
      c.kind = str_at(s, "kind");
      if (c.kind.empty()) c.kind = "Deployment";
      c.container = str_at(s, "container");
      c.replicas = int_at(s, "replicas");
      for (const auto& rr : st.list(resource::kind("hpaResource"), rc.key)) c.requirements.push_back(requirement(rr, c));
      in.consumers.push_back(std::move(c));
    }
    out.push_back(std::move(in));
  }
  return out;
}

long long milli_of(const std::string& quantity, const std::string& what) {
  static const std::regex form(R"(([+-]?[0-9]*\.?[0-9]+)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]+)?)");
  std::smatch m;
  if (!std::regex_match(quantity, m, form)) fail(ErrorKind::invalid, what + ": '" + quantity + "' is not a quantity");
  long double v = std::stold(m[1].str());
  const std::string suffix = m[2].str();
  static const std::vector<std::pair<std::string, long double>> scale = {
      {"m", 1e-3L}, {"k", 1e3L}, {"M", 1e6L}, {"G", 1e9L}, {"T", 1e12L}, {"P", 1e15L}, {"E", 1e18L},
      {"Ki", 1024.0L}, {"Mi", 1048576.0L}, {"Gi", 1073741824.0L}, {"Ti", 1099511627776.0L},
      {"Pi", 1125899906842624.0L}, {"Ei", 1152921504606846976.0L}};
  if (!suffix.empty() && (suffix[0] == 'e' || suffix[0] == 'E')) {
    v *= std::pow(10.0L, std::stoi(suffix.substr(1)));
  } else {
    for (const auto& [s, f] : scale)
      if (s == suffix) v *= f;
  }
  return std::llround(v * 1000.0L);
}

long long need_milli(const Requirement& r) {
  return r.requests * (r.resource == "memory" ? 1000LL * 1000LL : 1LL) * 1000LL;
}

std::string unformatted_quantity(long long n) {
  int exponent = 0;
  while (n != 0 && n % 1000 == 0) {
    n /= 1000;
    exponent += 3;
  }
  return std::to_string(n) + (exponent ? "e" + std::to_string(exponent) : "");
}

}  // namespace emco::plugins::hpa
