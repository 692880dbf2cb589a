#pragma once
// ncm, the network configuration manager (ncm.hpp): virtual and provider networks of a cluster.

#include "core/lifecycle/runtime.hpp"

namespace emco::plugins::ncm {

// Registers the kinds, checks and network planner with the runtime (plugins/builtin.cpp).
void install(lifecycle::Runtime& runtime);

}  // namespace emco::plugins::ncm
