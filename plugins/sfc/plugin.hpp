#pragma once
// sfc and sfcclient (sfc.hpp): network chains with links, client selectors and provider networks, and sfc client intents.

#include "core/lifecycle/runtime.hpp"

namespace emco::plugins::sfc {

// Registers the controllers and their kinds with the runtime (plugins/builtin.cpp).
void install(lifecycle::Runtime& runtime);

}  // namespace emco::plugins::sfc
