#pragma once
// dtc, the traffic controller (plugins/dtc/dtc.hpp), its sub-controllers and its
// intent kinds: traffic group intents with inbound server, client and
// access-point intents (spec/placement-and-actions.md §4–5).

#include "core/lifecycle/runtime.hpp"

namespace emco::plugins::dtc {

// Registers the controller and its kinds with the runtime (plugins/builtin.cpp).
void install(lifecycle::Runtime& runtime);

}  // namespace emco::plugins::dtc
