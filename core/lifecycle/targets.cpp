// The sync engine's Target over KubeTarget: direct delivery to a cluster with
// its kubeconfig (server-side apply, CRDs create-if-absent).

#include <map>

#include <nlohmann/json.hpp>

#include "core/lifecycle/credentials.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/util/error.hpp"
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

}  // namespace

sync::TargetFactory kube_targets(store::Store& st) {
  auto configs = std::make_shared<std::map<std::string, std::string>>();
  for (const auto& c : st.list(resource::kind("cluster"))) {
    auto provider = c.key.get("clusterProvider");
    auto name = c.key.get("cluster");
    if (!provider || !name) continue;
    // list() may leave attached contents out: read each cluster in full.
    auto full = c.contents.empty() ? st.get(c.key) : std::optional<store::Resource>(c);
    if (!full) continue;
    for (const auto& f : full->contents)
      if (f.name == "file") (*configs)[*provider + "+" + *name] = f.data;
  }
  return [configs](const std::string& cluster, const std::string& ns) -> std::shared_ptr<sync::Target> {
    auto it = configs->find(cluster);
    if (it == configs->end() || it->second.empty())
      fail(ErrorKind::not_found, "cluster '" + cluster + "' has no kubeconfig",
           "attach one with the cluster's 'file:' (emco cluster update ... --kubeconfig FILE)");
    return std::make_shared<KubeAdapter>(cluster, it->second, ns);
  };
}

sync::TargetFactory cluster_targets(store::Store& st, const std::string& ctx) {
  auto h = appcontext::header(st, ctx);
  auto meta = [&](const char* name) {
    auto it = h.meta.find(name);
    return it == h.meta.end() ? std::string() : it->second;
  };
  if (h.owner_kind != "deploymentIntentGroup" || meta("Level") != "1") return kube_targets(st);
  resource::Key lc;
  lc.parts = {{"project", meta("Project")}, {"logicalCloud", meta("LogicalCloud")}};
  auto configs = std::make_shared<std::map<std::string, std::string>>();
  for (const auto& cluster : tenant_clusters(st, lc)) (*configs)[cluster] = *tenant_kubeconfig(st, lc, cluster);
  return [configs, lc_name = meta("LogicalCloud")](const std::string& cluster,
                                                   const std::string& ns) -> std::shared_ptr<sync::Target> {
    auto it = configs->find(cluster);
    if (it == configs->end())
      fail(ErrorKind::not_found, "logical cloud '" + lc_name + "' has no credentials for cluster '" + cluster + "'",
           "instantiate the logical cloud (or update it after adding the cluster reference)");
    return std::make_shared<KubeAdapter>(cluster, it->second, ns);
  };
}

}  // namespace emco::lifecycle
