// The sync engine's Targets for a context: every cluster's registration read
// from the workspace (ClusterAccess) and handed to the runtime's delivery
// mechanisms (plugins/targets: kube, GitOps), with a level-1 logical cloud's
// user kubeconfig in place of the cluster's own where the mechanism reaches
// the API server directly.

#include <map>
#include <memory>
#include <mutex>

#include <nlohmann/json.hpp>

#include "core/lifecycle/credentials.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/store/vault.hpp"
#include "core/sync/queue.hpp"
#include "core/util/error.hpp"

namespace emco::lifecycle {

using nlohmann::json;

namespace {

std::string kv_value(const json& entry) {
  // kv entries are single-key maps of strings.
  if (!entry.is_object() || entry.size() != 1) return {};
  const json& v = entry.begin().value();
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::map<std::string, std::string> sync_object_kv(store::Store& st, const std::string& provider,
                                                  const std::string& name, const std::string& cluster_id) {
  resource::Key key;
  key.parts = {{"clusterProvider", provider}, {"clusterSyncObject", name}};
  auto r = st.get(key);
  if (!r)
    fail(ErrorKind::not_found, "cluster '" + cluster_id + "' names cluster sync object '" + name + "', which does not exist",
         "create it under cluster provider '" + provider + "' (emco apply -f)");
  std::map<std::string, std::string> kv;
  json data = json::parse(r->data, nullptr, false);
  if (data.is_object() && data.contains("spec") && data["spec"].contains("kv") && data["spec"]["kv"].is_array())
    for (const auto& entry : data["spec"]["kv"])
      if (entry.is_object() && entry.size() == 1) kv[entry.begin().key()] = kv_value(entry);
  for (const auto& [field, value] : kv)
    if (store::is_sealed(value)) st.fail_sealed(value, "kv '" + field + "' of " + store::describe(*r->kind, key));
  return kv;
}


// How each cluster of the workspace is reached.
std::map<std::string, ClusterAccess> cluster_access(store::Store& st) {
  std::map<std::string, ClusterAccess> out;
  // Fleets share a few sync objects: each is read once.
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> kv_cache;
  auto kv_of = [&](const std::string& provider, const std::string& name,
                   const std::string& cluster_id) -> const std::map<std::string, std::string>& {
    auto key = std::make_pair(provider, name);
    auto it = kv_cache.find(key);
    if (it == kv_cache.end()) it = kv_cache.emplace(key, sync_object_kv(st, provider, name, cluster_id)).first;
    return it->second;
  };
  for (const auto& c : st.list_with_contents(resource::kind("cluster"))) {
    auto provider = c.key.get("clusterProvider");
    auto name = c.key.get("cluster");
    if (!provider || !name) continue;
    const std::string id = *provider + "+" + *name;
    ClusterAccess& access = out[id];
    access.id = id;
    access.provider = *provider;
    access.cluster = *name;
    for (const auto& f : c.contents) {
      if (f.name != "file") continue;
      if (f.sealed) st.fail_sealed(f.data, "the kubeconfig of " + store::describe(*c.kind, c.key));
      access.kubeconfig = f.data;
    }
    json data = json::parse(c.data, nullptr, false);
    if (!data.is_object()) continue;
    json spec = data.value("spec", json::object());
    if (!spec.is_object() || !spec.contains("gitOps") || !spec["gitOps"].is_object()) continue;
    const json& g = spec["gitOps"];
    access.gitops_type = g.value("gitOpsType", "");
    access.gitops_reference_object = g.value("gitOpsReferenceObject", "");
    access.gitops_resource_object = g.value("gitOpsResourceObject", "");
    try {
      access.reference_kv = kv_of(*provider, access.gitops_reference_object, id);
      const std::string& res = access.gitops_resource_object;
      access.resource_kv =
          res.empty() || res == access.gitops_reference_object ? access.reference_kv : kv_of(*provider, res, id);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::workspace) throw;  // a sealed value: the whole workspace lacks its key
      access.error = e.message();
    }
  }
  return out;
}

std::string meta_of(const appcontext::Header& h, const char* name) {
  auto it = h.meta.find(name);
  return it == h.meta.end() ? std::string() : it->second;
}

// An operation of kind `kind` on context `h`.
OperationInfo describe(const appcontext::Header& h, OperationInfo::Kind kind) {
  OperationInfo op;
  op.kind = kind;
  op.project = meta_of(h, "Project");
  op.composite_app = meta_of(h, "CompositeApp");
  op.composite_app_version = meta_of(h, "Version");
  op.dig = meta_of(h, "DeploymentIntentGroup");
  op.revision = h.revision > 0 ? static_cast<long>(h.revision) : 1;
  op.status_context = h.status_context.empty() ? h.id : h.status_context;
  op.ns = meta_of(h, "Namespace");
  op.level = meta_of(h, "Level");
  op.logical_cloud = meta_of(h, "LogicalCloud");
  // Set on a level-1 logical cloud's own context (gitops.md: its Flux
  // Kustomization lives in flux-system, with no GitRepository).
  op.logical_cloud_namespace = meta_of(h, "LogicalCloudNamespace");
  return op;
}

// The operation this process is delivering for the owner of `ctx`, read when
// a batch commits: the owner's context whose queue head is running (status =
// the event's "current" state). It names the status context (stable across
// updates), so an update rewrites files in place.
// `at_rest`: nothing is being delivered (drift check and repair): `ctx`
// itself, described as an update to its revision.
OperationInfo describe_operation(store::Store& st, const std::string& ctx, bool at_rest) {
  namespace ac = emco::appcontext;
  auto head = ac::header(st, ctx);
  std::vector<std::string> candidates = {ctx};
  if (at_rest) candidates.clear();
  for (const auto& id : ac::list(st, resource::Key::parse(head.owner_key)))
    if (id != ctx) candidates.push_back(id);
  for (const auto& id : candidates) {
    auto entry = ac::next_pending(st, id);
    if (!entry) continue;
    auto h = ac::header(st, id);
    const auto& t = sync::transition(entry->event);
    if (h.status != t.current) continue;
    OperationInfo op = describe(h, entry->event == ac::event::instantiate ? OperationInfo::Kind::instantiate
                                   : entry->event == ac::event::terminate ? OperationInfo::Kind::terminate
                                                                          : OperationInfo::Kind::update);
    if (entry->event == ac::event::update && ac::exists(st, entry->ucid)) {
      // Clusters the update leaves entirely: their Flux objects go too.
      for (auto& c : ac::departed_clusters(st, entry->ucid, id)) op.departed.insert(std::move(c));
    }
    return op;
  }
  if (at_rest) return describe(head, OperationInfo::Kind::update);
  fail(ErrorKind::failed, "no operation of context " + ctx + " is being delivered");
}

const Runtime& runtime_of(const Runtime* runtime) {
  if (!runtime || !runtime->direct) fail(ErrorKind::internal, "delivery needs the runtime's delivery mechanisms");
  return *runtime;
}

// The mechanism delivering a cluster: the first of the runtime's that does.
const DeliveryMechanism* mechanism_for(const Runtime& rt, const ClusterAccess& c) {
  for (const auto& m : rt.delivery)
    if (m->delivers(c)) return m.get();
  return nullptr;
}

// One drive's targets: a session per mechanism, opened when a cluster first needs it.
class Drive {
public:
  Drive(const Runtime& rt, DriveContext context) : m_rt(rt), m_context(std::move(context)) {}

