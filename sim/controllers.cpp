// The simulated kube-controller-manager: Deployments own ReplicaSets, which
// (like ReplicationControllers) own Pods; StatefulSets, DaemonSets and Jobs
// own Pods. Pods become ready (or, with restartPolicy Never/OnFailure,
// complete) after the ready delay, and every owner's status is computed from
// what it owns, field by field as helm's --wait and `kubectl rollout status`
// read it.
//
// Controllers run from a queue that settle() drains at the end of every
// request and timer, so a write and everything it causes land before the
// answer; with a zero ready delay a Deployment is ready in its own apply.

#include <algorithm>
#include <cstdlib>

#include "core/k8s/managed_fields.hpp"
#include "core/util/strings.hpp"
#include "sim/cluster.hpp"
#include "sim/tls.hpp"
#include "sim/versions.hpp"

namespace emco::sim::detail {

using nlohmann::json;

namespace {

// The characters Kubernetes uses for generated name suffixes and hashes
// (k8s.io/apimachinery/pkg/util/rand: no vowels, no confusable digits).
constexpr char k_alphanums[] = "bcdfghjklmnpqrstvwxz2456789";

std::string safe_encode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) out += k_alphanums[c % (sizeof k_alphanums - 1)];
  return out;
}

// pod-template-hash / controller-revision-hash: FNV-32a of the template,
// encoded as the controllers encode theirs.
std::string template_hash(const json& tmpl) {
  uint32_t h = 2166136261u;
  for (unsigned char c : tmpl.dump()) {
    h ^= c;
    h *= 16777619u;
  }
  return safe_encode(std::to_string(h));
}

// A generated name's random suffix: five of k_alphanums.
std::string name_suffix() {
  std::string hex = random_hex(5);
  std::string out;
  for (size_t i = 0; i < 5; ++i) out += k_alphanums[std::stoul(hex.substr(i * 2, 2), nullptr, 16) % 27];
  return out;
}

std::string key_of(const json& obj) {
  return obj["metadata"].value("namespace", "") + "/" + obj["metadata"].value("name", "");
}

const json* controller_ref(const json& obj) {
  auto refs = obj["metadata"].find("ownerReferences");
  if (refs == obj["metadata"].end() || !refs->is_array()) return nullptr;
  for (const auto& r : *refs)
    if (r.value("controller", false)) return &r;
  return nullptr;
}

json owner_reference(const k8s::ResourceType& t, const json& owner) {
  return {{"apiVersion", t.api_version()},
          {"kind", t.kind},
          {"name", owner["metadata"].value("name", "")},
          {"uid", owner["metadata"].value("uid", "")},
          {"controller", true},
          {"blockOwnerDeletion", true}};
}

bool deleting(const json& obj) { return obj["metadata"].contains("deletionTimestamp"); }

bool condition_true(const json& obj, const char* type) {
  for (const auto& c : obj.value("/status/conditions"_json_pointer, json::array()))
    if (c.value("type", "") == type) return c.value("status", "") == "True";
  return false;
}

bool pod_ready(const json& pod) { return condition_true(pod, "Ready"); }
bool pod_succeeded(const json& pod) { return pod.value("/status/phase"_json_pointer, std::string()) == "Succeeded"; }

// A Pod whose containers run to completion instead of being restarted.
bool completes(const json& pod) {
  std::string policy = pod.value("/spec/restartPolicy"_json_pointer, std::string("Always"));
  return policy == "Never" || policy == "OnFailure";
}

// An int-or-percent rollout bound scaled to `replicas` (percentages round
// down, as maxUnavailable does).
int64_t scaled(const json& v, int64_t replicas, int64_t fallback) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (!s.empty() && s.back() == '%') return replicas * std::atoll(s.c_str()) / 100;
    return std::atoll(s.c_str());
  }
  return fallback;
}

int64_t revision_of(const json& obj) {
  return std::atoll(obj.value("/metadata/annotations/deployment.kubernetes.io~1revision"_json_pointer,
                              std::string("0"))
                        .c_str());
}

// Conditions keep their transition times while their status stays, so that
// a recomputed status equal to the stored one is not a write.
json keep_times(json conditions, const json& old_status) {
  for (auto& c : conditions)
    for (const auto& o : old_status.value("conditions", json::array()))
      if (o.value("type", "") == c.value("type", "") && o.value("status", "") == c.value("status", "")) {
        if (o.contains("lastTransitionTime")) c["lastTransitionTime"] = o["lastTransitionTime"];
        if (o.contains("lastUpdateTime") && o.value("reason", "") == c.value("reason", ""))
          c["lastUpdateTime"] = o["lastUpdateTime"];
        if (o.contains("lastProbeTime")) c["lastProbeTime"] = o["lastProbeTime"];
      }
  return conditions;
}

