#pragma once
// ovnaction: network controller intents with workload and interface intents.

#include "core/lifecycle/runtime.hpp"

namespace emco::plugins::ovnaction {

// Registers the plugin with the runtime (plugins/builtin.cpp).
void install(lifecycle::Runtime& runtime);

}  // namespace emco::plugins::ovnaction
