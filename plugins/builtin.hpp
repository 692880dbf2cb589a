#pragma once
// The composition root: the one place that names every plugin built into
// emco. The CLI (and tests, benches) ask for the runtime once and pass it
// down; core sees only the interfaces in core/lifecycle/runtime.hpp.

#include "core/lifecycle/runtime.hpp"

namespace emco::plugins {

// The runtime with every built-in plugin registered, built on first call (not
// thread-safe before that: call it at start-up). The first call also installs
// the plugins' intent kinds into core/resource's registry.
const lifecycle::Runtime& builtin_runtime();

}  // namespace emco::plugins