json condition(const std::string& type, bool status, const std::string& reason, const std::string& message,
               const std::string& at, bool update_time = false) {
  json c = {{"type", type}, {"status", status ? "True" : "False"}, {"lastTransitionTime", at}};
  if (!reason.empty()) c["reason"] = reason;
  if (!message.empty()) c["message"] = message;
  if (update_time) c["lastUpdateTime"] = at;
  return c;
}

}  // namespace

bool Cluster::is_controller(const k8s::ResourceType& t) {
  if (t.group == "apps") return t.kind == "Deployment" || t.kind == "ReplicaSet" || t.kind == "StatefulSet" ||
                                t.kind == "DaemonSet";
  if (t.group == "batch") return t.kind == "Job";
  return t.group.empty() && t.kind == "ReplicationController";
}

void Cluster::defaults(const TypeInfo& info, const json* old, json& obj) {
  const auto& t = info.type;
  auto& spec = obj["spec"];
  if (!spec.is_object()) spec = json::object();
  auto set = [](json& o, const char* k, json v) {
    if (!o.contains(k) || o[k].is_null()) o[k] = std::move(v);
  };
  if (t.kind == "Deployment" || t.kind == "ReplicaSet" || t.kind == "StatefulSet" ||
      t.kind == "ReplicationController")
    set(spec, "replicas", 1);
  if (t.kind == "Deployment") {
    set(spec, "revisionHistoryLimit", 10);
    set(spec, "progressDeadlineSeconds", 600);
    set(spec, "strategy", {{"type", "RollingUpdate"}});
    if (spec["strategy"].value("type", "") == "RollingUpdate")
      set(spec["strategy"], "rollingUpdate", {{"maxSurge", "25%"}, {"maxUnavailable", "25%"}});
  } else if (t.kind == "StatefulSet") {
    set(spec, "podManagementPolicy", "OrderedReady");
    set(spec, "revisionHistoryLimit", 10);
    set(spec, "updateStrategy", {{"type", "RollingUpdate"}});
    if (spec["updateStrategy"].value("type", "") == "RollingUpdate")
      set(spec["updateStrategy"], "rollingUpdate", {{"partition", 0}});
  } else if (t.kind == "DaemonSet") {
    set(spec, "revisionHistoryLimit", 10);
    set(spec, "updateStrategy", {{"type", "RollingUpdate"}});
    if (spec["updateStrategy"].value("type", "") == "RollingUpdate")
      set(spec["updateStrategy"], "rollingUpdate", {{"maxSurge", 0}, {"maxUnavailable", 1}});
  } else if (t.kind == "Job") {
    bool both_unset = !spec.contains("completions") && !spec.contains("parallelism");
    if (both_unset) {
      spec["completions"] = 1;
      spec["parallelism"] = 1;
    }
    set(spec, "parallelism", 1);
    set(spec, "backoffLimit", 6);
    set(spec, "completionMode", "NonIndexed");
    set(spec, "suspend", false);
    if (!old && !spec.value("manualSelector", false)) {
      // The Job's own selector, on a label its Pods carry.
      std::string uid = obj["metadata"].value("uid", "");
      std::string name = obj["metadata"].value("name", "");
      spec["selector"] = {{"matchLabels", {{"batch.kubernetes.io/controller-uid", uid}}}};
      auto& labels = spec["template"]["metadata"]["labels"];
      labels["batch.kubernetes.io/controller-uid"] = uid;
      labels["batch.kubernetes.io/job-name"] = name;
      labels["controller-uid"] = uid;
      labels["job-name"] = name;
    }
  }
}

