#pragma once
// Helpers shared by the kube client tests: the access to a test server, and
// the KubeError a call throws.

#include <functional>
#include <string>

#include "plugins/targets/kube/kube_client.hpp"

namespace emco::kube::test {

// Access to `server` as user "admin" of cluster `label` ("provider+cluster"),
// trusting `ca_pem` (empty: the system store).
inline ClusterAccess access_for(const std::string& server, const std::string& ca_pem = {},
                                const std::string& label = "p+edge") {
  ClusterAccess a;
  a.label = label;
  a.cluster = label.substr(label.find('+') + 1);
  a.user = "admin";
  a.server = server;
  a.ca_pem = ca_pem;
  return a;
}

// The KubeError `fn` throws; one of category other and status -1 when it
// throws none (tests then fail on what they check of it).
inline KubeError kube_error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const KubeError& e) {
    return e;
  }
  return KubeError(KubeErrorCategory::other, -1, "<no error>");
}

}  // namespace emco::kube::test
