// Discovery (aggregated v2/v2beta1 and legacy) and the minimal OpenAPI v3
// kubectl needs for `--validate=strict`.

#include <nlohmann/json.hpp>

#include "core/util/strings.hpp"
#include "sim/cluster.hpp"
#include "sim/versions.hpp"

namespace emco::sim::detail {

using nlohmann::json;

namespace {

// Made at first use: a namespace-scope vector is built at every process's start.
const std::vector<std::string>& all_verbs() {
  static const std::vector<std::string> verbs = {"create", "delete", "deletecollection", "get",
                                                 "list",   "patch",  "update",           "watch"};
  return verbs;
}

json response_kind(const k8s::ResourceType& t, const std::string& sub) {
  if (sub == "scale") return {{"group", "autoscaling"}, {"version", "v1"}, {"kind", "Scale"}};
  return {{"group", t.group}, {"version", t.version}, {"kind", t.kind}};
}

std::vector<std::string> sub_verbs(const std::string& sub) {
  if (sub == "finalize") return {"update"};
  return {"get", "patch", "update"};
}

json aggregated_resource(const k8s::ResourceType& t) {
  json r = {{"resource", t.resource},
            {"responseKind", response_kind(t, "")},
            {"scope", t.namespaced ? "Namespaced" : "Cluster"},
            {"singularResource", t.singular},
            {"verbs", t.verbs.empty() ? all_verbs() : t.verbs}};
  if (!t.short_names.empty()) r["shortNames"] = t.short_names;
  if (!t.categories.empty()) r["categories"] = t.categories;
  if (!t.subresources.empty()) {
    json subs = json::array();
    for (const auto& s : t.subresources)
      subs.push_back({{"subresource", s}, {"responseKind", response_kind(t, s)}, {"verbs", sub_verbs(s)}});
    r["subresources"] = subs;
  }
  return r;
}

// 2 = aggregated v2, 1 = aggregated v2beta1, 0 = legacy: the first media
// range of the Accept header that the server can produce.
int negotiate(const std::string& accept) {
  for (const auto& range : split(accept, ',')) {
    auto parts = split(range, ';');
    std::string type = trim(parts[0]);
    if (type != "application/json" && type != "*/*" && type != "application/*") continue;
    std::string g, v, as;
    for (size_t i = 1; i < parts.size(); ++i) {
      auto p = trim(parts[i]);
      auto eq = p.find('=');
      if (eq == std::string::npos) continue;
      std::string k = trim(p.substr(0, eq)), val = trim(p.substr(eq + 1));
      if (k == "g") g = val;
      if (k == "v") v = val;
      if (k == "as") as = val;
    }
    if (g.empty() && v.empty() && as.empty()) return 0;
    if (g == "apidiscovery.k8s.io" && as == "APIGroupDiscoveryList") {
      if (v == "v2") return 2;
      if (v == "v2beta1") return 1;
    }
  }
  return 0;
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string hex16(uint64_t v) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

json param(const char* name, const char* type) {
  return {{"name", name}, {"in", "query"}, {"schema", {{"type", type}, {"uniqueItems", true}}}};
}

json openapi_doc(const std::vector<const TypeInfo*>& types, const Release& release) {
  json paths = json::object();
  for (const TypeInfo* info : types) {
    const auto& t = info->type;
    std::string base = t.group.empty() ? "/api/" + t.version : "/apis/" + t.group + "/" + t.version;
    std::string path = base + (t.namespaced ? "/namespaces/{namespace}/" : "/") + t.resource + "/{name}";
    json gvk = {{"group", t.group}, {"version", t.version}, {"kind", t.kind}};
    json ok = {{"200", {{"description", "OK"}}}};
    json patch = {{"operationId", "patch" + t.kind},
                  {"x-kubernetes-action", "patch"},
                  {"x-kubernetes-group-version-kind", gvk},
                  {"parameters",
                   {param("dryRun", "string"), param("fieldManager", "string"), param("fieldValidation", "string"),
                    param("force", "boolean")}},
                  {"responses", ok}};
    json put = {{"operationId", "replace" + t.kind},
                {"x-kubernetes-action", "put"},
                {"x-kubernetes-group-version-kind", gvk},
                {"parameters",
                 {param("dryRun", "string"), param("fieldManager", "string"), param("fieldValidation", "string")}},
                {"responses", ok}};
    json get = {{"operationId", "read" + t.kind},
                {"x-kubernetes-action", "get"},
                {"x-kubernetes-group-version-kind", gvk},
                {"responses", ok}};
    json del = {{"operationId", "delete" + t.kind},
                {"x-kubernetes-action", "delete"},
                {"x-kubernetes-group-version-kind", gvk},
                {"responses", ok}};
    if (t.verbs.empty()) paths[path] = {{"get", get}, {"put", put}, {"patch", patch}, {"delete", del}};
    std::string collection = base + (t.namespaced ? "/namespaces/{namespace}/" : "/") + t.resource;
    json post = {{"operationId", "create" + t.kind},
                 {"x-kubernetes-action", "post"},
                 {"x-kubernetes-group-version-kind", gvk},
                 {"parameters",
                  {param("dryRun", "string"), param("fieldManager", "string"), param("fieldValidation", "string")}},
                 {"responses", ok}};
    json list = {{"operationId", "list" + t.kind},
                 {"x-kubernetes-action", "list"},
                 {"x-kubernetes-group-version-kind", gvk},
                 {"responses", ok}};
    if (t.verbs.empty())
      paths[collection] = {{"get", list}, {"post", post}};
    else
      paths[collection] = {{"post", post}};
  }
  return {{"openapi", "3.0.0"},
          {"info", {{"title", "Kubernetes"}, {"version", release.git_version()}}},
          {"paths", paths},
          {"components", {{"schemas", json::object()}}}};
}

std::string gv_path(const std::string& group, const std::string& version) {
  return group.empty() ? "api/" + version : "apis/" + group + "/" + version;
}

}  // namespace

Response Cluster::version() const {
  const Release& rel = release(m_env.version_minor);
  json v = {{"major", "1"},
            {"minor", std::to_string(rel.minor)},
            {"gitVersion", rel.git_version()},
            {"gitCommit", "0000000000000000000000000000000000000000"},
            {"gitTreeState", "clean"},
            {"buildDate", "2025-01-01T00:00:00Z"},
            {"goVersion", rel.go_version},
            {"compiler", "gc"},
            {"platform", "linux/amd64"}};
  Response r;
  r.body = v.dump();
  return r;
}

Response Cluster::discovery_root(const Request& req, bool core) const {
  int mode = negotiate(req.accept);
  auto types = all_types();
  Response r;
  if (mode == 0) {
    if (core) {
      r.body = json{{"kind", "APIVersions"},
                    {"versions", {"v1"}},
                    {"serverAddressByClientCIDRs", {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", "127.0.0.1"}}}}}
                   .dump();
      return r;
    }
    json groups = json::array();
    std::vector<std::string> seen;
    for (const TypeInfo* t : types) {
      const auto& g = t->type.group;
      if (g.empty() || std::find(seen.begin(), seen.end(), g) != seen.end()) continue;
      seen.push_back(g);
      json versions = json::array();
      for (const TypeInfo* u : types)
        if (u->type.group == g) {
          json gv = {{"groupVersion", u->type.api_version()}, {"version", u->type.version}};
          if (std::find(versions.begin(), versions.end(), gv) == versions.end()) versions.push_back(gv);
        }
      groups.push_back({{"name", g}, {"versions", versions}, {"preferredVersion", versions[0]}});
    }
    r.body = json{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}}.dump();
    return r;
  }
  std::string av = mode == 2 ? "v2" : "v2beta1";
  // group -> version -> resources, in first-seen order
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, json>>>> groups;
  for (const TypeInfo* t : types) {
    const auto& g = t->type.group;
    if (core != g.empty()) continue;
    auto git = std::find_if(groups.begin(), groups.end(), [&](const auto& p) { return p.first == g; });
    if (git == groups.end()) {
      groups.push_back({g, {}});
      git = groups.end() - 1;
    }
    auto& versions = git->second;
    auto vit = std::find_if(versions.begin(), versions.end(), [&](const auto& p) { return p.first == t->type.version; });
    if (vit == versions.end()) {
      versions.push_back({t->type.version, json::array()});
      vit = versions.end() - 1;
    }
    vit->second.push_back(aggregated_resource(t->type));
  }
  json items = json::array();
  for (const auto& [g, versions] : groups) {
    json meta = {{"creationTimestamp", nullptr}};
    if (!g.empty()) meta["name"] = g;
    json vs = json::array();
    for (const auto& [v, resources] : versions)
      vs.push_back({{"version", v}, {"resources", resources}, {"freshness", "Current"}});
    items.push_back({{"metadata", meta}, {"versions", vs}});
  }
  r.body = json{{"kind", "APIGroupDiscoveryList"},
                {"apiVersion", "apidiscovery.k8s.io/" + av},
                {"metadata", json::object()},
                {"items", items}}
               .dump();
  r.content_type = "application/json;g=apidiscovery.k8s.io;v=" + av + ";as=APIGroupDiscoveryList";
  r.headers.push_back({"Vary", "Accept"});
  return r;
}

Response Cluster::discovery_group(const std::string& group) const {
  json versions = json::array();
  for (const TypeInfo* t : all_types())
    if (t->type.group == group) {
      json gv = {{"groupVersion", t->type.api_version()}, {"version", t->type.version}};
      if (std::find(versions.begin(), versions.end(), gv) == versions.end()) versions.push_back(gv);
    }
  if (versions.empty()) return status_error(404, "NotFound", "the server could not find the requested resource");
  Response r;
  r.body = json{{"kind", "APIGroup"},
                {"apiVersion", "v1"},
                {"name", group},
                {"versions", versions},
                {"preferredVersion", versions[0]}}
               .dump();
  return r;
}

Response Cluster::discovery_resources(const std::string& group, const std::string& version) const {
  json resources = json::array();
  for (const TypeInfo* info : all_types()) {
    const auto& t = info->type;
    if (t.group != group || t.version != version) continue;
    json r = {{"name", t.resource}, {"singularName", t.singular}, {"namespaced", t.namespaced},
              {"kind", t.kind},     {"verbs", t.verbs.empty() ? all_verbs() : t.verbs}};
    if (!t.short_names.empty()) r["shortNames"] = t.short_names;
    if (!t.categories.empty()) r["categories"] = t.categories;
    resources.push_back(r);
    for (const auto& s : t.subresources) {
      json sub = {{"name", t.resource + "/" + s},
                  {"singularName", ""},
                  {"namespaced", t.namespaced},
                  {"kind", s == "scale" ? "Scale" : t.kind},
                  {"verbs", sub_verbs(s)}};
      if (s == "scale") {
        sub["group"] = "autoscaling";
        sub["version"] = "v1";
      }
      resources.push_back(sub);
    }
  }
  if (resources.empty()) return status_error(404, "NotFound", "the server could not find the requested resource");
  json out = {{"kind", "APIResourceList"}, {"groupVersion", group.empty() ? version : group + "/" + version},
              {"resources", resources}};
  if (!group.empty()) out["apiVersion"] = "v1";
  Response r;
  r.body = out.dump();
  return r;
}

std::string Cluster::openapi_hash(const std::string& group, const std::string& version) const {
  std::vector<const TypeInfo*> types;
  for (const TypeInfo* t : all_types())
    if (t->type.group == group && t->type.version == version) types.push_back(t);
  return hex16(fnv1a(openapi_doc(types, release(m_env.version_minor)).dump()));
}

Response Cluster::openapi_index() const {
  json paths = json::object();
  std::vector<std::pair<std::string, std::string>> gvs;
  for (const TypeInfo* t : all_types()) {
    std::pair<std::string, std::string> gv{t->type.group, t->type.version};
    if (std::find(gvs.begin(), gvs.end(), gv) == gvs.end()) gvs.push_back(gv);
  }
  for (const auto& [g, v] : gvs) {
    std::string p = gv_path(g, v);
    paths[p] = {{"serverRelativeURL", m_prefix + "/openapi/v3/" + p + "?hash=" + openapi_hash(g, v)}};
  }
  Response r;
  r.body = json{{"paths", paths}}.dump();
  return r;
}

// kubectl falls back to OpenAPI v2 (protobuf only) to validate kinds the v3
// index does not list yet, such as a custom resource whose CRD is applied
// from the same file. A v2 document without definitions makes it skip
// client-side validation for them, as a real server's would for kinds it
// does not know; server-side validation still applies.
Response Cluster::openapi_v2() const {
  auto field = [](int number, const std::string& value) {
    std::string out;
    out += static_cast<char>((number << 3) | 2);
    out += static_cast<char>(value.size());
    return out + value;
  };
  std::string info = field(1, "Kubernetes") + field(2, release(m_env.version_minor).git_version());
  Response r;
  r.content_type = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
  r.body = field(1, "2.0") + field(2, info);
  return r;
}

Response Cluster::openapi_document(const std::string& path) const {
  std::string group, version;
  auto parts = split(path, '/');
  if (parts.size() == 2 && parts[0] == "api") {
    version = parts[1];
  } else if (parts.size() == 3 && parts[0] == "apis") {
    group = parts[1];
    version = parts[2];
  } else {
    return status_error(404, "NotFound", "the server could not find the requested resource");
  }
  std::vector<const TypeInfo*> types;
  for (const TypeInfo* t : all_types())
    if (t->type.group == group && t->type.version == version) types.push_back(t);
  if (types.empty()) return status_error(404, "NotFound", "the server could not find the requested resource");
  Response r;
  r.body = openapi_doc(types, release(m_env.version_minor)).dump();
  return r;
}

}  // namespace emco::sim::detail
