#pragma once
// GAC, the generic action controller (plugins/gac/gac.hpp), and its intent kinds.

#include "core/lifecycle/runtime.hpp"

namespace emco::plugins::gac {

// Registers the controller and its kinds with the runtime (plugins/builtin.cpp).
void install(lifecycle::Runtime& runtime);

}  // namespace emco::plugins::gac
