#pragma once
// KubeTarget: what the sync engine (core/sync) uses to deliver to one
// cluster directly. This header is the proposal for the engine's interface.
//
// One KubeTarget per cluster, built from the cluster's kubeconfig text and
// the namespace objects without one go to (the logical cloud's namespace).
// It owns a KubeClient (keep-alive connections, cached discovery). Methods
// may be called from several threads; the intended use is one worker per
// cluster applying resources in order.
//
// Delivery rules (spec/placement-and-actions.md §6):
// - apply = server-side apply, fieldManager=emco, force=true;
// - CustomResourceDefinitions: create-if-absent (option), then wait until
//   Established and rediscover, so custom resources that follow find their kind;
// - a namespaced object without namespace goes to the target namespace, and a
//   namespace that does not exist yet is created first;
// - apply_all orders Namespaces, then CRDs, then the rest (stable).
// Failures throw KubeError (see kube_client.hpp): category() tells the engine
// whether to retry (transient()) or to mark the resource Failed.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "plugins/targets/kube/kube_client.hpp"
#include "plugins/targets/kube/readiness.hpp"

namespace emco::kube {

struct ObjectRef {
  Gvk gvk;
  std::string ns;  // empty: the target namespace (ignored for cluster-scoped kinds)
  std::string name;
};

enum class ApplyAction {
  created,     // the object did not exist
  configured,  // it existed and was (possibly no-op) applied
  exists,      // create-if-absent found it and left it alone
};

struct ApplyResult {
  ObjectRef ref;  // namespace filled in when namespaced
  ApplyAction action = ApplyAction::configured;
  std::string resource_version;
  std::string uid;
  long long generation = 0;
};

struct ProbeResult {
  bool reachable = false;
  std::string version;  // gitVersion, e.g. "v1.32.0", when /version answered
  std::chrono::milliseconds latency{0};
  std::optional<KubeErrorCategory> error;
  std::string message;  // the error message when !reachable or /version failed
};

struct KubeTargetOptions {
  std::string context;  // kubeconfig context; empty: current-context
  KubeClientOptions client;
  bool crd_create_if_absent = true;  // false: CRDs are server-side applied like the rest
  std::chrono::milliseconds probe_timeout{3000};
};

class KubeTarget {
public:
  // `label` names the cluster in every error ("provider+cluster"). Throws
  // Error(invalid) when the kubeconfig cannot be used (see resolve_access).
  KubeTarget(const std::string& label, const std::string& kubeconfig_text, std::string ns,
             KubeTargetOptions options = {});
  // From resolved access, with an injectable transport (tests).
  KubeTarget(ClusterAccess access, std::string ns, KubeTargetOptions options = {}, HttpClientFactory factory = {});

  // GET /version within options.probe_timeout. Never throws for cluster problems.
  ProbeResult probe();

  // Applies one object given as YAML or JSON text (one document).
  ApplyResult apply(std::string_view manifest);
  ApplyResult apply(const nlohmann::json& object);
  // Applies every document of a multi-document YAML (or JSON) text in
  // apply_order(); stops at the first failure (the exception).
  std::vector<ApplyResult> apply_all(std::string_view manifests);

  // Deletes; false when the object did not exist.
  bool remove(const ObjectRef& ref, Propagation propagation = Propagation::background);
  // The live object, or a null json when absent.
  nlohmann::json read(const ObjectRef& ref);
  // Readiness of the live object (spec/status.md rules); "not present" when absent.
  Readiness ready(const ObjectRef& ref);

  KubeClient& client() { return m_client; }
  const std::string& ns() const { return m_ns; }

private:
  std::string effective_ns(const ObjectRef& ref) const;

  KubeTargetOptions m_options;
  KubeClient m_client;
  std::string m_ns;
};

// Splits multi-document YAML (or a JSON object) into objects; empty documents
// are skipped and a `kind: List` (or any *List with items) is expanded.
// Throws Error(invalid) naming the document number on bad YAML.
std::vector<nlohmann::json> parse_manifests(std::string_view text);

// Indices of `objects` in apply order: Namespaces, then
// CustomResourceDefinitions, then everything else, each group in input order.
std::vector<size_t> apply_order(const std::vector<nlohmann::json>& objects);

// The reference of an object's apiVersion/kind/metadata.
ObjectRef ref_of(const nlohmann::json& object);

bool is_crd(const Gvk& gvk);

}  // namespace emco::kube
