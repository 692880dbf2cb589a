// The sync engine's Targets: direct delivery to a cluster with its
// kubeconfig (KubeTarget: server-side apply, CRDs create-if-absent), and
// delivery through git for GitOps clusters (plugins/targets/gitops).

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/lifecycle/credentials.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/store/store_impl.hpp"
#include "core/sync/queue.hpp"
#include "core/util/error.hpp"
#include "plugins/targets/gitops/gitops_target.hpp"
#include "plugins/targets/kube/kube_target.hpp"

namespace emco::lifecycle {

using nlohmann::json;

namespace {

// Charts render unset values as null ("replicas: {{ .Values.x }}"); the API
// server treats a null field of an applied configuration as unset, so leave
// such fields out of what is sent.
void prune_nulls(json& j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (it->is_null()) {
        it = j.erase(it);
      } else {
        prune_nulls(*it);
        ++it;
      }
    }
  } else if (j.is_array()) {
    for (auto& e : j) prune_nulls(e);
  }
}

class KubeAdapter : public sync::Target {
public:
  KubeAdapter(const std::string& label, const std::string& kubeconfig, const std::string& ns)
      : m_target(label, kubeconfig, ns.empty() ? "default" : ns, options()) {}

  void probe() override {
    auto p = m_target.probe();
    if (!p.reachable) throw sync::TargetError(true, true, p.message);
  }
  void apply(std::string_view manifest, bool create_only) override {
    guard([&] {
      json obj = one(manifest);
      prune_nulls(obj);
      // CRDs are created if absent (and waited for) by KubeTarget itself.
      if (create_only && !kube::is_crd(kube::ref_of(obj).gvk)) m_target.client().create_if_absent(obj, m_target.ns());
      else m_target.apply(obj);
    });
  }
  bool remove(std::string_view manifest) override {
    bool removed = false;
    guard([&] { removed = m_target.remove(kube::ref_of(one(manifest))); });
    return removed;
  }
  sync::ObjectState state(std::string_view manifest) override {
    sync::ObjectState s;
    guard([&] {
      json live = m_target.read(kube::ref_of(one(manifest)));
      s.present = !live.is_null();
      auto r = kube::evaluate_readiness(live);
      s.ready = s.present && r.ready;
      s.reason = r.reason;
    });
    return s;
  }
  std::string read(std::string_view manifest) override {
    std::string out;
    guard([&] {
      json live = m_target.read(kube::ref_of(one(manifest)));
      if (!live.is_null()) out = live.dump();
    });
    return out;
  }

private:
  static kube::KubeTargetOptions options() {
    kube::KubeTargetOptions o;
    o.probe_timeout = std::chrono::milliseconds(3000);
    o.client.request_timeout = std::chrono::milliseconds(30000);
    o.client.max_retry_wait = std::chrono::milliseconds(2000);
    return o;
  }
  static json one(std::string_view manifest) {
    auto objects = kube::parse_manifests(manifest);
    if (objects.size() != 1)
      fail(ErrorKind::invalid, "expected one object in a resource, found " + std::to_string(objects.size()));
    return objects[0];
  }
  // KubeError -> TargetError: transient ones (unreachable, 5xx, 429) are retried.
  template <class F>
  void guard(F&& f) {
    try {
      f();
    } catch (const kube::KubeError& e) {
      throw sync::TargetError(e.transient(), e.category() == kube::KubeErrorCategory::unreachable, e.message());
    }
  }

  kube::KubeTarget m_target;
};

// KubeTargets live for the whole process: a TLS connection and discovery
// per cluster are what an event costs most, and every drive() of every
// context (update, its UpdateDelete, resumed work) reuses them. A changed
// kubeconfig (another key) gets a new one.
std::shared_ptr<sync::Target> shared_kube_target(const std::string& cluster, const std::string& kubeconfig,
                                                 const std::string& ns) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<sync::Target>> cache;
  std::string key = cluster + '\n' + ns + '\n' + kubeconfig;
  std::lock_guard lock(mutex);
  auto& slot = cache[key];
  if (!slot) slot = std::make_shared<KubeAdapter>(cluster, kubeconfig, ns);
  return slot;
}

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
  return kv;
}

// How each cluster of the workspace is delivered to.
struct ClusterAccess {
  std::string kubeconfig;                        // "" when none
  std::optional<gitops::GitOpsCluster> gitops;   // set for GitOps clusters
  std::string gitops_error;                      // a registration that cannot be used (why)
};

