#pragma once
// ovnaction: the network action controller (ovnaction.hpp) and its network
// controller intents with workload and interface intents.

#include "core/lifecycle/runtime.hpp"

namespace emco::plugins::ovnaction {

// Registers the controller and its kinds with the runtime (plugins/builtin.cpp).
void install(lifecycle::Runtime& runtime);

}  // namespace emco::plugins::ovnaction
