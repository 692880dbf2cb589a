#pragma once
// The objects a logical cloud puts on a simulated cluster, for the suites
// that check them (tests/logical_cloud, tests/serve). Header-only.

#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/sim.hpp"

namespace emco::test {

// "Kind namespace/name" of every object on `cluster` of the kinds a logical
// cloud creates whose name or namespace starts with `prefix` (the cloud's name).
inline std::set<std::string> logical_cloud_objects(sim::Simulator& sim, const std::string& cluster,
                                                   const std::string& prefix) {
  static const std::vector<std::pair<std::string, std::string>> kinds = {
      {"v1", "Namespace"},
      {"v1", "ResourceQuota"},
      {"v1", "ServiceAccount"},
      {"certificates.k8s.io/v1", "CertificateSigningRequest"},
      {"rbac.authorization.k8s.io/v1", "Role"},
      {"rbac.authorization.k8s.io/v1", "RoleBinding"},
      {"rbac.authorization.k8s.io/v1", "ClusterRole"},
      {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding"}};
  std::set<std::string> out;
  for (const auto& [api, kind] : kinds)
    for (const auto& o : sim.list(cluster, api, kind)) {
      const std::string name = o["metadata"].value("name", ""), ns = o["metadata"].value("namespace", "");
      if (name.rfind(prefix, 0) == 0 || ns.rfind(prefix, 0) == 0) out.insert(kind + " " + ns + "/" + name);
    }
  return out;
}

}  // namespace emco::test