void Cluster::pod_status(json& pod, bool done) {
  std::string t = now();
  bool completes_ = completes(pod);
  bool running = done && !completes_;
  bool succeeded = done && completes_;
  json containers = json::array();
  for (const auto& c : pod.value("/spec/containers"_json_pointer, json::array())) {
    json cs = {{"name", c.value("name", "")},
               {"image", c.value("image", "")},
               {"imageID", ""},
               {"ready", running},
               {"restartCount", 0},
               {"started", running}};
    if (running)
      cs["state"] = {{"running", {{"startedAt", t}}}};
    else if (succeeded)
      cs["state"] = {{"terminated", {{"exitCode", 0}, {"reason", "Completed"}, {"startedAt", t}, {"finishedAt", t}}}};
    else
      cs["state"] = {{"waiting", {{"reason", "ContainerCreating"}}}};
    containers.push_back(cs);
  }
  json old = pod.value("status", json::object());
  std::string reason = succeeded ? "PodCompleted" : "";
  json conditions = {condition("PodScheduled", true, "", "", t), condition("Initialized", true, reason, "", t),
                     condition("ContainersReady", running, reason, "", t), condition("Ready", running, reason, "", t)};
  json status = {{"phase", running ? "Running" : succeeded ? "Succeeded" : "Pending"},
                 {"hostIP", "10.0.0.1"},
                 {"podIP", old.value("podIP", "10.244." + std::to_string((m_next_ip >> 8) & 255) + "." +
                                                  std::to_string(m_next_ip & 255))},
                 {"startTime", old.value("startTime", t)},
                 {"qosClass", "BestEffort"},
                 {"containerStatuses", containers},
                 {"conditions", keep_times(conditions, old)}};
  if (!old.contains("podIP")) ++m_next_ip;
  pod["status"] = std::move(status);
}

// ---- the queue ----

void Cluster::enqueue(const TypeInfo& info, const std::string& key) {
  for (const auto& [t, k] : m_queue)
    if (t == &info && k == key) return;
  m_queue.push_back({&info, key});
}

void Cluster::enqueue_owner(const json& obj) {
  const json* ref = controller_ref(obj);
  if (!ref) return;
  auto gv = k8s::parse_api_version(ref->value("apiVersion", ""));
  const TypeInfo* info = find_kind(gv.group, gv.version, ref->value("kind", ""));
  if (!info || !is_controller(info->type)) return;
  std::string key = (info->type.namespaced ? obj["metadata"].value("namespace", "") : "") + "/" +
                    ref->value("name", "");
  json* owner = find(*info, key);
  if (owner && (*owner)["metadata"].value("uid", "") == ref->value("uid", "")) enqueue(*info, key);
}

void Cluster::settle() {
  if (m_settling) return;
  m_settling = true;
  struct Done {
    Cluster* c;
    ~Done() {
      c->m_queue.clear();
      c->m_settling = false;
    }
  } done{this};
  // Each step converges (writes happen only on change); the bound only
  // stops a bug from hanging the event loop.
  for (int steps = 0; !m_queue.empty() && steps < 100000; ++steps) {
    auto [info, key] = m_queue.front();
    m_queue.erase(m_queue.begin());
    json* obj = find(*info, key);
    if (!obj || deleting(*obj)) continue;
    const auto& kind = info->type.kind;
    if (kind == "Deployment")
      reconcile_deployment(*info, key);
    else if (kind == "StatefulSet")
      reconcile_stateful_set(*info, key);
    else if (kind == "DaemonSet")
      reconcile_daemon_set(*info, key);
    else if (kind == "Job")
      reconcile_job(*info, key);
    else if (kind == "CertificateRequest")
      reconcile_certificate_request(*info, key);
    else
      reconcile_replica_set(*info, key);
  }
}

// ---- writes by controllers ----

bool Cluster::controller_write(const TypeInfo& info, const std::string& key, json updated, k8s::Scope scope) {
  json* live = find(info, key);
  if (!live) return false;
  if (*live == updated) return false;
  if (info.type.has_generation && scope == k8s::Scope::main && (*live)["spec"] != updated["spec"])
    updated["metadata"]["generation"] = (*live)["metadata"].value("generation", int64_t{1}) + 1;
  k8s::record_update(*live, updated, *info.schema,
                     {"kube-controller-manager", info.type.api_version(), now(), scope});
  updated["metadata"]["resourceVersion"] = next_rv();
  store_put(info, key, std::move(updated), "MODIFIED");
  return true;
}

std::string Cluster::create_child(const TypeInfo& info, json obj) {
  auto& meta = obj["metadata"];
  meta["uid"] = new_uid();
  meta["creationTimestamp"] = now();
  if (info.type.has_generation) meta["generation"] = 1;
  k8s::record_update(json(), obj, *info.schema, {"kube-controller-manager", info.type.api_version(), now(),
                                                 k8s::Scope::main});
  on_write(info, nullptr, obj);
  meta["resourceVersion"] = next_rv();
  std::string key = key_of(obj);
  store_put(info, key, obj, "ADDED");
  if (is_controller(info.type)) enqueue(info, key);
  // A Pod may be done at once (no ready delay): its owner counts again.
  enqueue_owner(obj);
  return key;
}