std::map<std::string, ClusterAccess> cluster_access(store::Store& st) {
  std::map<std::string, ClusterAccess> out;
  // Fleets share a few sync objects: each is read, and each registration
  // (provider, type, objects) checked, once.
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> kv_cache;
  auto kv_of = [&](const std::string& provider, const std::string& name,
                   const std::string& cluster_id) -> const std::map<std::string, std::string>& {
    auto key = std::make_pair(provider, name);
    auto it = kv_cache.find(key);
    if (it == kv_cache.end()) it = kv_cache.emplace(key, sync_object_kv(st, provider, name, cluster_id)).first;
    return it->second;
  };
  std::map<std::string, gitops::GitOpsCluster> registrations;
  for (const auto& c : st.list_with_contents(resource::kind("cluster"))) {
    auto provider = c.key.get("clusterProvider");
    auto name = c.key.get("cluster");
    if (!provider || !name) continue;
    const std::string id = *provider + "+" + *name;
    ClusterAccess& access = out[id];
    for (const auto& f : c.contents)
      if (f.name == "file") access.kubeconfig = f.data;
    json data = json::parse(c.data, nullptr, false);
    if (!data.is_object()) continue;
    json spec = data.value("spec", json::object());
    if (!spec.is_object() || !spec.contains("gitOps") || !spec["gitOps"].is_object()) continue;
    const json& g = spec["gitOps"];
    try {
      std::string type = g.value("gitOpsType", "");
      std::string ref = g.value("gitOpsReferenceObject", "");
      std::string res = g.value("gitOpsResourceObject", "");
      const std::string shared = *provider + '\n' + type + '\n' + ref + '\n' + res;
      auto known = registrations.find(shared);
      if (known != registrations.end()) {
        access.gitops = known->second;
        access.gitops->cluster = *name;
        continue;
      }
      const auto& ref_kv = kv_of(*provider, ref, id);
      const auto& res_kv = res.empty() || res == ref ? ref_kv : kv_of(*provider, res, id);
      access.gitops = gitops::registered_cluster(*provider, *name, type, ref, ref_kv, res, res_kv);
      registrations.emplace(shared, *access.gitops);
    } catch (const Error& e) {
      access.gitops_error = e.message();
    }
  }
  return out;
}

// Where GitDelivery keeps its bare caches: the workspace's .emco/git/.
std::filesystem::path git_cache_root(store::Store& st) {
  std::string db = st.impl().db.getFilename();
  if (db.empty() || db == ":memory:")
    return std::filesystem::temp_directory_path() / ("emco-git-cache-" + std::to_string(::getpid()));
  return std::filesystem::path(db).parent_path() / "git";
}

std::string meta_of(const appcontext::Header& h, const char* name) {
  auto it = h.meta.find(name);
  return it == h.meta.end() ? std::string() : it->second;
}

// The operation this process is delivering for the owner of `ctx`, read when
// a git batch commits: the owner's context whose queue head is running
// (status = the event's "current" state). The layout names the status
// context (stable across updates), so an update rewrites files in place.
gitops::GitOpsOperation describe_operation(store::Store& st, const std::string& ctx) {
  namespace ac = emco::appcontext;
  auto head = ac::header(st, ctx);
  std::vector<std::string> candidates = {ctx};
  for (const auto& id : ac::list(st, resource::Key::parse(head.owner_key)))
    if (id != ctx) candidates.push_back(id);
  for (const auto& id : candidates) {
    auto entry = ac::next_pending(st, id);
    if (!entry) continue;
    auto h = ac::header(st, id);
    const auto& t = sync::transition(entry->event);
    if (h.status != t.current) continue;
    gitops::GitOpsOperation op;
    op.kind = entry->event == ac::event::instantiate ? gitops::GitOpsOperationKind::instantiate
              : entry->event == ac::event::terminate ? gitops::GitOpsOperationKind::terminate
                                                     : gitops::GitOpsOperationKind::update;
    op.project = meta_of(h, "Project");
    op.composite_app = meta_of(h, "CompositeApp");
    op.composite_app_version = meta_of(h, "Version");
    op.dig = meta_of(h, "DeploymentIntentGroup");
    op.revision = h.revision > 0 ? static_cast<long>(h.revision) : 1;
    op.context.app_context_id = h.status_context.empty() ? h.id : h.status_context;
    std::string ns = meta_of(h, "Namespace");
    if (!ns.empty()) op.context.namespace_name = ns;
    std::string level = meta_of(h, "Level");
    if (!level.empty()) op.context.level = level;
    op.context.logical_cloud = meta_of(h, "LogicalCloud");
    // Set on a level-1 logical cloud's own context (gitops.md: its Flux
    // Kustomization lives in flux-system, with no GitRepository).
    op.context.logical_cloud_namespace = meta_of(h, "LogicalCloudNamespace");
    if (entry->event == ac::event::update && ac::exists(st, entry->ucid)) {
      // Clusters the update leaves entirely: their Flux objects go too.
      for (auto& c : ac::departed_clusters(st, entry->ucid, id)) op.departed.insert(std::move(c));
    }
    return op;
  }
  fail(ErrorKind::failed, "no operation of context " + ctx + " is being delivered");
}

}  // namespace

