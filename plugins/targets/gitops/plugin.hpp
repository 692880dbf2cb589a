#pragma once
// GitOps delivery (spec/gitops.md): clusters registered with spec.gitOps get
// their objects as commits to a git repository that the cluster's agent
// (Flux, Anthos Config Sync, Azure Arc) applies.

#include "core/lifecycle/runtime.hpp"

namespace emco::plugins::gitops {

// Registers the mechanism with the runtime (plugins/builtin.cpp). It must be
// asked before the direct one: a GitOps cluster that also has a kubeconfig
// is delivered by git and read back through the kubeconfig.
void install(lifecycle::Runtime& runtime);

}  // namespace emco::plugins::gitops
