#pragma once
// Direct delivery to a cluster's API server with its kubeconfig: the
// runtime's direct delivery mechanism (server-side apply, CRDs created if
// absent, read-back for status), the cluster-admin operations logical clouds
// need (CSR approval, user kubeconfigs), and the kubeconfig preparer that
// checks and flattens a cluster's kubeconfig when it is registered.

#include "core/lifecycle/runtime.hpp"

namespace emco::plugins::kube {

// Registers the mechanism (as the runtime's direct one), the cluster admin
// and the preparer of cluster kubeconfigs (plugins/builtin.cpp).
void install(lifecycle::Runtime& runtime);

}  // namespace emco::plugins::kube