sync::TargetFactory kube_targets(store::Store& st) {
  auto configs = std::make_shared<std::map<std::string, std::string>>();
  for (auto& [id, access] : cluster_access(st))
    if (!access.kubeconfig.empty()) (*configs)[id] = access.kubeconfig;
  return [configs](const std::string& cluster, const std::string& ns) -> std::shared_ptr<sync::Target> {
    auto it = configs->find(cluster);
    if (it == configs->end())
      fail(ErrorKind::not_found, "cluster '" + cluster + "' has no kubeconfig",
           "attach one with the cluster's 'file:' (emco cluster update ... --kubeconfig FILE)");
    return shared_kube_target(cluster, it->second, ns);
  };
}

sync::TargetFactory cluster_targets(store::Store& st, const std::string& ctx) {
  auto h = appcontext::header(st, ctx);
  auto meta = [&](const char* name) { return meta_of(h, name); };
  auto access = std::make_shared<std::map<std::string, ClusterAccess>>(cluster_access(st));
  bool any_gitops = false;
  for (const auto& [id, a] : *access) any_gitops = any_gitops || a.gitops || !a.gitops_error.empty();
  std::shared_ptr<gitops::GitOpsTargets> git;
  if (any_gitops)
    git = std::make_shared<gitops::GitOpsTargets>(git_cache_root(st),
                                                  [&st, ctx] { return describe_operation(st, ctx); });
  auto by_registration = [access, git](const std::string& cluster, const std::string& ns) -> std::shared_ptr<sync::Target> {
    auto it = access->find(cluster);
    if (it != access->end() && !it->second.gitops_error.empty())
      fail(ErrorKind::invalid, "GitOps cluster '" + cluster + "' cannot be delivered to: " + it->second.gitops_error);
    if (it != access->end() && it->second.gitops) {
      // GitOps and a kubeconfig: deliver by git, read back through the kubeconfig.
      std::shared_ptr<sync::Target> reader;
      if (!it->second.kubeconfig.empty()) reader = shared_kube_target(cluster, it->second.kubeconfig, ns);
      return git->target(*it->second.gitops, reader);
    }
    if (it == access->end() || it->second.kubeconfig.empty())
      fail(ErrorKind::not_found, "cluster '" + cluster + "' has no kubeconfig",
           "attach one with the cluster's 'file:' (emco cluster update ... --kubeconfig FILE), or register it for GitOps");
    return shared_kube_target(cluster, it->second.kubeconfig, ns);
  };
  if (h.owner_kind != "deploymentIntentGroup" || meta("Level") != "1") return by_registration;

  resource::Key lc;
  lc.parts = {{"project", meta("Project")}, {"logicalCloud", meta("LogicalCloud")}};
  auto configs = std::make_shared<std::map<std::string, std::string>>();
  for (const auto& cluster : tenant_clusters(st, lc)) (*configs)[cluster] = *tenant_kubeconfig(st, lc, cluster);
  return [configs, access, by_registration, lc_name = meta("LogicalCloud")](
             const std::string& cluster, const std::string& ns) -> std::shared_ptr<sync::Target> {
    // A GitOps cluster of the cloud gets its objects by git, with the
    // cluster's own GitOps access: no user credentials exist for it
    // (logical-clouds.md); the cluster's GitOps agent applies them.
    auto a = access->find(cluster);
    if (a != access->end() && (a->second.gitops || !a->second.gitops_error.empty())) return by_registration(cluster, ns);
    auto it = configs->find(cluster);
    if (it == configs->end())
      fail(ErrorKind::not_found, "logical cloud '" + lc_name + "' has no credentials for cluster '" + cluster + "'",
           "instantiate the logical cloud (or update it after adding the cluster reference)");
    return shared_kube_target(cluster, it->second, ns);
  };
}

}  // namespace emco::lifecycle
