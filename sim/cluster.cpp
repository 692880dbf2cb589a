// The Kubernetes API of one simulated cluster: routing, CRUD, apply, patch,
// delete with garbage collection, CRDs, CSRs, and the "controllers" that make
// workloads ready.

#include "sim/cluster.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <mutex>

#include "core/k8s/managed_fields.hpp"
#include "core/k8s/patch.hpp"
#include "core/k8s/yaml.hpp"
#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "sim/protobuf.hpp"
#include "sim/tls.hpp"
#include "sim/versions.hpp"

namespace emco::sim::detail {

using nlohmann::json;

namespace {

// Writes to the status subresource change only the status (taken from
// `incoming`, onto the live object); other writes to a kind that has one keep
// the live status. `incoming` and `out` may be the same object.
k8s::Scope split_status(bool status_write, const k8s::ResourceType& type, const json& live, const json& incoming,
                        json& out) {
  if (status_write) {
    json keep = live;
    if (incoming.contains("status"))
      keep["status"] = incoming["status"];
    else
      keep.erase("status");
    out = std::move(keep);
    return k8s::Scope::status;
  }
  if (type.has_subresource("status")) {
    if (live.contains("status"))
      out["status"] = live["status"];
    else
      out.erase("status");
  }
  return k8s::Scope::main;
}

std::string rfc3339(int64_t unix_s) {
  std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string object_key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

json details(const k8s::ResourceType& t, const std::string& name) {
  json d = {{"name", name}, {"kind", t.resource}};
  if (!t.group.empty()) d["group"] = t.group;
  return d;
}

Response not_found(const k8s::ResourceType& t, const std::string& name) {
  return status_error(404, "NotFound", t.group_resource() + " \"" + name + "\" not found", details(t, name));
}

Response namespace_not_found(const std::string& ns) {
  return status_error(404, "NotFound", "namespaces \"" + ns + "\" not found",
                      json{{"name", ns}, {"kind", "namespaces"}});
}

Response bad_request(const std::string& message) { return status_error(400, "BadRequest", message); }

Response invalid(const k8s::ResourceType& t, const std::string& name, const std::string& field,
                 const std::string& what, const std::string& cause_type) {
  json d = details(t, name);
  d["kind"] = t.kind;
  d["causes"] = {{{"reason", cause_type}, {"message", what}, {"field", field}}};
  std::string kind = t.group.empty() ? t.kind : t.kind + "." + t.group;
  return status_error(422, "Invalid", kind + " \"" + name + "\" is invalid: " + field + ": " + what, d);
}

Response modified_conflict(const k8s::ResourceType& t, const std::string& name) {
  return status_error(409, "Conflict",
                      "Operation cannot be fulfilled on " + t.group_resource() + " \"" + name +
                          "\": the object has been modified; please apply your changes to the latest version and "
                          "try again",
                      details(t, name));
}

bool is_dns_label(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return s.front() != '-' && s.back() != '-';
}

bool is_dns_subdomain(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  for (const auto& part : split(s, '.'))
    if (!is_dns_label(part)) return false;
  return true;
}

// The fields of an object that make up its "spec" for generation purposes:
// everything but metadata and status.
bool spec_changed(const json& a, const json& b) {
  for (const auto& [k, v] : b.items()) {
    if (k == "metadata" || k == "status" || k == "apiVersion" || k == "kind") continue;
    if (!a.contains(k) || a[k] != v) return true;
  }
  for (const auto& [k, v] : a.items()) {
    if (k == "metadata" || k == "status" || k == "apiVersion" || k == "kind") continue;
    if (!b.contains(k)) return true;
  }
  return false;
}

// Equality ignoring resourceVersion and managedFields timestamps: a write
// that changes nothing else is a no-op and keeps the old resourceVersion.
bool same_content(const json& a, const json& b) {
  auto strip = [](json o) {
    if (o.contains("metadata") && o["metadata"].is_object()) {
      auto& m = o["metadata"];
      m.erase("resourceVersion");
      if (m.contains("managedFields") && m["managedFields"].is_array())
        for (auto& e : m["managedFields"]) e.erase("time");
    }
    return o;
  };
  return strip(a) == strip(b);
}

std::string query(const Request& r, const std::string& key) {
  auto it = r.query.find(key);
  return it == r.query.end() ? std::string() : it->second;
}

std::string media_type(const std::string& content_type) { return trim(split(content_type, ';')[0]); }

std::string manager_from_agent(const std::string& agent) {
  std::string m = agent.substr(0, agent.find('/'));
  return m.empty() ? "unknown" : m.substr(0, 128);
}

// The built-in types of release 1.<minor>, built once per release.
const std::vector<TypeInfo>& builtin_types(int minor) {
  static std::mutex mutex;
  static std::map<int, std::vector<TypeInfo>> by_minor;
  std::lock_guard lock(mutex);
  auto it = by_minor.find(minor);
  if (it != by_minor.end()) return it->second;
  std::vector<TypeInfo> out;
  for (const auto& t : served_types(minor)) {
    TypeInfo info;
    info.type = t;
    info.schema = &k8s::Schema::for_kind(t.group, t.kind);
    out.push_back(std::move(info));
  }
  return by_minor.emplace(minor, std::move(out)).first->second;
}

}  // namespace

int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string new_uid() {
  std::string h = random_hex(16);
  h[12] = '4';
  const char variants[] = "89ab";
  h[16] = variants[static_cast<unsigned char>(h[16]) % 4];
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20);
}

Response status_error(int code, const std::string& reason, const std::string& message, const json& d) {
  json body = {{"kind", "Status"},   {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Failure"},
               {"message", message}, {"reason", reason},  {"code", code}};
  if (!d.is_null()) body["details"] = d;
  Response r;
  r.status = code;
  r.body = body.dump();
  return r;
}

Cluster::Cluster(size_t index, std::string name, std::string url_prefix, const ClusterEnv& env)
    : m_index(index),
      m_name(std::move(name)),
      m_prefix(std::move(url_prefix)),
      m_env(env),
      m_builtin(&builtin_types(env.version_minor)) {}

std::string Cluster::next_rv() { return std::to_string(++m_rv); }

std::string Cluster::now() const { return rfc3339(unix_ms() / 1000); }

void Cluster::ensure_seeded() {
  if (m_seeded) return;
  m_seeded = true;
  const TypeInfo* ns = find_kind("", "v1", "Namespace");
  for (const char* n : {"default", "kube-node-lease", "kube-public", "kube-system"}) {
    std::string key = object_key("", n);
    if (find(*ns, key)) continue;
    json obj = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", n}}}};
    obj["metadata"]["uid"] = new_uid();
    obj["metadata"]["creationTimestamp"] = now();
    obj["metadata"]["resourceVersion"] = next_rv();
    on_write(*ns, nullptr, obj);
    m_objects[ns->store_key()][key] = std::move(obj);
  }
  seed_nodes();
  // Preinstalled components: written as a client's create would write them
  // (a CRD is registered by on_write).
  for (const auto& component : m_env.preinstall)
    for (json obj : preinstalled_objects(component)) {
      auto gv = k8s::parse_api_version(obj.value("apiVersion", ""));
      const TypeInfo* info = find_kind(gv.group, gv.version, obj.value("kind", ""));
      std::string key = object_key("", obj["metadata"].value("name", ""));
      if (find(*info, key)) continue;  // restored from a persisted state
      obj["metadata"]["uid"] = new_uid();
      obj["metadata"]["creationTimestamp"] = now();
      obj["metadata"]["resourceVersion"] = next_rv();
      on_write(*info, nullptr, obj);
      m_objects[info->store_key()][key] = std::move(obj);
    }
}

std::vector<const TypeInfo*> Cluster::all_types() const {
  std::vector<const TypeInfo*> out;
  for (const auto& t : *m_builtin) out.push_back(&t);
  for (const auto& [k, t] : m_custom_types)
    if (t.served) out.push_back(&t);
  return out;
}

const TypeInfo* Cluster::find_type(const std::string& group, const std::string& version,
                                   const std::string& resource) const {
  for (const auto& t : *m_builtin)
    if (t.type.resource == resource && t.type.group == group && t.type.version == version) return &t;
  auto it = m_custom_types.find(group + "/" + version + "/" + resource);
  if (it != m_custom_types.end() && it->second.served) return &it->second;
  return nullptr;
}

const TypeInfo* Cluster::find_kind(const std::string& group, const std::string& version,
                                   const std::string& kind) const {
  for (const auto& t : *m_builtin)
    if (t.type.kind == kind && t.type.group == group && t.type.version == version) return &t;
  for (const auto& [k, t] : m_custom_types)
    if (t.served && t.type.kind == kind && t.type.group == group && t.type.version == version) return &t;
  return nullptr;
}

json* Cluster::find(const TypeInfo& info, const std::string& key) {
  auto it = m_objects.find(info.store_key());
  if (it == m_objects.end()) return nullptr;
  auto o = it->second.find(key);
  return o == it->second.end() ? nullptr : &o->second;
}

bool Cluster::namespace_exists(const std::string& ns) {
  const TypeInfo* t = find_kind("", "v1", "Namespace");
  return find(*t, object_key("", ns)) != nullptr;
}

bool Cluster::namespace_terminating(const std::string& ns) {
  const TypeInfo* t = find_kind("", "v1", "Namespace");
  json* obj = find(*t, object_key("", ns));
  return obj && (*obj)["metadata"].contains("deletionTimestamp");
}

Response terminating(const k8s::ResourceType& t, const std::string& name, const std::string& ns) {
  json d = details(t, name);
  d["causes"] = {{{"reason", "NamespaceTerminating"},
                  {"message", "namespace " + ns + " is being terminated"},
                  {"field", "metadata.namespace"}}};
  return status_error(403, "Forbidden",
                      t.group_resource() + " \"" + name + "\" is forbidden: unable to create new content in namespace " +
                          ns + " because it is being terminated",
                      d);
}

json Cluster::output(const TypeInfo& info, const std::string& version, const json& obj) const {
  json out = obj;
  out["apiVersion"] = info.type.group.empty() ? version : info.type.group + "/" + version;
  out["kind"] = info.type.kind;
  return out;
}

Response Cluster::handle(const Request& r, const WatchSend& send) {
  ++m_requests;
  if (r.method == "POST" || r.method == "PUT" || r.method == "PATCH") ++m_writes[r.path];
  ensure_seeded();
  try {
    if (r.impersonate_user.empty() && r.impersonate_groups.empty()) {
      Response res = route(r, send);
      settle();
      return res;
    }
    Request as = r;
    Response denied = impersonate(as);
    if (denied.status != 200) return denied;
    Response res = route(as, send);
    settle();
    return res;
  } catch (const Error& e) {
    return status_error(e.kind() == ErrorKind::invalid ? 400 : 500,
                        e.kind() == ErrorKind::invalid ? "BadRequest" : "InternalError", e.message());
  } catch (const json::exception& e) {
    return bad_request(std::string("invalid request: ") + e.what());
  }
}

Response Cluster::route(const Request& r, const WatchSend& send) {
  std::string path = r.path;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  {
    // A resource request names at least a resource below a group version;
    // everything else (discovery, OpenAPI, /version, unknown paths) is a
    // non-resource URL, authorized by path and the lower-case method.
    auto segs = split(path.substr(1), '/');
    bool resource_request = (segs.size() >= 3 && segs[0] == "api") || (segs.size() >= 4 && segs[0] == "apis");
    if (!resource_request) {
      Attributes a;
      a.resource_request = false;
      a.verb = to_lower(r.method);
      a.path = r.path;
      if (!authorize(r.identity, a).allowed) return forbidden(r.identity, a, nullptr);
    }
  }
  if (path == "/version") return version();
  if (path == "/healthz" || path == "/livez" || path == "/readyz") {
    Response ok;
    ok.content_type = "text/plain; charset=utf-8";
    ok.body = "ok";
    return ok;
  }
  if (path == "/api" || path == "/apis") {
    if (r.method != "GET") return status_error(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
    return discovery_root(r, path == "/api");
  }
  if (path == "/openapi/v3") return openapi_index();
  if (path == "/openapi/v2") return openapi_v2();
  if (starts_with(path, "/openapi/v3/")) return openapi_document(path.substr(12));

  auto segs = split(path.substr(1), '/');
  Target t;
  size_t rest;
  std::string group;
  if (segs.size() >= 2 && segs[0] == "api") {
    t.version = segs[1];
    rest = 2;
  } else if (segs.size() >= 3 && segs[0] == "apis") {
    group = segs[1];
    t.version = segs[2];
    rest = 3;
  } else if (segs.size() == 2 && segs[0] == "apis") {
    return discovery_group(segs[1]);
  } else {
    return status_error(404, "NotFound", "the server could not find the requested resource");
  }
  std::vector<std::string> s(segs.begin() + static_cast<std::ptrdiff_t>(rest), segs.end());
  if (s.empty()) {
    if (r.method != "GET") return status_error(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
    return discovery_resources(group, t.version);
  }
  std::string res_name;
  if (s[0] == "namespaces" && s.size() >= 3 && !(s.size() == 3 && (s[2] == "status" || s[2] == "finalize"))) {
    t.ns = s[1];
    res_name = s[2];
    if (s.size() >= 4) t.name = s[3];
    if (s.size() >= 5) t.subresource = s[4];
    if (s.size() > 5) return status_error(404, "NotFound", "the server could not find the requested resource");
  } else {
    res_name = s[0];
    if (s.size() >= 2) t.name = s[1];
    if (s.size() >= 3) t.subresource = s[2];
    if (s.size() > 3) return status_error(404, "NotFound", "the server could not find the requested resource");
  }
  t.info = find_type(group, t.version, res_name);
  if (!t.info) return status_error(404, "NotFound", "the server could not find the requested resource");
  if (!t.info->type.namespaced && !t.ns.empty())
    return status_error(404, "NotFound", "the server could not find the requested resource");
  if (!t.subresource.empty() && !t.info->type.has_subresource(t.subresource))
    return status_error(404, "NotFound", "the server could not find the requested resource");
  return resource(r, t, send);
}

Response Cluster::impersonate(Request& r) {
  if (r.impersonate_user.empty())
    return status_error(500, "InternalError", "requested impersonation of groups without impersonating a user");
  std::vector<std::pair<std::string, std::string>> wanted = {{"users", r.impersonate_user}};
  for (const auto& g : r.impersonate_groups) wanted.push_back({"groups", g});
  for (const auto& [resource, name] : wanted) {
    Attributes a{"impersonate", true, "", resource, name, "", {}};
    if (!authorize(r.identity, a).allowed)
      return status_error(403, "Forbidden", forbidden_message(r.identity, a, resource),
                          json{{"name", name}, {"kind", resource}});
  }
  r.identity.user = r.impersonate_user;
  r.identity.groups = r.impersonate_groups;
  r.identity.groups.push_back("system:authenticated");
  Response ok;
  return ok;
}

Decision Cluster::authorize(const Identity& who, const Attributes& what) const {
  if (std::find(who.groups.begin(), who.groups.end(), "system:masters") != who.groups.end()) return {true, ""};
  return detail::authorize(who, what, rbac_objects());
}

RbacObjects Cluster::rbac_objects() const {
  auto objects = [this](const char* store_key) -> const std::map<std::string, json>* {
    auto it = m_objects.find(store_key);
    return it == m_objects.end() ? nullptr : &it->second;
  };
  RbacObjects rbac;
  rbac.roles = objects("rbac.authorization.k8s.io/roles");
  rbac.role_bindings = objects("rbac.authorization.k8s.io/rolebindings");
  rbac.cluster_roles = objects("rbac.authorization.k8s.io/clusterroles");
  rbac.cluster_role_bindings = objects("rbac.authorization.k8s.io/clusterrolebindings");
  return rbac;
}

Response Cluster::forbidden(const Identity& who, const Attributes& what, const k8s::ResourceType* type) const {
  json d = json::object();
  if (type) {
    d = details(*type, what.name);
    if (what.name.empty()) d.erase("name");
  }
  return status_error(403, "Forbidden", forbidden_message(who, what, type ? type->group_resource() : ""), d);
}

Response Cluster::resource(const Request& r, const Target& t, const WatchSend& send) {
  const std::string& m = r.method;
  if ((m == "POST" || m == "PUT" || m == "PATCH") && t.subresource != "approval" &&
      media_type(r.content_type) == "application/vnd.kubernetes.protobuf") {
    // kubectl's typed clients (`kubectl create deployment|role|...`, `auth
    // can-i`) speak protobuf; the body is decoded and handled as JSON.
    json decoded;
    std::string error;
    if (m == "PATCH" || !decode_object_protobuf(r.body, decoded, error))
      return status_error(415, "UnsupportedMediaType", error.empty() ? "protobuf patches are not supported" : error);
    Request as_json = r;
    as_json.content_type = "application/json";
    as_json.body = decoded.dump();
    return resource(as_json, t, send);
  }
  std::string verb;
  if (m == "GET") {
    std::string w = query(r, "watch");
    verb = !t.name.empty() ? "get" : (w == "true" || w == "1") ? "watch" : "list";
  } else if (m == "POST") {
    verb = "create";
  } else if (m == "PUT") {
    verb = "update";
  } else if (m == "PATCH") {
    verb = "patch";
  } else if (m == "DELETE") {
    verb = t.name.empty() ? "deletecollection" : "delete";
  }
  std::string resource_name = t.info->type.resource + (t.subresource.empty() ? "" : "/" + t.subresource);
  Attributes attrs{verb, true, t.info->type.group, resource_name, t.name, t.ns, {}};
  // The apiserver takes a namespace's own name as the request's namespace,
  // so a Role in "ns1" can grant access to the Namespace object ns1.
  if (t.info->type.group.empty() && t.info->type.resource == "namespaces") attrs.ns = t.name;
  if (!verb.empty() && !authorize(r.identity, attrs).allowed) return forbidden(r.identity, attrs, &t.info->type);
  if (!t.info->type.verbs.empty()) {  // create-only reviews
    if (m == "POST" && t.name.empty()) return review(r, t);
    return status_error(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
  }
  if (t.name.empty()) {
    if (m == "GET") {
      std::string w = query(r, "watch");
      if (w == "true" || w == "1") return watch_objects(r, t, send);
      return list_objects(r, t);
    }
    if (m == "POST") {
      if (t.info->type.namespaced && t.ns.empty())
        return status_error(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
      return create_object(r, t);
    }
    if (m == "DELETE") return delete_collection(r, t);
  } else {
    if (m == "GET") return get_object(r, t);
    if (m == "PUT") return t.subresource == "approval" ? approve_csr(r, t) : update_object(r, t);
    if (m == "PATCH") return patch_object(r, t);
    if (m == "DELETE" && t.subresource.empty()) return delete_object(r, t);
  }
  return status_error(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
}

Response Cluster::get_object(const Request& req, const Target& t) {
  json* obj = find(*t.info, object_key(t.ns, t.name));
  if (!obj) return not_found(t.info->type, t.name);
  if (t.subresource == "scale") {
    Response r;
    r.body = scale_of(*obj, t).dump();
    return r;
  }
  Response r;
  if (wants_table(req.accept)) {
    r.body = table(t.info->type, {obj}, (*obj)["metadata"].value("resourceVersion", ""), unix_ms() / 1000).dump();
    return r;
  }
  r.body = output(*t.info, t.version, *obj).dump();
  return r;
}

json Cluster::scale_of(const json& obj_ref, const Target& t) const {
  const json* obj = &obj_ref;
  {
    json scale = {{"kind", "Scale"},
                  {"apiVersion", "autoscaling/v1"},
                  {"metadata",
                   {{"name", t.name},
                    {"namespace", t.ns},
                    {"uid", (*obj)["metadata"].value("uid", "")},
                    {"resourceVersion", (*obj)["metadata"].value("resourceVersion", "")},
                    {"creationTimestamp", (*obj)["metadata"].value("creationTimestamp", "")}}},
                  {"spec", {{"replicas", obj->value("/spec/replicas"_json_pointer, 1)}}},
                  {"status", {{"replicas", obj->value("/status/replicas"_json_pointer, 0)}}}};
    return scale;
  }
}

Response Cluster::list_objects(const Request& r, const Target& t) {
  LabelSelector labels;
  FieldSelector fields;
  try {
    labels = parse_label_selector(query(r, "labelSelector"));
    fields = parse_field_selector(query(r, "fieldSelector"), t.info->type.kind);
  } catch (const Error& e) {
    return bad_request(e.message());
  }
  size_t limit = 0;
  if (auto l = query(r, "limit"); !l.empty()) limit = static_cast<size_t>(std::max(0L, std::atol(l.c_str())));
  std::string start;
  if (auto c = query(r, "continue"); !c.empty()) {
    json token;
    if (auto decoded = base64_decode(c, {.lenient = true})) token = json::parse(*decoded, nullptr, false);
    if (!token.is_object() || !token.contains("start"))
      return bad_request("continue key is not valid: illegal base64 data");
    start = token["start"].get<std::string>();
  }
  std::string rv = std::to_string(m_rv);
  json items = json::array();
  std::string next;
  size_t remaining = 0;
  auto sit = m_objects.find(t.info->store_key());
  if (sit != m_objects.end()) {
    auto& objs = sit->second;
    auto it = start.empty() ? objs.begin() : objs.upper_bound(start);
    std::string prefix = t.ns.empty() ? std::string() : t.ns + "/";
    if (!prefix.empty() && start.empty()) it = objs.lower_bound(prefix);
    for (; it != objs.end(); ++it) {
      if (!prefix.empty() && !starts_with(it->first, prefix)) break;
      if (!labels.matches(it->second) || !fields.matches(it->second)) continue;
      if (limit && items.size() == limit) {
        if (next.empty()) next = std::prev(it)->first;
        ++remaining;
        continue;
      }
      json item = it->second;
      if (!t.info->custom) {
        item.erase("apiVersion");
        item.erase("kind");
      } else {
        item["apiVersion"] = t.info->type.group + "/" + t.version;
      }
      items.push_back(std::move(item));
    }
  }
  if (wants_table(r.accept)) {
    std::vector<const json*> rows;
    for (const auto& item : items) rows.push_back(&item);
    json tbl = table(t.info->type, rows, rv, unix_ms() / 1000);
    if (!next.empty()) tbl["metadata"]["continue"] = base64_encode(json{{"rv", rv}, {"start", next}}.dump());
    Response out;
    out.body = tbl.dump();
    return out;
  }
  json list = {{"kind", t.info->type.kind + "List"},
               {"apiVersion", t.info->type.group.empty() ? t.version : t.info->type.group + "/" + t.version},
               {"metadata", {{"resourceVersion", rv}}},
               {"items", std::move(items)}};
  if (!next.empty()) {
    list["metadata"]["continue"] = base64_encode(json{{"rv", rv}, {"start", next}}.dump());
    if (labels.empty() && fields.empty()) list["metadata"]["remainingItemCount"] = remaining;
  }
  Response out;
  out.body = list.dump();
  return out;
}

Response Cluster::watch_objects(const Request& r, const Target& t, const WatchSend& send) {
  Watch w;
  try {
    w.labels = parse_label_selector(query(r, "labelSelector"));
    w.fields = parse_field_selector(query(r, "fieldSelector"), t.info->type.kind);
  } catch (const Error& e) {
    return bad_request(e.message());
  }
  w.store_key = t.info->store_key();
  w.ns = t.ns;
  w.api_version = t.info->type.group.empty() ? t.version : t.info->type.group + "/" + t.version;
  w.kind = t.info->type.kind;
  w.send = send;
  Response out;
  out.watch = true;
  out.watch_id = m_next_watch++;
  if (auto ts = query(r, "timeoutSeconds"); !ts.empty()) out.watch_timeout_s = std::atoi(ts.c_str());
  // Without a resourceVersion (or with "0") a watch starts with the current
  // state as ADDED events; with one, only later changes follow (no history
  // is kept, so older versions are treated as "now").
  std::string rv = query(r, "resourceVersion");
  if (rv.empty() || rv == "0") {
    auto sit = m_objects.find(w.store_key);
    if (sit != m_objects.end())
      for (const auto& [k, obj] : sit->second) {
        if (!w.ns.empty() && obj["metadata"].value("namespace", "") != w.ns) continue;
        if (!w.labels.matches(obj) || !w.fields.matches(obj)) continue;
        json o = obj;
        o["apiVersion"] = w.api_version;
        out.body += json{{"type", "ADDED"}, {"object", o}}.dump() + "\n";
      }
  }
  m_watches.emplace(out.watch_id, std::move(w));
  return out;
}

void Cluster::close_watch(uint64_t id) { m_watches.erase(id); }

void Cluster::notify(const TypeInfo& info, const char* type, const json& obj) {
  m_dirty = true;
  if (m_watches.empty()) return;
  std::string key = info.store_key();
  std::string ns = obj["metadata"].value("namespace", "");
  // Copy: a send may close (erase) its own watch.
  std::vector<std::pair<WatchSend, std::string>> out;
  for (const auto& [id, w] : m_watches) {
    if (w.store_key != key) continue;
    if (!w.ns.empty() && w.ns != ns) continue;
    if (!w.labels.matches(obj) || !w.fields.matches(obj)) continue;
    json o = obj;
    o["apiVersion"] = w.api_version;
    out.push_back({w.send, json{{"type", type}, {"object", o}}.dump() + "\n"});
  }
  for (auto& [send, line] : out) send(line);
}

void Cluster::store_put(const TypeInfo& info, const std::string& key, json obj, const char* event) {
  json& slot = m_objects[info.store_key()][key];
  slot = std::move(obj);
  notify(info, event, slot);
  if (is_cluster_role(info)) aggregate_cluster_roles();
}

void Cluster::store_erase(const TypeInfo& info, const std::string& key) {
  auto sit = m_objects.find(info.store_key());
  if (sit == m_objects.end()) return;
  auto it = sit->second.find(key);
  if (it == sit->second.end()) return;
  json obj = std::move(it->second);
  sit->second.erase(it);
  if (sit->second.empty()) m_objects.erase(sit);
  obj["metadata"]["resourceVersion"] = next_rv();
  notify(info, "DELETED", obj);
  if (is_cluster_role(info)) aggregate_cluster_roles();
}

bool Cluster::is_cluster_role(const TypeInfo& info) {
  return info.type.group == "rbac.authorization.k8s.io" && info.type.resource == "clusterroles";
}

// The clusterrole-aggregation controller, run after every ClusterRole write
// (a real cluster's runs moments later; here the rules are current at once).
// Aggregated roles may feed others, so it repeats until nothing changes.
void Cluster::aggregate_cluster_roles() {
  if (m_aggregating) return;
  m_aggregating = true;
  const TypeInfo* info = find_type("rbac.authorization.k8s.io", "v1", "clusterroles");
  for (bool changed = true; changed && info;) {
    changed = false;
    auto sit = m_objects.find(info->store_key());
    if (sit == m_objects.end()) break;
    for (auto& [key, role] : sit->second) {
      auto rules = detail::aggregated_rules(role.value("/metadata/name"_json_pointer, std::string()), role, sit->second);
      if (!rules || role.value("rules", json::array()) == *rules) continue;
      role["rules"] = std::move(*rules);
      role["metadata"]["resourceVersion"] = next_rv();
      notify(*info, "MODIFIED", role);
      changed = true;
    }
  }
  m_aggregating = false;
}

// ---- writes ----

Response Cluster::commit(const Identity& who, const Target& t, const json* old, json obj, bool dry_run) {
  const auto& type = t.info->type;
  auto& meta = obj["metadata"];
  std::string name = meta.value("name", "");
  if (type.group == "rbac.authorization.k8s.io" && t.subresource.empty()) {
    // The RBAC storage's escalation and bind checks, on every write.
    if (auto p = detail::write_problem(who, type.resource, type.namespaced ? t.ns : "", obj, rbac_objects())) {
      if (p->not_found) return status_error(404, "NotFound", p->message, json());
      return status_error(403, "Forbidden", type.group_resource() + " \"" + name + "\" is forbidden: " + p->message,
                          details(type, name));
    }
  }
  if (old) {
    const auto& om = (*old)["metadata"];
    for (const char* k : {"uid", "creationTimestamp", "resourceVersion", "deletionTimestamp"})
      if (om.contains(k))
        meta[k] = om[k];
      else
        meta.erase(k);
    if (type.has_generation || t.info->custom) {
      int64_t gen = om.value("generation", int64_t{1});
      meta["generation"] = spec_changed(*old, obj) ? gen + 1 : gen;
    }
  } else {
    meta["uid"] = new_uid();
    meta["creationTimestamp"] = now();
    if (type.has_generation || t.info->custom) meta["generation"] = 1;
    if (type.namespaced) meta["namespace"] = t.ns;
  }
  if (type.group.empty() && type.kind == "Service" && t.subresource.empty())
    if (Response refused = allocate_service(old, obj); refused.status != 200) return refused;
  on_write(*t.info, old, obj);
  if (old && same_content(*old, obj)) {
    Response r;
    r.body = output(*t.info, t.version, *old).dump();
    return r;
  }
  std::string key = object_key(type.namespaced ? t.ns : "", name);
  if (!dry_run) {
    meta["resourceVersion"] = next_rv();
    // An object whose last finalizer went away while it was being deleted.
    // Only a write that removes metadata.finalizers finishes it: a
    // Terminating Namespace or CRD has none there (the namespace and CRD
    // controllers finalize it, the scheduled finalize below) and stays
    // Terminating through any write until then.
    auto has_finalizers = [](const json& m) { return m.contains("finalizers") && !m["finalizers"].empty(); };
    bool finished = meta.contains("deletionTimestamp") && !has_finalizers(meta) && old &&
                    has_finalizers((*old)["metadata"]);
    if (finished) {
      Response r;
      r.body = output(*t.info, t.version, obj).dump();
      remove_object(*t.info, key, true);
      return r;
    }
    bool created = !old;
    store_put(*t.info, key, obj, created ? "ADDED" : "MODIFIED");
    // The controllers act on the write before the answer (a status write
    // is theirs to overwrite later, as a real cluster's would).
    if (is_controller(type) && t.subresource != "status") enqueue(*t.info, key);
    if (type.group.empty() && type.kind == "Pod") enqueue_owner(obj);
    settle();
    Response r;
    r.status = created ? 201 : 200;
    const json* stored = find(*t.info, key);
    r.body = output(*t.info, t.version, stored ? *stored : obj).dump();
    return r;
  }
  meta["resourceVersion"] = old ? (*old)["metadata"].value("resourceVersion", "") : "";
  Response r;
  r.status = old ? 200 : 201;
  r.body = output(*t.info, t.version, obj).dump();
  return r;
}

Response Cluster::create_object(const Request& r, const Target& t) {
  if (!t.subresource.empty())
    return status_error(405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
  std::string mt = media_type(r.content_type);
  json obj;
  try {
    obj = k8s::parse_json_or_yaml(r.body);
  } catch (const Error& e) {
    return bad_request(e.message());
  }
  if (!obj.is_object()) return bad_request("the body of the request must be an object");
  k8s::prune_nulls(obj);
  const auto& type = t.info->type;
  std::string api_version = type.group.empty() ? t.version : type.group + "/" + t.version;
  if (obj.value("apiVersion", api_version) != api_version || obj.value("kind", type.kind) != type.kind)
    return bad_request("the API version in the data (" + obj.value("apiVersion", "") +
                       ") does not match the expected API version (" + api_version + ")");
  obj["apiVersion"] = api_version;
  obj["kind"] = type.kind;
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) obj["metadata"] = json::object();
  auto& meta = obj["metadata"];
  if (!meta.contains("name") || meta["name"] == "") {
    std::string gen = meta.value("generateName", "");
    if (gen.empty())
      return invalid(type, "", "metadata.name", "Required value: name or generateName is required", "FieldValueRequired");
    meta["name"] = gen + random_hex(3).substr(0, 5);
  }
  std::string name = meta.value("name", "");
  if (type.namespaced) {
    std::string ns = meta.value("namespace", t.ns);
    if (ns != t.ns)
      return bad_request("the namespace of the provided object does not match the namespace sent on the request");
    if (!namespace_exists(t.ns)) return namespace_not_found(t.ns);
    if (namespace_terminating(t.ns)) return terminating(type, name, t.ns);
  }
  if (!(type.kind == "Namespace" ? is_dns_label(name) : is_dns_subdomain(name)) && !t.info->custom &&
      type.group != "rbac.authorization.k8s.io")
    return invalid(type, name, "metadata.name",
                   "Invalid value: \"" + name + "\": a lowercase RFC 1123 " +
                       (type.kind == "Namespace" ? "label" : "subdomain") +
                       " must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
                       "with an alphanumeric character",
                   "FieldValueInvalid");
  std::string key = object_key(type.namespaced ? t.ns : "", name);
  if (find(*t.info, key))
    return status_error(409, "AlreadyExists", type.group_resource() + " \"" + name + "\" already exists",
                        details(type, name));
  meta.erase("managedFields");
  meta.erase("resourceVersion");
  k8s::default_list_keys(obj, *t.info->schema);
  std::string manager = query(r, "fieldManager");
  if (manager.empty()) manager = manager_from_agent(r.user_agent);
  k8s::record_update(json(), obj, *t.info->schema, {manager, obj["apiVersion"], now(), k8s::Scope::main});
  (void)mt;
  return commit(r.identity, t, nullptr, std::move(obj), query(r, "dryRun") == "All");
}

Response Cluster::update_object(const Request& r, const Target& t) {
  const auto& type = t.info->type;
  std::string key = object_key(type.namespaced ? t.ns : "", t.name);
  json* live = find(*t.info, key);
  if (!live) return not_found(type, t.name);
  json obj;
  try {
    obj = k8s::parse_json_or_yaml(r.body);
  } catch (const Error& e) {
    return bad_request(e.message());
  }
  if (!obj.is_object()) return bad_request("the body of the request must be an object");
  k8s::prune_nulls(obj);
  if (t.subresource == "scale") {
    json updated = *live;
    updated["spec"]["replicas"] = obj.value("/spec/replicas"_json_pointer, 1);
    k8s::record_update(*live, updated, *t.info->schema,
                       {manager_from_agent(r.user_agent), type.api_version(), now(), k8s::Scope::main});
    Response res = commit(r.identity, t, live, std::move(updated), query(r, "dryRun") == "All");
    if (res.status < 300) return get_object(r, t);
    return res;
  }
  if (obj.value("/metadata/name"_json_pointer, t.name) != t.name)
    return bad_request("the name of the object (" + obj.value("/metadata/name"_json_pointer, std::string()) +
                       ") does not match the name on the URL (" + t.name + ")");
  std::string want_rv = obj.value("/metadata/resourceVersion"_json_pointer, std::string());
  if (!want_rv.empty() && want_rv != (*live)["metadata"].value("resourceVersion", ""))
    return modified_conflict(type, t.name);
  json updated = obj;
  updated["apiVersion"] = type.group.empty() ? t.version : type.group + "/" + t.version;
  updated["kind"] = type.kind;
  updated["metadata"]["name"] = t.name;
  if (type.namespaced) updated["metadata"]["namespace"] = t.ns;
  k8s::Scope scope = split_status(t.subresource == "status", type, *live, obj, updated);
  k8s::default_list_keys(updated, *t.info->schema);
  std::string manager = query(r, "fieldManager");
  if (manager.empty()) manager = manager_from_agent(r.user_agent);
  k8s::record_update(*live, updated, *t.info->schema, {manager, updated["apiVersion"], now(), scope});
  return commit(r.identity, t, live, std::move(updated), query(r, "dryRun") == "All");
}

Response Cluster::patch_object(const Request& r, const Target& t) {
  const auto& type = t.info->type;
  std::string mt = media_type(r.content_type);
  bool apply = mt == "application/apply-patch+yaml" || mt == "application/apply-patch+cbor";
  std::string manager = query(r, "fieldManager");
  std::string force = query(r, "force");
  if (!apply && !force.empty())
    return status_error(422, "Invalid",
                        "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for "
                        "non-apply patch",
                        json{{"kind", "PatchOptions"}, {"group", "meta.k8s.io"},
                             {"causes", {{{"reason", "FieldValueForbidden"},
                                          {"message", "Forbidden: may not be specified for non-apply patch"},
                                          {"field", "force"}}}}});
  if (auto dr = query(r, "dryRun"); !dr.empty() && dr != "All")
    return status_error(422, "Invalid",
                        "PatchOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: \"" + dr +
                            "\": supported values: \"All\"");
  json patch;
  try {
    patch = k8s::parse_json_or_yaml(r.body);
  } catch (const Error& e) {
    return bad_request(e.message());
  }
  if (apply) {
    if (manager.empty())
      return status_error(422, "Invalid",
                          "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for "
                          "apply patch",
                          json{{"kind", "PatchOptions"}, {"group", "meta.k8s.io"},
                               {"causes", {{{"reason", "FieldValueRequired"},
                                            {"message", "Required value: is required for apply patch"},
                                            {"field", "fieldManager"}}}}});
    if (manager.size() > 128)
      return status_error(422, "Invalid",
                          "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Too long: may not be more than "
                          "128 bytes");
    return apply_object(r, t, patch);
  }
  std::string key = object_key(type.namespaced ? t.ns : "", t.name);
  json* live = find(*t.info, key);
  if (!live) return not_found(type, t.name);
  bool scale = t.subresource == "scale";
  const json base = scale ? scale_of(*live, t) : *live;
  json patched;
  try {
    if (mt == "application/json-patch+json")
      patched = k8s::json_patch(base, patch);
    else if (mt == "application/merge-patch+json")
      patched = k8s::merge_patch(base, patch);
    else if (mt == "application/strategic-merge-patch+json") {
      if (!scale && !t.info->schema->supports_strategic_merge())
        return status_error(415, "UnsupportedMediaType",
                            "the body of the request was in an unknown format - accepted media types include: "
                            "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml");
      patched = k8s::strategic_merge_patch(base, patch, scale ? k8s::Schema::untyped() : *t.info->schema);
    } else {
      return status_error(415, "UnsupportedMediaType",
                          "the body of the request was in an unknown format - accepted media types include: "
                          "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml");
    }
  } catch (const Error& e) {
    return status_error(422, "Invalid", e.message());
  }
  if (!patched.is_object()) return bad_request("the patched object must be a JSON object");
  if (scale) {
    json updated = *live;
    updated["spec"]["replicas"] = patched.value("/spec/replicas"_json_pointer, 1);
    k8s::record_update(*live, updated, *t.info->schema,
                       {manager.empty() ? manager_from_agent(r.user_agent) : manager, type.api_version(), now(),
                        k8s::Scope::main});
    Response res = commit(r.identity, t, live, std::move(updated), query(r, "dryRun") == "All");
    if (res.status >= 300) return res;
    Response out;
    out.body = scale_of(*find(*t.info, key), t).dump();
    return out;
  }
  if (patched.value("/metadata/name"_json_pointer, t.name) != t.name)
    return bad_request("metadata.name: Invalid value: the name of the object cannot change");
  std::string want_rv = patch.is_object() ? patch.value("/metadata/resourceVersion"_json_pointer, std::string()) : "";
  if (!want_rv.empty() && want_rv != (*live)["metadata"].value("resourceVersion", ""))
    return modified_conflict(type, t.name);
  k8s::Scope scope = split_status(t.subresource == "status", type, *live, patched, patched);
  patched["metadata"]["managedFields"] = (*live)["metadata"].value("managedFields", json::array());
  k8s::default_list_keys(patched, *t.info->schema);
  if (manager.empty()) manager = manager_from_agent(r.user_agent);
  std::string api_version = type.group.empty() ? t.version : type.group + "/" + t.version;
  k8s::record_update(*live, patched, *t.info->schema, {manager, api_version, now(), scope});
  return commit(r.identity, t, live, std::move(patched), query(r, "dryRun") == "All");
}

Response Cluster::apply_object(const Request& r, const Target& t, const json& intent_in) {
  const auto& type = t.info->type;
  if (!intent_in.is_object()) return bad_request("the apply patch must be an object");
  json intent = intent_in;
  k8s::prune_nulls(intent);
  std::string api_version = type.group.empty() ? t.version : type.group + "/" + t.version;
  if (intent.value("apiVersion", "") != api_version)
    return bad_request("Incorrect version specified in apply patch. Specified patch version: " +
                       intent.value("apiVersion", "") + ", expected: " + api_version);
  if (intent.value("kind", "") != type.kind)
    return bad_request("Incorrect kind specified in apply patch. Specified patch kind: " + intent.value("kind", "") +
                       ", expected: " + type.kind);
  if (!intent.contains("metadata") || !intent["metadata"].is_object()) intent["metadata"] = json::object();
  auto& meta = intent["metadata"];
  if (meta.contains("managedFields") && !meta["managedFields"].is_null())
    return bad_request("metadata.managedFields must be nil");
  std::string name = meta.value("name", "");
  if (name != t.name)
    return bad_request("the name of the object (" + name + ") does not match the name on the URL (" + t.name + ")");
  if (type.namespaced) {
    std::string ns = meta.value("namespace", t.ns);
    if (ns != t.ns)
      return bad_request("the namespace of the provided object does not match the namespace sent on the request");
    meta["namespace"] = t.ns;
  }
  std::string key = object_key(type.namespaced ? t.ns : "", t.name);
  json* live = find(*t.info, key);
  if (!live) {
    if (t.subresource == "status") return not_found(type, t.name);
    if (type.namespaced && !namespace_exists(t.ns)) return namespace_not_found(t.ns);
    if (type.namespaced && namespace_terminating(t.ns)) return terminating(type, name, t.ns);
    if (!(type.kind == "Namespace" ? is_dns_label(name) : is_dns_subdomain(name)) && !t.info->custom &&
        type.group != "rbac.authorization.k8s.io")
      return invalid(type, name, "metadata.name",
                     "Invalid value: \"" + name + "\": a lowercase RFC 1123 " +
                         (type.kind == "Namespace" ? "label" : "subdomain") +
                         " must consist of lower case alphanumeric characters, '-' or '.', and must start and end "
                         "with an alphanumeric character",
                     "FieldValueInvalid");
  }
  if (!live && t.subresource.empty()) {
    // Apply creates through the update path, which authorizes the create too.
    Attributes create{"create", true, type.group, type.resource, t.name, t.ns, {}};
    if (!authorize(r.identity, create).allowed) return forbidden(r.identity, create, &type);
  }
  std::string want_rv = meta.value("resourceVersion", "");
  if (!want_rv.empty() && (!live || want_rv != (*live)["metadata"].value("resourceVersion", "")))
    return modified_conflict(type, t.name);
  k8s::default_list_keys(intent, *t.info->schema);
  json merged = live ? *live : json();
  k8s::Scope scope = t.subresource == "status" ? k8s::Scope::status : k8s::Scope::main;
  std::string force = query(r, "force");
  auto conflicts = k8s::apply(merged, intent, *t.info->schema,
                              {query(r, "fieldManager"), api_version, now(), scope}, force == "true");
  if (!conflicts.empty() && force != "true") {
    json causes = json::array();
    for (const auto& c : conflicts)
      causes.push_back({{"type", "FieldManagerConflict"}, {"message", "conflict with " + c.manager}, {"field", c.path}});
    json d = details(type, t.name);
    d["causes"] = causes;
    return status_error(409, "Conflict", k8s::conflict_message(conflicts), d);
  }
  merged["metadata"]["name"] = t.name;
  if (type.namespaced) merged["metadata"]["namespace"] = t.ns;
  return commit(r.identity, t, live, std::move(merged), query(r, "dryRun") == "All");
}

Response Cluster::approve_csr(const Request& r, const Target& t) {
  std::string key = object_key("", t.name);
  json* live = find(*t.info, key);
  if (!live) return not_found(t.info->type, t.name);
  {
    // As the CertificateSigning admission plugin does: approving (or
    // denying) needs "approve" on the request's signer, by name or domain.
    std::string signer = live->value("/spec/signerName"_json_pointer, std::string());
    Attributes a{"approve", true, "certificates.k8s.io", "signers", signer, "", {}};
    bool ok = authorize(r.identity, a).allowed;
    if (!ok && signer.find('/') != std::string::npos) {
      a.name = signer.substr(0, signer.find('/')) + "/*";
      ok = authorize(r.identity, a).allowed;
    }
    if (!ok)
      return status_error(403, "Forbidden",
                          t.info->type.group_resource() + " \"" + t.name +
                              "\" is forbidden: user not permitted to approve requests with signerName \"" + signer +
                              "\"",
                          details(t.info->type, t.name));
  }
  json body;
  if (media_type(r.content_type) == "application/vnd.kubernetes.protobuf") {
    std::string error;
    if (!decode_object_protobuf(r.body, body, error)) return status_error(415, "UnsupportedMediaType", error);
    if (body.value("kind", "") != t.info->type.kind)
      return bad_request("the approval body must be a " + t.info->type.kind + ", not " + body.value("kind", ""));
  } else {
    try {
      body = k8s::parse_json_or_yaml(r.body);
    } catch (const Error& e) {
      return bad_request(e.message());
    }
  }
  std::string want_rv = body.value("/metadata/resourceVersion"_json_pointer, std::string());
  if (!want_rv.empty() && want_rv != (*live)["metadata"].value("resourceVersion", ""))
    return modified_conflict(t.info->type, t.name);
  json updated = *live;
  json conditions = body.value("/status/conditions"_json_pointer, json::array());
  for (auto& c : conditions) {
    if (!c.contains("lastUpdateTime")) c["lastUpdateTime"] = now();
    if (!c.contains("lastTransitionTime")) c["lastTransitionTime"] = now();
  }
  updated["status"]["conditions"] = conditions;
  std::string manager = query(r, "fieldManager");
  if (manager.empty()) manager = manager_from_agent(r.user_agent);
  Target st = t;
  k8s::record_update(*live, updated, *t.info->schema,
                     {manager, "certificates.k8s.io/v1", now(), k8s::Scope::status});
  return commit(r.identity, st, live, std::move(updated), query(r, "dryRun") == "All");
}

Response Cluster::review(const Request& r, const Target& t) {
  json obj;
  try {
    obj = k8s::parse_json_or_yaml(r.body);
  } catch (const Error& e) {
    return bad_request(e.message());
  }
  if (!obj.is_object()) return bad_request("the body of the request must be an object");
  const std::string& kind = t.info->type.kind;
  json status = json::object();
  if (kind == "SelfSubjectReview") {
    status["userInfo"] = {{"username", r.identity.user}, {"groups", r.identity.groups}};
  } else if (kind == "SelfSubjectRulesReview") {
    status = rules_review(r.identity, obj.value("/spec/namespace"_json_pointer, std::string()), rbac_objects());
  } else {
    Identity who = r.identity;
    if (kind != "SelfSubjectAccessReview") {
      who.user = obj.value("/spec/user"_json_pointer, std::string());
      who.groups.clear();
      for (const auto& g : obj.value("/spec/groups"_json_pointer, json::array()))
        if (g.is_string()) who.groups.push_back(g);
    }
    Attributes a;
    if (obj.contains("/spec/nonResourceAttributes"_json_pointer)) {
      json attrs = obj.value("/spec/nonResourceAttributes"_json_pointer, json::object());
      a.resource_request = false;
      a.verb = attrs.value("verb", "");
      a.path = attrs.value("path", "");
    } else {
      json attrs = obj.value("/spec/resourceAttributes"_json_pointer, json::object());
      a.verb = attrs.value("verb", "");
      a.group = attrs.value("group", "");
      a.resource = attrs.value("resource", "");
      if (attrs.value("subresource", "") != "") a.resource += "/" + attrs.value("subresource", "");
      a.name = attrs.value("name", "");
      a.ns = kind == "LocalSubjectAccessReview" ? t.ns : attrs.value("namespace", "");
    }
    Decision d = authorize(who, a);
    status["allowed"] = d.allowed;
    if (!d.reason.empty()) status["reason"] = d.reason;
  }
  obj["status"] = status;
  obj["apiVersion"] = t.info->type.api_version();
  obj["kind"] = kind;
  if (!obj.contains("metadata")) obj["metadata"] = json::object();
  obj["metadata"]["creationTimestamp"] = nullptr;
  Response res;
  res.status = 201;
  res.body = obj.dump();
  return res;
}

// ---- delete ----

void Cluster::remove_object(const TypeInfo& info, const std::string& key, bool cascade) {
  json* obj = find(info, key);
  if (!obj) return;
  json copy = *obj;
  std::string uid = copy["metadata"].value("uid", "");
  store_erase(info, key);
  enqueue_owner(copy);  // e.g. a ReplicaSet replaces a deleted Pod
  const auto& type = info.type;
  if (type.group.empty() && type.kind == "Namespace") {
    std::string ns = copy["metadata"].value("name", "");
    std::vector<std::pair<const TypeInfo*, std::string>> victims;
    for (const TypeInfo* t : all_types()) {
      if (!t->type.namespaced) continue;
      auto sit = m_objects.find(t->store_key());
      if (sit == m_objects.end()) continue;
      for (const auto& [k, o] : sit->second)
        if (starts_with(k, ns + "/")) victims.push_back({t, k});
    }
    for (const auto& [t, k] : victims) store_erase(*t, k);
  }
  if (type.group == "apiextensions.k8s.io" && type.kind == "CustomResourceDefinition") unregister_crd(copy);
  // Garbage collection of dependents (ownerReferences to this uid).
  std::vector<std::pair<const TypeInfo*, std::string>> dependents;
  for (const TypeInfo* t : all_types()) {
    auto sit = m_objects.find(t->store_key());
    if (sit == m_objects.end()) continue;
    for (auto& [k, o] : sit->second) {
      auto refs = o["metadata"].find("ownerReferences");
      if (refs == o["metadata"].end() || !refs->is_array()) continue;
      for (const auto& ref : *refs)
        if (ref.value("uid", "") == uid) {
          dependents.push_back({t, k});
          break;
        }
    }
  }
  for (const auto& [t, k] : dependents) {
    if (cascade) {
      remove_object(*t, k, true);
      continue;
    }
    json* dep = find(*t, k);
    if (!dep) continue;
    json updated = *dep;
    auto& refs = updated["metadata"]["ownerReferences"];
    json kept = json::array();
    for (const auto& ref : refs)
      if (ref.value("uid", "") != uid) kept.push_back(ref);
    if (kept.empty())
      updated["metadata"].erase("ownerReferences");
    else
      refs = kept;
    updated["metadata"]["resourceVersion"] = next_rv();
    store_put(*t, k, std::move(updated), "MODIFIED");
  }
}

namespace {

// DeleteOptions as clients send them: JSON (kubectl, dynamic clients) or
// protobuf (typed clients such as helm's release storage).
Response delete_options(const Request& r, json& options) {
  options = json::object();
  if (trim(r.body).empty()) return {};
  std::string error;
  if (media_type(r.content_type) == "application/vnd.kubernetes.protobuf") {
    if (!decode_object_protobuf(r.body, options, error) || options.value("kind", "") != "DeleteOptions")
      return bad_request("the body of the request must be DeleteOptions" + (error.empty() ? "" : ": " + error));
    return {};
  }
  options = json::parse(r.body, nullptr, false);
  if (!options.is_object() || (options.contains("kind") && options["kind"] != "DeleteOptions"))
    return bad_request("the body of the request must be DeleteOptions");
  return {};
}

}  // namespace

Response Cluster::delete_object(const Request& r, const Target& t) {
  const auto& type = t.info->type;
  std::string key = object_key(type.namespaced ? t.ns : "", t.name);
  json* live = find(*t.info, key);
  if (!live) return not_found(type, t.name);
  json options;
  if (Response bad = delete_options(r, options); bad.status != 200) return bad;
  std::string policy = options.value("propagationPolicy", query(r, "propagationPolicy"));
  if (policy.empty()) policy = options.value("orphanDependents", false) ? "Orphan" : "Background";
  if (policy != "Background" && policy != "Foreground" && policy != "Orphan")
    return status_error(422, "Invalid",
                        "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"" + policy +
                            "\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"");
  if (auto pre = options.find("preconditions"); pre != options.end() && pre->is_object()) {
    std::string uid = pre->value("uid", "");
    std::string rv = pre->value("resourceVersion", "");
    if (!uid.empty() && uid != (*live)["metadata"].value("uid", ""))
      return status_error(409, "Conflict",
                          "Operation cannot be fulfilled on " + type.group_resource() + " \"" + t.name +
                              "\": Precondition failed: UID in precondition: " + uid +
                              ", UID in object meta: " + (*live)["metadata"].value("uid", ""),
                          details(type, t.name));
    if (!rv.empty() && rv != (*live)["metadata"].value("resourceVersion", "")) return modified_conflict(type, t.name);
  }
  json obj = output(*t.info, t.version, *live);
  bool dry_run = query(r, "dryRun") == "All";
  auto finalizers = obj["metadata"].find("finalizers");
  if (finalizers != obj["metadata"].end() && finalizers->is_array() && !finalizers->empty()) {
    if (!dry_run && !(*live)["metadata"].contains("deletionTimestamp")) {
      (*live)["metadata"]["deletionTimestamp"] = now();
      (*live)["metadata"]["deletionGracePeriodSeconds"] = 0;
      (*live)["metadata"]["resourceVersion"] = next_rv();
      notify(*t.info, "MODIFIED", *live);
    }
    Response res;
    res.status = 202;
    res.body = output(*t.info, t.version, *live).dump();
    return res;
  }
  bool is_namespace = type.group.empty() && type.kind == "Namespace";
  bool is_crd = type.group == "apiextensions.k8s.io" && type.kind == "CustomResourceDefinition";
  if ((is_namespace || is_crd) && m_env.finalize_delay_ms > 0) {
    // As the namespace and CRD controllers do: Terminating first, contents
    // removed (and the object with them) a moment later.
    if (!dry_run && !(*live)["metadata"].contains("deletionTimestamp")) {
      (*live)["metadata"]["deletionTimestamp"] = now();
      (*live)["metadata"]["deletionGracePeriodSeconds"] = 0;
      if (is_namespace) {
        (*live)["status"]["phase"] = "Terminating";
      } else {
        (*live)["status"]["conditions"].push_back({{"type", "Terminating"},
                                                   {"status", "True"},
                                                   {"reason", "InstanceDeletionInProgress"},
                                                   {"message", "CustomResource deletion is in progress"},
                                                   {"lastTransitionTime", now()}});
      }
      (*live)["metadata"]["resourceVersion"] = next_rv();
      notify(*t.info, "MODIFIED", *live);
      schedule({unix_ms() + m_env.finalize_delay_ms, Pending::finalize, t.info->store_key(), key, ""});
    }
    Response res;
    res.body = output(*t.info, t.version, *live).dump();
    return res;
  }
  if (!dry_run) remove_object(*t.info, key, policy != "Orphan");
  Response res;
  if (type.group.empty() && type.kind == "Namespace") {
    obj["metadata"]["deletionTimestamp"] = now();
    obj["status"]["phase"] = "Terminating";
    res.body = obj.dump();
    return res;
  }
  json d = details(type, t.name);
  d["uid"] = obj["metadata"].value("uid", "");
  res.body = json{{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Success"},
                  {"details", d}}
                 .dump();
  return res;
}

Response Cluster::delete_collection(const Request& r, const Target& t) {
  LabelSelector labels;
  FieldSelector fields;
  try {
    labels = parse_label_selector(query(r, "labelSelector"));
    fields = parse_field_selector(query(r, "fieldSelector"), t.info->type.kind);
  } catch (const Error& e) {
    return bad_request(e.message());
  }
  json options;
  if (Response bad = delete_options(r, options); bad.status != 200) return bad;
  bool orphan = options.value("propagationPolicy", query(r, "propagationPolicy")) == "Orphan" ||
                options.value("orphanDependents", false);
  json items = json::array();
  std::vector<std::string> keys;
  auto sit = m_objects.find(t.info->store_key());
  if (sit != m_objects.end())
    for (const auto& [k, o] : sit->second) {
      if (!t.ns.empty() && !starts_with(k, t.ns + "/")) continue;
      if (!labels.matches(o) || !fields.matches(o)) continue;
      keys.push_back(k);
      items.push_back(o);
    }
  if (query(r, "dryRun") != "All")
    for (const auto& k : keys) remove_object(*t.info, k, !orphan);
  Response res;
  res.body = json{{"kind", t.info->type.kind + "List"},
                  {"apiVersion", t.info->type.group.empty() ? t.version : t.info->type.group + "/" + t.version},
                  {"metadata", {{"resourceVersion", std::to_string(m_rv)}}},
                  {"items", items}}
                 .dump();
  return res;
}

// ---- controllers ----

void Cluster::on_write(const TypeInfo& info, const json* old, json& obj) {
  const auto& type = info.type;
  auto& meta = obj["metadata"];
  if (type.group.empty() && type.kind == "Namespace") {
    meta["labels"]["kubernetes.io/metadata.name"] = meta.value("name", "");
    obj["spec"]["finalizers"] = {"kubernetes"};
    obj["status"]["phase"] = "Active";
    return;
  }
  if (type.group.empty() && type.kind == "Secret") {
    if (!obj.contains("type") || obj["type"] == "") obj["type"] = "Opaque";
    // stringData is write-only: the API folds it into data.
    if (obj.contains("stringData") && obj["stringData"].is_object()) {
      for (const auto& [k, v] : obj["stringData"].items())
        if (v.is_string()) obj["data"][k] = base64_encode(v.get<std::string>());
      obj.erase("stringData");
    }
    return;
  }
  if (type.group == "apiextensions.k8s.io" && type.kind == "CustomResourceDefinition") {
    bool established = m_env.crd_establish_delay_ms <= 0 ||
                       (old && old->value("/status/conditions"_json_pointer, json::array()).dump().find(
                                   "\"Established\"") != std::string::npos);
    json names = obj.value("/spec/names"_json_pointer, json::object());
    json stored = json::array();
    for (const auto& v : obj.value("/spec/versions"_json_pointer, json::array()))
      if (v.value("storage", false)) stored.push_back(v.value("name", ""));
    std::string t = now();
    obj["status"] = {{"acceptedNames", names},
                     {"storedVersions", stored},
                     {"conditions",
                      {{{"type", "NamesAccepted"},
                        {"status", "True"},
                        {"reason", "NoConflicts"},
                        {"message", "no conflicts found"},
                        {"lastTransitionTime", t}},
                       {{"type", "Established"},
                        {"status", established ? "True" : "False"},
                        {"reason", established ? "InitialNamesAccepted" : "Installing"},
                        {"message", established ? "the initial names have been accepted"
                                                : "the initial names have been accepted"},
                        {"lastTransitionTime", t}}}}};
    register_crd(obj, established);
    if (!established)
      schedule({unix_ms() + m_env.crd_establish_delay_ms, Pending::establish, info.store_key(),
                object_key("", meta.value("name", "")), ""});
    return;
  }
  if (type.group == "cert-manager.io" && type.kind == "CertificateRequest") {
    issue_certificate_request(old, obj);
    return;
  }
  if ((type.group == "cert-manager.io" && (type.kind == "ClusterIssuer" || type.kind == "Issuer")) ||
      (type.group.empty() && type.kind == "Secret"))
    requeue_certificate_requests();
  if (type.group == "certificates.k8s.io" && type.kind == "CertificateSigningRequest") {
    if (!old) {
      obj["status"] = json::object();
      return;
    }
    bool approved = false, denied = false;
    for (const auto& c : obj.value("/status/conditions"_json_pointer, json::array())) {
      if (c.value("type", "") == "Approved" && c.value("status", "True") == "True") approved = true;
      if (c.value("type", "") == "Denied" && c.value("status", "True") == "True") denied = true;
    }
    if (approved && !denied && !obj.contains("/status/certificate"_json_pointer) && m_env.ca) {
      std::string error;
      if (auto pem = base64_decode(obj.value("/spec/request"_json_pointer, std::string()), {.lenient = true})) {
        int seconds = obj.value("/spec/expirationSeconds"_json_pointer, 86400 * 365);
        std::string cert = m_env.ca->sign_request(*pem, std::max(1, seconds / 86400), error);
        if (!cert.empty()) {
          obj["status"]["certificate"] = base64_encode(cert);
          trust_certificate(identity_of_pem(cert).fingerprint);
        } else {
          obj["status"]["conditions"].push_back({{"type", "Failed"},
                                                 {"status", "True"},
                                                 {"reason", "SignerValidationFailure"},
                                                 {"message", error},
                                                 {"lastUpdateTime", now()},
                                                 {"lastTransitionTime", now()}});
        }
      }
    }
    return;
  }
  if (is_controller(type)) {
    defaults(info, old, obj);
    return;
  }
  if (type.group.empty() && type.kind == "Pod" && (!old || !old->contains("status"))) {
    bool ready = m_env.ready_delay_ms <= 0;
    pod_status(obj, ready);
    if (!ready)
      schedule({unix_ms() + m_env.ready_delay_ms, Pending::ready, info.store_key(),
                object_key(meta.value("namespace", ""), meta.value("name", "")), meta.value("uid", "")});
  }
}

void Cluster::schedule(Pending p) {
  int64_t due = p.due_ms;
  m_pending.push_back(std::move(p));
  std::push_heap(m_pending.begin(), m_pending.end(),
                 [](const Pending& a, const Pending& b) { return a.due_ms > b.due_ms; });
  if (m_env.schedule) m_env.schedule(m_index, due);
}

int64_t Cluster::tick(int64_t now) {
  auto later = [](const Pending& a, const Pending& b) { return a.due_ms > b.due_ms; };
  while (!m_pending.empty() && m_pending.front().due_ms <= now) {
    std::pop_heap(m_pending.begin(), m_pending.end(), later);
    Pending p = std::move(m_pending.back());
    m_pending.pop_back();
    if (p.kind == Pending::establish) {
      const TypeInfo* crd_type = find_kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
      json* crd = find(*crd_type, p.object_key);
      if (!crd) continue;
      json updated = *crd;
      for (auto& c : updated["status"]["conditions"])
        if (c.value("type", "") == "Established") {
          c["status"] = "True";
          c["reason"] = "InitialNamesAccepted";
          c["lastTransitionTime"] = this->now();
        }
      register_crd(updated, true);
      updated["metadata"]["resourceVersion"] = next_rv();
      store_put(*crd_type, p.object_key, std::move(updated), "MODIFIED");
      continue;
    }
    const TypeInfo* info = nullptr;
    for (const TypeInfo* t : all_types())
      if (t->store_key() == p.store_key) info = t;
    if (!info) continue;
    if (p.kind == Pending::finalize) {
      remove_object(*info, p.object_key, true);
      continue;
    }
    if (p.kind == Pending::load_balancer) {
      assign_load_balancer(*info, p.object_key);
      continue;
    }
    json* obj = find(*info, p.object_key);
    if (!obj || (*obj)["metadata"].value("uid", "") != p.uid) continue;
    json updated = *obj;
    pod_status(updated, true);
    controller_write(*info, p.object_key, updated, k8s::Scope::status);
    enqueue_owner(updated);
  }
  settle();
  return m_pending.empty() ? 0 : m_pending.front().due_ms;
}

void Cluster::register_crd(const json& crd, bool established) {
  std::string group = crd.value("/spec/group"_json_pointer, std::string());
  json names = crd.value("/spec/names"_json_pointer, json::object());
  std::string scope = crd.value("/spec/scope"_json_pointer, std::string("Namespaced"));
  for (const auto& v : crd.value("/spec/versions"_json_pointer, json::array())) {
    TypeInfo info;
    info.custom = true;
    info.served = established && v.value("served", true);
    info.type.group = group;
    info.type.version = v.value("name", "");
    info.type.kind = names.value("kind", "");
    info.type.resource = names.value("plural", "");
    info.type.singular = names.value("singular", to_lower(info.type.kind));
    info.type.namespaced = scope != "Cluster";
    info.type.has_generation = true;
    for (const auto& s : names.value("shortNames", json::array()))
      if (s.is_string()) info.type.short_names.push_back(s);
    for (const auto& s : names.value("categories", json::array()))
      if (s.is_string()) info.type.categories.push_back(s);
    if (v.contains("/subresources/status"_json_pointer)) info.type.subresources.push_back("status");
    if (v.contains("/subresources/scale"_json_pointer)) info.type.subresources.push_back("scale");
    info.own_schema = std::make_shared<k8s::Schema>(
        k8s::Schema::from_openapi(v.value("/schema/openAPIV3Schema"_json_pointer, json::object())));
    info.schema = info.own_schema.get();
    if (info.type.resource.empty() || info.type.version.empty()) continue;
    m_custom_types[group + "/" + info.type.version + "/" + info.type.resource] = std::move(info);
  }
}

void Cluster::unregister_crd(const json& crd) {
  std::string group = crd.value("/spec/group"_json_pointer, std::string());
  std::string plural = crd.value("/spec/names/plural"_json_pointer, std::string());
  for (auto it = m_custom_types.begin(); it != m_custom_types.end();) {
    if (it->second.type.group == group && it->second.type.resource == plural)
      it = m_custom_types.erase(it);
    else
      ++it;
  }
  auto sit = m_objects.find(group + "/" + plural);
  if (sit == m_objects.end()) return;
  TypeInfo gone;
  gone.type.group = group;
  gone.type.resource = plural;
  std::vector<std::string> keys;
  for (const auto& [k, o] : sit->second) keys.push_back(k);
  for (const auto& k : keys) store_erase(gone, k);
}

// ---- inspection and persistence ----

json Cluster::get(const std::string& api_version, const std::string& kind, const std::string& ns,
                  const std::string& name) {
  ensure_seeded();
  auto gv = k8s::parse_api_version(api_version);
  const TypeInfo* info = find_kind(gv.group, gv.version, kind);
  if (!info) return nullptr;
  json* obj = find(*info, object_key(info->type.namespaced ? ns : "", name));
  return obj ? output(*info, gv.version, *obj) : json();
}

std::vector<json> Cluster::list(const std::string& api_version, const std::string& kind, const std::string& ns) {
  ensure_seeded();
  std::vector<json> out;
  auto gv = k8s::parse_api_version(api_version);
  const TypeInfo* info = find_kind(gv.group, gv.version, kind);
  if (!info) return out;
  auto sit = m_objects.find(info->store_key());
  if (sit == m_objects.end()) return out;
  for (const auto& [k, o] : sit->second)
    if (ns.empty() || starts_with(k, ns + "/")) out.push_back(output(*info, gv.version, o));
  return out;
}

size_t Cluster::object_count() {
  ensure_seeded();
  size_t n = 0;
  for (const auto& [k, objs] : m_objects) n += objs.size();
  return n;
}

json Cluster::snapshot() {
  ensure_seeded();
  json objects = json::array();
  // CRDs first so that their custom resources have a type on restore.
  const TypeInfo* crd_type = find_kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
  auto crds = m_objects.find(crd_type->store_key());
  if (crds != m_objects.end())
    for (const auto& [k, o] : crds->second) objects.push_back(o);
  for (const auto& [sk, objs] : m_objects) {
    if (sk == crd_type->store_key()) continue;
    for (const auto& [k, o] : objs) objects.push_back(o);
  }
  json fingerprints = json::array();
  for (const auto& f : m_cert_fingerprints) fingerprints.push_back(f);
  return {{"resourceVersion", m_rv}, {"nextIP", m_next_ip}, {"objects", objects},
          {"certificates", fingerprints}};
}

void Cluster::restore(const json& snap) {
  m_seeded = true;
  m_rv = snap.value("resourceVersion", uint64_t{1});
  m_next_ip = snap.value("nextIP", uint32_t{10});
  for (const auto& f : snap.value("certificates", json::array()))
    if (f.is_string()) m_cert_fingerprints.insert(f.get<std::string>());
  for (const auto& o : snap.value("objects", json::array())) {
    auto gv = k8s::parse_api_version(o.value("apiVersion", ""));
    const TypeInfo* info = find_kind(gv.group, gv.version, o.value("kind", ""));
    if (!info) continue;
    std::string ns = info->type.namespaced ? o["metadata"].value("namespace", "") : "";
    m_objects[info->store_key()][object_key(ns, o["metadata"].value("name", ""))] = o;
    if (info->type.group == "apiextensions.k8s.io" && info->type.kind == "CustomResourceDefinition")
      register_crd(o, true);
    // Readiness timers do not persist: Pods still Pending start their delay anew.
    if (info->type.group.empty() && info->type.kind == "Pod" &&
        o.value("/status/phase"_json_pointer, std::string()) == "Pending")
      schedule({unix_ms() + m_env.ready_delay_ms, Pending::ready, info->store_key(),
                object_key(o["metadata"].value("namespace", ""), o["metadata"].value("name", "")),
                o["metadata"].value("uid", "")});
  }
}

}  // namespace emco::sim::detail