std::vector<std::string> Cluster::owned(const TypeInfo& info, const std::string& ns, const std::string& uid) {
  std::vector<std::string> out;
  auto sit = m_objects.find(info.store_key());
  if (sit == m_objects.end()) return out;
  for (auto it = sit->second.lower_bound(ns + "/"); it != sit->second.end() && starts_with(it->first, ns + "/");
       ++it) {
    const json* ref = controller_ref(it->second);
    if (ref && ref->value("uid", "") == uid) out.push_back(it->first);
  }
  return out;
}

void Cluster::create_pod(const TypeInfo& owner_info, const json& owner, const std::string& name,
                         const json& extra_labels, const std::string& node, const json& extra_spec) {
  const TypeInfo* pods = find_kind("", "v1", "Pod");
  json tmpl = owner.value("/spec/template"_json_pointer, json::object());
  json meta = {{"name", name}, {"namespace", owner["metadata"].value("namespace", "")}};
  json labels = tmpl.value("/metadata/labels"_json_pointer, json::object());
  for (const auto& [k, v] : extra_labels.items()) labels[k] = v;
  if (!labels.empty()) meta["labels"] = labels;
  if (auto a = tmpl.value("/metadata/annotations"_json_pointer, json()); a.is_object()) meta["annotations"] = a;
  meta["ownerReferences"] = {owner_reference(owner_info.type, owner)};
  json spec = tmpl.value("spec", json::object());
  if (!spec.contains("restartPolicy")) spec["restartPolicy"] = "Always";
  if (!spec.contains("schedulerName")) spec["schedulerName"] = "default-scheduler";
  spec["nodeName"] = node;
  for (const auto& [k, v] : extra_spec.items()) spec[k] = v;
  create_child(*pods, {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", meta}, {"spec", spec}});
}

json Cluster::node_object(const std::string& name, int index) {
  std::string version = release(m_env.version_minor).git_version();
  std::string t = now();
  json resources = {{"cpu", "4"}, {"memory", "16393216Ki"}, {"pods", "110"}, {"ephemeral-storage", "104857600Ki"}};
  json allocatable = {{"cpu", "3800m"}, {"memory", "15868928Ki"}, {"pods", "110"}, {"ephemeral-storage", "96636764Ki"}};
  std::string ip = "10.0." + std::to_string(index / 250) + "." + std::to_string(index % 250 + 1);
  json node = {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", name},
        {"labels",
         {{"kubernetes.io/hostname", name},
          {"kubernetes.io/os", "linux"},
          {"kubernetes.io/arch", "amd64"},
          {"topology.kubernetes.io/zone", std::string("zone-") + static_cast<char>('a' + (index - 1) % 3)}}}}},
      {"spec", {{"podCIDR", "10.244." + std::to_string(index % 256) + ".0/24"}}},
      {"status",
       {{"capacity", resources},
        {"allocatable", allocatable},
        {"addresses", {{{"type", "InternalIP"}, {"address", ip}}, {{"type", "Hostname"}, {"address", name}}}},
        {"conditions",
         {condition("MemoryPressure", false, "KubeletHasSufficientMemory", "kubelet has sufficient memory available", t),
          condition("DiskPressure", false, "KubeletHasNoDiskPressure", "kubelet has no disk pressure", t),
          condition("PIDPressure", false, "KubeletHasSufficientPID", "kubelet has sufficient PID available", t),
          condition("Ready", true, "KubeletReady", "kubelet is posting ready status", t)}},
        {"nodeInfo",
         {{"kubeletVersion", version},
          {"kubeProxyVersion", version},
          {"osImage", "Debian GNU/Linux 12 (bookworm)"},
          {"kernelVersion", "6.1.0-sim"},
          {"containerRuntimeVersion", "containerd://1.7.24"},
          {"architecture", "amd64"},
          {"operatingSystem", "linux"}}}}}};
  for (auto& c : node["status"]["conditions"]) c["lastHeartbeatTime"] = t;
  node["metadata"]["uid"] = new_uid();
  node["metadata"]["creationTimestamp"] = t;
  return node;
}

void Cluster::seed_nodes() {
  const TypeInfo* nodes = find_kind("", "v1", "Node");
  for (int i = 1; i <= m_env.nodes; ++i) {
    std::string name = m_name + "-node-" + std::to_string(i);
    json node = node_object(name, i);
    node["metadata"]["resourceVersion"] = next_rv();
    m_objects[nodes->store_key()]["/" + name] = std::move(node);
  }
}

