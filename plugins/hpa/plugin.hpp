#pragma once
// hpa placement and action: hpa intents, their resource consumers and resource requirements.

#include "core/lifecycle/runtime.hpp"

namespace emco::plugins::hpa {

// Registers the controllers (placement "hpa-placement-controller-1", action
// "hpa-action-controller-1") and their kinds with the runtime (plugins/builtin.cpp).
void install(lifecycle::Runtime& runtime);

}  // namespace emco::plugins::hpa
