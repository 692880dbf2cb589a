#include "core/k8s/schema.hpp"

#include <mutex>
#include <nlohmann/json.hpp>

namespace emco::k8s {

std::string child_path(std::string_view path, std::string_view name) {
  std::string out;
  out.reserve(path.size() + name.size() + 1);
  out.append(path);
  if (!out.empty()) out += '.';
  out.append(name);
  return out;
}

const ListSchema* Schema::list(std::string_view path) const {
  auto it = m_lists.find(path);
  return it == m_lists.end() ? nullptr : &it->second;
}

bool Schema::atomic_map(std::string_view path) const { return m_atomic_maps.count(path) != 0; }

void Schema::add_list(std::string path, ListSchema list) { m_lists[std::move(path)] = std::move(list); }

void Schema::add_atomic_map(std::string path) { m_atomic_maps.insert(std::move(path)); }

namespace {

ListSchema keyed(std::vector<std::string> keys, std::string merge_key, bool retain = false) {
  ListSchema l;
  l.type = ListType::map;
  l.keys = std::move(keys);
  l.smp_merge = true;
  l.merge_key = std::move(merge_key);
  l.retain_keys = retain;
  return l;
}

ListSchema primitive_set() {
  ListSchema l;
  l.type = ListType::set;
  l.smp_merge = true;
  return l;
}

void add_container_lists(Schema& s, const std::string& containers) {
  s.add_list(containers, keyed({"name"}, "name"));
  ListSchema ports = keyed({"containerPort", "protocol"}, "containerPort");
  ports.key_defaults["protocol"] = "TCP";
  s.add_list(containers + ".ports", ports);
  s.add_list(containers + ".env", keyed({"name"}, "name"));
  s.add_list(containers + ".volumeMounts", keyed({"mountPath"}, "mountPath"));
  s.add_list(containers + ".volumeDevices", keyed({"devicePath"}, "devicePath"));
}

// The PodSpec's lists, under `prefix` ("spec" for a Pod, "spec.template.spec"
// for a Deployment).
void add_pod_spec(Schema& s, const std::string& prefix) {
  for (const char* c : {"containers", "initContainers", "ephemeralContainers"}) add_container_lists(s, prefix + "." + c);
  s.add_list(prefix + ".volumes", keyed({"name"}, "name", true));
  s.add_list(prefix + ".imagePullSecrets", keyed({"name"}, "name"));
  s.add_list(prefix + ".hostAliases", keyed({"ip"}, "ip"));
  ListSchema tsc = keyed({"topologyKey", "whenUnsatisfiable"}, "topologyKey");
  s.add_list(prefix + ".topologySpreadConstraints", tsc);
  s.add_list(prefix + ".schedulingGates", keyed({"name"}, "name"));
  s.add_list(prefix + ".resourceClaims", keyed({"name"}, "name", true));
}

void add_conditions(Schema& s, const std::string& path) { s.add_list(path, keyed({"type"}, "type")); }

}  // namespace

Schema make_builtin_schema(std::string_view group, std::string_view kind) {
  Schema s;
  s.m_builtin = true;
  s.add_list("metadata.finalizers", primitive_set());
  s.add_list("metadata.ownerReferences", keyed({"uid"}, "uid"));
  if (group.empty() && kind == "Pod") {
    add_pod_spec(s, "spec");
    add_conditions(s, "status.conditions");
  } else if (group.empty() && kind == "PodTemplate") {
    add_pod_spec(s, "template.spec");
  } else if ((group == "apps" && (kind == "Deployment" || kind == "StatefulSet" || kind == "DaemonSet" ||
                                  kind == "ReplicaSet")) ||
             (group == "batch" && kind == "Job") || (group.empty() && kind == "ReplicationController")) {
    add_pod_spec(s, "spec.template.spec");
    if (!(group.empty() && kind == "ReplicationController")) s.add_atomic_map("spec.selector");
    add_conditions(s, "status.conditions");
  } else if (group == "batch" && kind == "CronJob") {
    add_pod_spec(s, "spec.jobTemplate.spec.template.spec");
    s.add_atomic_map("spec.jobTemplate.spec.selector");
  } else if (group.empty() && kind == "Service") {
    ListSchema ports = keyed({"port", "protocol"}, "port");
    ports.key_defaults["protocol"] = "TCP";
    s.add_list("spec.ports", ports);
    add_conditions(s, "status.conditions");
  } else if (group.empty() && kind == "Namespace") {
    add_conditions(s, "status.conditions");
  } else if (group == "policy" && kind == "PodDisruptionBudget") {
    s.add_atomic_map("spec.selector");
    add_conditions(s, "status.conditions");
  } else if (group == "networking.k8s.io" && kind == "NetworkPolicy") {
    s.add_atomic_map("spec.podSelector");
  } else if (group == "admissionregistration.k8s.io") {
    s.add_list("webhooks", keyed({"name"}, "name"));
  } else if (group == "certificates.k8s.io" && kind == "CertificateSigningRequest") {
    add_conditions(s, "status.conditions");
  } else if (group == "apiextensions.k8s.io" && kind == "CustomResourceDefinition") {
    add_conditions(s, "status.conditions");
  } else if (group == "autoscaling" && kind == "HorizontalPodAutoscaler") {
    add_conditions(s, "status.conditions");
  }
  return s;
}

const Schema& Schema::for_kind(std::string_view group, std::string_view kind) {
  static std::mutex mutex;
  static std::map<std::string, Schema, std::less<>> cache;
  std::string key = std::string(group) + "/" + std::string(kind);
  std::lock_guard lock(mutex);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, make_builtin_schema(group, kind)).first;
  return it->second;
}

const Schema& Schema::untyped() {
  static const Schema s = [] {
    Schema u;
    ListSchema finalizers;
    finalizers.type = ListType::set;
    u.add_list("metadata.finalizers", finalizers);
    ListSchema owners;
    owners.type = ListType::map;
    owners.keys = {"uid"};
    u.add_list("metadata.ownerReferences", owners);
    return u;
  }();
  return s;
}

namespace {

void walk_openapi(Schema& s, const nlohmann::json& node, const std::string& path) {
  if (!node.is_object()) return;
  std::string type = node.value("type", "");
  if (node.contains("x-kubernetes-map-type") && node["x-kubernetes-map-type"] == "atomic") s.add_atomic_map(path);
  if (type == "array" || node.contains("items")) {
    std::string list_type = node.value("x-kubernetes-list-type", "atomic");
    ListSchema l;
    if (list_type == "map") {
      l.type = ListType::map;
      if (node.contains("x-kubernetes-list-map-keys") && node["x-kubernetes-list-map-keys"].is_array())
        for (const auto& k : node["x-kubernetes-list-map-keys"])
          if (k.is_string()) l.keys.push_back(k.get<std::string>());
      if (l.keys.empty()) l.type = ListType::atomic;
    } else if (list_type == "set") {
      l.type = ListType::set;
    }
    if (l.type != ListType::atomic) s.add_list(path, l);
    if (node.contains("items")) walk_openapi(s, node["items"], path);
    return;
  }
  if (node.contains("properties") && node["properties"].is_object())
    for (const auto& [name, child] : node["properties"].items()) walk_openapi(s, child, child_path(path, name));
  if (node.contains("additionalProperties") && node["additionalProperties"].is_object())
    walk_openapi(s, node["additionalProperties"], path);
}

}  // namespace

Schema Schema::from_openapi(const nlohmann::json& open_api_v3_schema) {
  Schema s = untyped();
  walk_openapi(s, open_api_v3_schema, "");
  return s;
}

}  // namespace emco::k8s