void Cluster::apply_nodes(const json& wanted) {
  ensure_seeded();
  const TypeInfo* nodes = find_kind("", "v1", "Node");
  for (const auto& [name, spec] : wanted.items()) {
    if (!spec.is_object()) continue;
    std::string key = "/" + name;
    if (!find(*nodes, key)) {
      json node = node_object(name, static_cast<int>(m_objects[nodes->store_key()].size()) + 1);
      node["metadata"]["resourceVersion"] = next_rv();
      store_put(*nodes, key, std::move(node), "ADDED");
    }
    json updated = *find(*nodes, key);
    json labels = spec.value("labels", json::object()), resources = spec.value("resources", json::object());
    for (const auto& [k, v] : labels.items()) {
      if (v.is_null())
        updated["metadata"]["labels"].erase(k);
      else
        updated["metadata"]["labels"][k] = v;
    }
    for (const auto& [k, v] : resources.items()) {
      updated["status"]["capacity"][k] = v;
      updated["status"]["allocatable"][k] = v;
    }
    for (const char* part : {"capacity", "allocatable"}) {
      const json only = spec.value(part, json::object());
      for (const auto& [k, v] : only.items()) updated["status"][part][k] = v;
    }
    controller_write(*nodes, key, updated, k8s::Scope::main);
  }
  // DaemonSets follow the Nodes.
  if (const TypeInfo* ds = find_kind("apps", "v1", "DaemonSet"))
    if (auto sit = m_objects.find(ds->store_key()); sit != m_objects.end())
      for (const auto& [k, o] : sit->second) enqueue(*ds, k);
  settle();
}

std::vector<std::string> Cluster::node_names() {
  std::vector<std::string> out;
  if (const TypeInfo* nodes = find_kind("", "v1", "Node")) {
    auto sit = m_objects.find(nodes->store_key());
    if (sit != m_objects.end())
      for (const auto& [k, n] : sit->second) out.push_back(n["metadata"].value("name", ""));
  }
  // Every cluster has a node to run Pods on, listed or not.
  if (out.empty()) out.push_back(m_name + "-node-1");
  return out;
}

// ---- the controllers ----

