#pragma once
// ncm, the network configuration manager: virtual and provider networks of a cluster.

#include "core/lifecycle/runtime.hpp"

namespace emco::plugins::ncm {

// Registers the plugin with the runtime (plugins/builtin.cpp).
void install(lifecycle::Runtime& runtime);

}  // namespace emco::plugins::ncm
