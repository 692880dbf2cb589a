#pragma once
// Readiness of a live Kubernetes object, per kind (the Helm-like rules of
// spec/status.md "ready"):
//   Pod          condition Ready=True; a pod with a `job-name` label: phase Succeeded
//   Deployment   paused, or readyReplicas >= replicas - maxUnavailable, status
//                observed the current generation
//   StatefulSet  OnDelete, or ready and updated replicas cover the rollout
//                (replicas - partition updated, replicas ready)
//   DaemonSet    OnDelete, or all pods updated and numberReady >= desired - maxUnavailable
//   Job          succeeded >= completions and failed <= backoffLimit
//   Service      has a clusterIP (ExternalName: always); LoadBalancer also
//                needs an ingress or an external IP
//   anything else (ConfigMap, CertificateSigningRequest, CRs ...): ready when present

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace emco::kube {

struct Readiness {
  bool ready = false;
  std::string reason;  // why not ready ("1/3 replicas ready"), or "" when ready
};

// `live` is the object as the API returns it; a null json is "not present".
Readiness evaluate_readiness(const nlohmann::json& live);

}  // namespace emco::kube