void Cluster::reconcile_deployment(const TypeInfo& info, const std::string& key) {
  json d = *find(info, key);
  const TypeInfo* rs_type = find_kind("apps", "v1", "ReplicaSet");
  std::string ns = d["metadata"].value("namespace", "");
  std::string name = d["metadata"].value("name", "");
  int64_t replicas = d.value("/spec/replicas"_json_pointer, int64_t{1});
  json tmpl = d.value("/spec/template"_json_pointer, json::object());
  std::string hash = template_hash(tmpl);
  auto rs_keys = owned(*rs_type, ns, d["metadata"].value("uid", ""));
  int64_t max_rev = 0;
  std::string current;
  for (const auto& k : rs_keys) {
    const json& rs = *find(*rs_type, k);
    max_rev = std::max(max_rev, revision_of(rs));
    if (rs.value("/metadata/labels/pod-template-hash"_json_pointer, std::string()) == hash) current = k;
  }
  bool paused = d.value("/spec/paused"_json_pointer, false);
  if (!paused) {
    // Scale the others to 0 first: old Pods go before new ones come (the
    // whole rollout happens at once; the ready delay is its duration).
    for (const auto& k : rs_keys) {
      if (k == current) continue;
      json rs = *find(*rs_type, k);
      if (rs.value("/spec/replicas"_json_pointer, int64_t{0}) == 0) continue;
      rs["spec"]["replicas"] = 0;
      controller_write(*rs_type, k, rs, k8s::Scope::main);
      enqueue(*rs_type, k);
    }
    if (current.empty()) {
      json labels = tmpl.value("/metadata/labels"_json_pointer, json::object());
      labels["pod-template-hash"] = hash;
      json rs_tmpl = tmpl;
      rs_tmpl["metadata"]["labels"] = labels;
      json selector = d.value("/spec/selector"_json_pointer, json::object());
      selector["matchLabels"]["pod-template-hash"] = hash;
      json rs = {{"apiVersion", "apps/v1"},
                 {"kind", "ReplicaSet"},
                 {"metadata",
                  {{"name", name + "-" + hash},
                   {"namespace", ns},
                   {"labels", labels},
                   {"annotations",
                    {{"deployment.kubernetes.io/desired-replicas", std::to_string(replicas)},
                     {"deployment.kubernetes.io/max-replicas", std::to_string(replicas)},
                     {"deployment.kubernetes.io/revision", std::to_string(max_rev + 1)}}},
                   {"ownerReferences", {owner_reference(info.type, d)}}}},
                 {"spec", {{"replicas", replicas}, {"selector", selector}, {"template", rs_tmpl}}}};
      if (d["spec"].contains("minReadySeconds")) rs["spec"]["minReadySeconds"] = d["spec"]["minReadySeconds"];
      current = create_child(*rs_type, rs);
      rs_keys.push_back(current);
    } else {
      json rs = *find(*rs_type, current);
      auto& ann = rs["metadata"]["annotations"];
      // A rollback to an earlier template makes its ReplicaSet the newest revision.
      if (revision_of(rs) < max_rev) ann["deployment.kubernetes.io/revision"] = std::to_string(max_rev + 1);
      ann["deployment.kubernetes.io/desired-replicas"] = std::to_string(replicas);
      ann["deployment.kubernetes.io/max-replicas"] = std::to_string(replicas);
      rs["spec"]["replicas"] = replicas;
      if (controller_write(*rs_type, current, rs, k8s::Scope::main)) enqueue(*rs_type, current);
    }
    // Old ReplicaSets beyond revisionHistoryLimit go, oldest first.
    std::vector<std::pair<int64_t, std::string>> old;
    for (const auto& k : rs_keys)
      if (k != current) old.push_back({revision_of(*find(*rs_type, k)), k});
    std::sort(old.begin(), old.end());
    int64_t limit = d.value("/spec/revisionHistoryLimit"_json_pointer, int64_t{10});
    for (size_t i = 0; static_cast<int64_t>(old.size() - i) > limit; ++i) {
      remove_object(*rs_type, old[i].second, true);
      rs_keys.erase(std::find(rs_keys.begin(), rs_keys.end(), old[i].second));
    }
  }

  // Status from the ReplicaSets.
  int64_t total = 0, updated = 0, ready = 0, available = 0;
  std::string current_name;
  for (const auto& k : rs_keys) {
    const json* rs = find(*rs_type, k);
    if (!rs) continue;
    int64_t n = rs->value("/status/replicas"_json_pointer, int64_t{0});
    total += n;
    ready += rs->value("/status/readyReplicas"_json_pointer, int64_t{0});
    available += rs->value("/status/availableReplicas"_json_pointer, int64_t{0});
    if (k == current) {
      updated = n;
      current_name = (*rs)["metadata"].value("name", "");
    }
  }
  int64_t max_unavailable = 0;
  if (d.value("/spec/strategy/type"_json_pointer, std::string()) == "RollingUpdate")
    max_unavailable = scaled(d.value("/spec/strategy/rollingUpdate/maxUnavailable"_json_pointer, json("25%")),
                             replicas, 0);
  bool is_available = available >= replicas - max_unavailable;
  bool complete = updated == replicas && total == replicas && available >= replicas;
  std::string t = now();
  json old_status = d.value("status", json::object());
  json conditions = {
      condition("Available", is_available, is_available ? "MinimumReplicasAvailable" : "MinimumReplicasUnavailable",
                is_available ? "Deployment has minimum availability."
                             : "Deployment does not have minimum availability.",
                t, true),
      paused ? condition("Progressing", false, "DeploymentPaused", "Deployment is paused", t, true)
             : condition("Progressing", true, complete ? "NewReplicaSetAvailable" : "ReplicaSetUpdated",
                         "ReplicaSet \"" + current_name + "\" " +
                             (complete ? "has successfully progressed." : "is progressing."),
                         t, true)};
  json status = {{"observedGeneration", d["metadata"].value("generation", int64_t{1})},
                 {"replicas", total},
                 {"updatedReplicas", updated},
                 {"readyReplicas", ready},
                 {"availableReplicas", available},
                 {"conditions", keep_times(conditions, old_status)}};
  if (int64_t unavailable = std::max(total, replicas) - available; unavailable > 0)
    status["unavailableReplicas"] = unavailable;
  json next = d;
  next["status"] = status;
  if (!current.empty())
    next["metadata"]["annotations"]["deployment.kubernetes.io/revision"] =
        std::to_string(revision_of(*find(*rs_type, current)));
  controller_write(info, key, next, k8s::Scope::status);
}

