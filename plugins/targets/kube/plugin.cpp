// The kube delivery plugin: the sync engine's Target over KubeTarget, shared
// per process, and the cluster-admin operations of level-1 logical clouds.

#include "plugins/targets/kube/plugin.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "plugins/targets/kube/kube_client.hpp"
#include "plugins/targets/kube/kube_target.hpp"
#include "plugins/targets/kube/kubeconfig.hpp"
#include "plugins/targets/kube/readiness.hpp"

namespace emco::plugins::kube {

using nlohmann::json;
using namespace emco::kube;
using namespace std::chrono;

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
      if (create_only && !is_crd(ref_of(obj).gvk)) m_target.client().create_if_absent(obj, m_target.ns());
      else m_target.apply(obj);
    });
  }
  bool remove(std::string_view manifest) override {
    bool removed = false;
    guard([&] { removed = m_target.remove(ref_of(one(manifest))); });
    return removed;
  }
  sync::ObjectState state(std::string_view manifest) override {
    sync::ObjectState s;
    guard([&] {
      json live = m_target.read(ref_of(one(manifest)));
      s.present = !live.is_null();
      auto r = evaluate_readiness(live);
      s.ready = s.present && r.ready;
      s.reason = r.reason;
    });
    return s;
  }
  std::string read(std::string_view manifest) override {
    std::string out;
    guard([&] {
      json live = m_target.read(ref_of(one(manifest)));
      if (!live.is_null()) out = live.dump();
    });
    return out;
  }
  std::string list(std::string_view api_version, std::string_view kind, std::string_view ns) override {
    std::string out;
    guard([&] { out = json(m_target.client().list(Gvk::of(api_version, std::string(kind)), std::string(ns))).dump(); });
    return out;
  }

private:
  static KubeTargetOptions options() {
    KubeTargetOptions o;
    o.probe_timeout = milliseconds(3000);
    o.client.request_timeout = milliseconds(30000);
    o.client.max_retry_wait = milliseconds(2000);
    return o;
  }
  // A resource that is not one readable object fails that step (a
  // TargetError, as the GitOps target reports it), like a rejected apply.
  static json one(std::string_view manifest) {
    std::vector<json> objects;
    try {
      objects = parse_manifests(manifest);
    } catch (const std::exception& e) {
      throw sync::TargetError(false, false, std::string("cannot read the resource: ") + e.what());
    }
    if (objects.size() != 1)
      throw sync::TargetError(false, false, "expected one object in a resource, found " + std::to_string(objects.size()));
    return objects[0];
  }
  // KubeError -> TargetError: transient ones (unreachable, 5xx, 429) are retried.
  template <class F>
  void guard(F&& f) {
    try {
      f();
    } catch (const KubeError& e) {
      throw sync::TargetError(e.transient(), e.category() == KubeErrorCategory::unreachable, e.message());
    }
  }

  KubeTarget m_target;
};

// KubeTargets live for the whole process: a TLS connection and discovery
// per cluster are what an event costs most, and every drive() of every
// context (update, its UpdateDelete, resumed work) reuses them. A changed
// kubeconfig (another key) gets a new one.
std::shared_ptr<sync::Target> shared_target(const std::string& cluster, const std::string& kubeconfig,
                                            const std::string& ns) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<sync::Target>> cache;
  std::string key = cluster + '\n' + ns + '\n' + kubeconfig;
  std::lock_guard lock(mutex);
  auto& slot = cache[key];
  if (!slot) slot = std::make_shared<KubeAdapter>(cluster, kubeconfig, ns);
  return slot;
}

class KubeDelivery : public lifecycle::DeliveryMechanism {
public:
  std::string name() const override { return "kube"; }
  bool delivers(const lifecycle::ClusterAccess& c) const override { return !c.kubeconfig.empty(); }
  lifecycle::ClusterTargets session(const lifecycle::DriveContext&, const lifecycle::ClusterTargets&) const override {
    return [](const lifecycle::ClusterAccess& c, const std::string& ns) {
      if (c.kubeconfig.empty())
        fail(ErrorKind::not_found, "cluster '" + c.id + "' has no kubeconfig",
             "attach one with the cluster's 'file:' (emco cluster update ... --kubeconfig FILE)");
      return shared_target(c.id, c.kubeconfig, ns);
    };
  }
};

// The reason DCM gives when it approves a cloud user's CSR (logical-clouds.md).
constexpr const char* k_approval_message = "Approved for Logical Cloud authentication";

class KubeClusterAdmin : public lifecycle::ClusterAdmin {
public:
  std::string issue_certificate(const std::string& cluster, const std::string& admin_kc, const std::string& csr,
                                steady_clock::time_point deadline, const std::atomic<bool>* interrupt) const override {
    KubeClientOptions ko;
    ko.request_timeout = milliseconds(30000);
    KubeClient client(resolve_access(parse_kubeconfig(admin_kc, "<cluster " + cluster + ">", ""), "", cluster), ko);
    client.approve_csr(csr, k_approval_message, "LogicalCloud");
    const Gvk gvk{"certificates.k8s.io", "v1", "CertificateSigningRequest"};
    milliseconds pause(20);
    for (;;) {
      json live = client.get(gvk, "", csr);
      if (live.is_null()) fail(ErrorKind::failed, "certificatesigningrequest '" + csr + "' disappeared");
      std::string cert = signed_certificate(live, "certificatesigningrequest '" + csr + "'");
      if (!cert.empty()) return cert;
      if (steady_clock::now() >= deadline || (interrupt && interrupt->load()))
        fail(ErrorKind::pending, "certificatesigningrequest '" + csr + "' has no certificate yet");
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, milliseconds(500));
    }
  }

  std::string user_kubeconfig(const std::string& ref, const std::string& user, const std::string& ns,
                              const std::string& admin_kubeconfig, const std::string& certificate_b64,
                              const std::string& key_pem) const override {
    auto admin = resolve_access(parse_kubeconfig(admin_kubeconfig, "<cluster " + ref + ">", ""), "", ref);
    json cluster = {{"server", admin.server}};
    if (!admin.ca_pem.empty()) cluster["certificate-authority-data"] = base64_encode(admin.ca_pem);
    if (!admin.tls_server_name.empty()) cluster["tls-server-name"] = admin.tls_server_name;
    const std::string context = user + "@" + ref;
    json kc = {
        {"apiVersion", "v1"},
        {"kind", "Config"},
        {"clusters", json::array({{{"name", ref}, {"cluster", cluster}}})},
        {"contexts", json::array({{{"name", context}, {"context", {{"cluster", ref}, {"namespace", ns}, {"user", user}}}}})},
        {"current-context", context},
        {"preferences", json::object()},
        {"users", json::array({{{"name", user},
                                {"user",
                                 {{"client-certificate-data", certificate_b64},
                                  {"client-key-data", base64_encode(key_pem)}}}}})}};
    return kc.dump(2) + "\n";
  }
};

}  // namespace

void install(lifecycle::Runtime& runtime) {
  auto delivery = std::make_unique<KubeDelivery>();
  runtime.direct = delivery.get();
  runtime.delivery.push_back(std::move(delivery));
  runtime.cluster_admin = std::make_unique<KubeClusterAdmin>();
  runtime.preparers["cluster"] = [](const std::string& data, const std::string& path, const std::string& label) {
    return prepare_kubeconfig(data, path, label);
  };
  runtime.plugins.push_back({.name = "kube",
                             .summary = "direct delivery to a cluster's API server with its kubeconfig (server-side apply)",
                             .services = {"rsync"},
                             .runs = true});
}

}  // namespace emco::plugins::kube