  std::shared_ptr<sync::Target> target(const ClusterAccess& c, const std::string& ns) {
    const DeliveryMechanism* m = mechanism_for(m_rt, c);
    if (!m)
      fail(ErrorKind::not_found, "cluster '" + c.id + "' has no kubeconfig",
           "attach one with the cluster's 'file:' (emco cluster update ... --kubeconfig FILE), or register it for GitOps");
    ClusterTargets session;
    {
      std::lock_guard lock(m_mutex);
      auto& slot = m_sessions[m];
      if (!slot) slot = m->session(m_context, m == m_rt.direct ? ClusterTargets{} : direct());
      session = slot;
    }
    return session(c, ns);
  }

private:
  ClusterTargets direct() {
    auto& slot = m_sessions[m_rt.direct];
    if (!slot) slot = m_rt.direct->session(m_context, {});
    return slot;
  }

  const Runtime& m_rt;
  DriveContext m_context;
  std::mutex m_mutex;
  std::map<const DeliveryMechanism*, ClusterTargets> m_sessions;
};

}  // namespace

sync::TargetFactory live_targets(store::Store& st, const Runtime* runtime) {
  // Read at the first call: a plan that reads no cluster (no hpa intents)
  // costs nothing.
  struct Reach {
    std::once_flag once;
    std::map<std::string, ClusterAccess> access;
    ClusterTargets direct;
  };
  auto reach = std::make_shared<Reach>();
  return [reach, &st, runtime](const std::string& cluster, const std::string& ns) -> std::shared_ptr<sync::Target> {
    std::call_once(reach->once, [&] {
      const Runtime& rt = runtime_of(runtime);
      for (auto& [id, a] : cluster_access(st))
        if (!a.kubeconfig.empty()) reach->access[id] = std::move(a);
      reach->direct = rt.direct->session(DriveContext{st.data_dir(), {}}, {});
    });
    auto it = reach->access.find(cluster);
    if (it == reach->access.end())
      fail(ErrorKind::not_found, "cluster '" + cluster + "' has no kubeconfig",
           "attach one with the cluster's 'file:' (emco cluster update ... --kubeconfig FILE)");
    return reach->direct(it->second, ns);
  };
}

sync::TargetFactory cluster_targets(store::Store& st, const std::string& ctx, const Runtime* runtime, bool at_rest) {
  const Runtime& rt = runtime_of(runtime);
  auto h = appcontext::header(st, ctx);
  auto meta = [&](const char* name) { return meta_of(h, name); };
  auto access = std::make_shared<std::map<std::string, ClusterAccess>>(cluster_access(st));
  std::shared_ptr<Drive> drive = std::make_shared<Drive>(rt, DriveContext{st.data_dir(), [&st, ctx, at_rest] { return describe_operation(st, ctx, at_rest); }});
  auto by_registration = [access, drive](const std::string& cluster, const std::string& ns) -> std::shared_ptr<sync::Target> {
    auto it = access->find(cluster);
    if (it == access->end()) {
      ClusterAccess unknown;
      unknown.id = cluster;
      return drive->target(unknown, ns);
    }
    return drive->target(it->second, ns);
  };
  if (h.owner_kind != "deploymentIntentGroup" || meta("Level") != "1") return by_registration;

  // A deployment into a standard or privileged logical cloud runs with the
  // cloud user's kubeconfig where delivery reaches the API server directly.
  // A cluster another mechanism delivers (GitOps) keeps its own access: no
  // user credentials exist for it (logical-clouds.md); its agent applies them.
  resource::Key lc;
  lc.parts = {{"project", meta("Project")}, {"logicalCloud", meta("LogicalCloud")}};
  auto configs = std::make_shared<std::map<std::string, std::string>>();
  for (const auto& cluster : tenant_clusters(st, lc)) (*configs)[cluster] = *tenant_kubeconfig(st, lc, cluster);
  return [configs, access, drive, by_registration, direct = rt.direct, &rt, lc_name = meta("LogicalCloud")](
             const std::string& cluster, const std::string& ns) -> std::shared_ptr<sync::Target> {
    auto a = access->find(cluster);
    if (a != access->end()) {
      const DeliveryMechanism* m = mechanism_for(rt, a->second);
      if (m && m != direct) return by_registration(cluster, ns);
    }
    auto it = configs->find(cluster);
    if (it == configs->end())
      fail(ErrorKind::not_found, "logical cloud '" + lc_name + "' has no credentials for cluster '" + cluster + "'",
           "instantiate the logical cloud (or update it after adding the cluster reference)");
    ClusterAccess tenant = a != access->end() ? a->second : ClusterAccess{};
    tenant.id = cluster;
    tenant.kubeconfig = it->second;
    return drive->target(tenant, ns);
  };
}

}  // namespace emco::lifecycle