void Cluster::reconcile_replica_set(const TypeInfo& info, const std::string& key) {
  json rs = *find(info, key);
  const TypeInfo* pods = find_kind("", "v1", "Pod");
  std::string ns = rs["metadata"].value("namespace", "");
  int64_t replicas = rs.value("/spec/replicas"_json_pointer, int64_t{1});
  auto pod_keys = owned(*pods, ns, rs["metadata"].value("uid", ""));
  // Surplus Pods go, those not ready first.
  std::stable_sort(pod_keys.begin(), pod_keys.end(), [&](const std::string& a, const std::string& b) {
    return pod_ready(*find(*pods, a)) > pod_ready(*find(*pods, b));
  });
  while (static_cast<int64_t>(pod_keys.size()) > replicas) {
    remove_object(*pods, pod_keys.back(), true);
    pod_keys.pop_back();
  }
  std::string name = rs["metadata"].value("name", "");
  auto nodes = node_names();
  for (auto n = static_cast<int64_t>(pod_keys.size()); n < replicas; ++n) {
    std::string pod = name + "-" + name_suffix();
    create_pod(info, rs, pod, json::object(), nodes[static_cast<size_t>(n) % nodes.size()]);
    pod_keys.push_back(ns + "/" + pod);
  }
  int64_t ready = 0;
  for (const auto& k : pod_keys) ready += pod_ready(*find(*pods, k)) ? 1 : 0;
  json next = rs;
  next["status"] = {{"observedGeneration", rs["metadata"].value("generation", int64_t{1})},
                    {"replicas", static_cast<int64_t>(pod_keys.size())},
                    {"fullyLabeledReplicas", static_cast<int64_t>(pod_keys.size())},
                    {"readyReplicas", ready},
                    {"availableReplicas", ready}};
  if (controller_write(info, key, next, k8s::Scope::status)) enqueue_owner(next);
}

void Cluster::reconcile_stateful_set(const TypeInfo& info, const std::string& key) {
  json sts = *find(info, key);
  const TypeInfo* pods = find_kind("", "v1", "Pod");
  std::string ns = sts["metadata"].value("namespace", "");
  std::string name = sts["metadata"].value("name", "");
  int64_t replicas = sts.value("/spec/replicas"_json_pointer, int64_t{1});
  std::string revision = name + "-" + template_hash(sts.value("/spec/template"_json_pointer, json::object()));
  bool on_delete = sts.value("/spec/updateStrategy/type"_json_pointer, std::string()) == "OnDelete";
  std::string service = sts.value("/spec/serviceName"_json_pointer, std::string());
  auto nodes = node_names();
  // Pods name-0..name-(N-1); ones of an older revision are replaced.
  for (const auto& k : owned(*pods, ns, sts["metadata"].value("uid", ""))) {
    const json& pod = *find(*pods, k);
    std::string pod_name = pod["metadata"].value("name", "");
    std::string ordinal = pod_name.substr(std::min(pod_name.size(), name.size() + 1));
    bool in_range = !ordinal.empty() && ordinal.find_first_not_of("0123456789") == std::string::npos &&
                    std::atoll(ordinal.c_str()) < replicas;
    bool stale = pod.value("/metadata/labels/controller-revision-hash"_json_pointer, std::string()) != revision;
    if (!in_range || (stale && !on_delete)) remove_object(*pods, k, true);
  }
  int64_t ready = 0, updated = 0, count = 0;
  for (int64_t i = 0; i < replicas; ++i) {
    std::string pod_name = name + "-" + std::to_string(i);
    json* pod = find(*pods, ns + "/" + pod_name);
    if (!pod) {
      json identity = {{"hostname", pod_name}};
      if (!service.empty()) identity["subdomain"] = service;
      create_pod(info, sts, pod_name,
                 {{"controller-revision-hash", revision},
                  {"statefulset.kubernetes.io/pod-name", pod_name},
                  {"apps.kubernetes.io/pod-index", std::to_string(i)}},
                 nodes[static_cast<size_t>(i) % nodes.size()], identity);
      pod = find(*pods, ns + "/" + pod_name);
    }
    ++count;
    if (pod_ready(*pod)) ++ready;
    if (pod->value("/metadata/labels/controller-revision-hash"_json_pointer, std::string()) == revision) ++updated;
  }
  json next = sts;
  next["status"] = {{"observedGeneration", sts["metadata"].value("generation", int64_t{1})},
                    {"replicas", count},
                    {"readyReplicas", ready},
                    {"availableReplicas", ready},
                    {"currentReplicas", updated},
                    {"updatedReplicas", updated},
                    {"currentRevision", updated == count ? revision
                                                         : sts.value("/status/currentRevision"_json_pointer, revision)},
                    {"updateRevision", revision},
                    {"collisionCount", 0}};
  controller_write(info, key, next, k8s::Scope::status);
}

