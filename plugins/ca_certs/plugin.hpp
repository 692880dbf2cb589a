#pragma once
// ca-certs: CA certificates of cluster providers and logical clouds with their cluster groups.

#include "core/lifecycle/runtime.hpp"

namespace emco::plugins::ca_certs {

// Registers the plugin with the runtime (plugins/builtin.cpp).
void install(lifecycle::Runtime& runtime);

}  // namespace emco::plugins::ca_certs