void Cluster::reconcile_daemon_set(const TypeInfo& info, const std::string& key) {
  json ds = *find(info, key);
  const TypeInfo* pods = find_kind("", "v1", "Pod");
  std::string ns = ds["metadata"].value("namespace", "");
  std::string name = ds["metadata"].value("name", "");
  std::string revision = template_hash(ds.value("/spec/template"_json_pointer, json::object()));
  bool on_delete = ds.value("/spec/updateStrategy/type"_json_pointer, std::string()) == "OnDelete";
  auto nodes = node_names();
  // One Pod per node, of the current revision.
  std::map<std::string, std::string> by_node;
  for (const auto& k : owned(*pods, ns, ds["metadata"].value("uid", ""))) {
    const json& pod = *find(*pods, k);
    std::string node = pod.value("/spec/nodeName"_json_pointer, std::string());
    bool stale = pod.value("/metadata/labels/controller-revision-hash"_json_pointer, std::string()) != revision;
    bool known = std::find(nodes.begin(), nodes.end(), node) != nodes.end();
    if (!known || by_node.count(node) || (stale && !on_delete))
      remove_object(*pods, k, true);
    else
      by_node[node] = k;
  }
  int64_t ready = 0, updated = 0;
  for (const auto& node : nodes) {
    if (!by_node.count(node)) {
      std::string pod_name = name + "-" + name_suffix();
      create_pod(info, ds, pod_name, {{"controller-revision-hash", revision}}, node);
      by_node[node] = ns + "/" + pod_name;
    }
    const json& pod = *find(*pods, by_node[node]);
    if (pod_ready(pod)) ++ready;
    if (pod.value("/metadata/labels/controller-revision-hash"_json_pointer, std::string()) == revision) ++updated;
  }
  auto desired = static_cast<int64_t>(nodes.size());
  json next = ds;
  next["status"] = {{"observedGeneration", ds["metadata"].value("generation", int64_t{1})},
                    {"currentNumberScheduled", desired},
                    {"desiredNumberScheduled", desired},
                    {"numberMisscheduled", 0},
                    {"numberReady", ready},
                    {"numberAvailable", ready},
                    {"updatedNumberScheduled", updated}};
  if (desired > ready) next["status"]["numberUnavailable"] = desired - ready;
  controller_write(info, key, next, k8s::Scope::status);
}

void Cluster::reconcile_job(const TypeInfo& info, const std::string& key) {
  json job = *find(info, key);
  if (condition_true(job, "Complete") || job.value("/spec/suspend"_json_pointer, false)) return;
  const TypeInfo* pods = find_kind("", "v1", "Pod");
  std::string ns = job["metadata"].value("namespace", "");
  std::string name = job["metadata"].value("name", "");
  std::string uid = job["metadata"].value("uid", "");
  int64_t completions = job.value("/spec/completions"_json_pointer, int64_t{1});
  int64_t parallelism = job.value("/spec/parallelism"_json_pointer, int64_t{1});
  auto pod_keys = owned(*pods, ns, uid);
  int64_t succeeded = 0, active = 0, ready = 0;
  for (const auto& k : pod_keys) {
    const json& pod = *find(*pods, k);
    if (pod_succeeded(pod))
      ++succeeded;
    else
      ++active;
    if (pod_ready(pod)) ++ready;
  }
  auto nodes = node_names();
  for (int64_t want = std::min(parallelism, completions - succeeded); active < want; ++active) {
    json labels = {{"batch.kubernetes.io/controller-uid", uid}, {"batch.kubernetes.io/job-name", name},
                   {"controller-uid", uid}, {"job-name", name}};
    create_pod(info, job, name + "-" + name_suffix(), labels, nodes[0]);
  }
  std::string t = now();
  json old = job.value("status", json::object());
  json status = {{"startTime", old.value("startTime", t)},
                 {"ready", ready},
                 {"terminating", 0},
                 {"uncountedTerminatedPods", json::object()}};
  if (active > 0) status["active"] = active;
  if (succeeded > 0) status["succeeded"] = succeeded;
  if (succeeded >= completions) {
    status["completionTime"] = t;
    std::string msg = "Reached expected number of succeeded pods";
    json conditions = json::array();
    if (m_env.version_minor >= 31)
      conditions.push_back(condition("SuccessCriteriaMet", true, "CompletionsReached", msg, t));
    conditions.push_back(condition("Complete", true, "CompletionsReached", msg, t));
    for (auto& c : conditions) c["lastProbeTime"] = t;
    status["conditions"] = conditions;
  }
  json next = job;
  next["status"] = status;
  controller_write(info, key, next, k8s::Scope::status);
}

}  // namespace emco::sim::detail
