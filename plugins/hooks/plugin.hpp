#pragma once
// Custom hooks: `.../deployment-intent-groups/DIG/emco-hooks/NAME`, an emco
// extension (upstream has no such intent; emcoctl would send it to the
// orchestrator, which answers 404). At its hook point (upstream tac's
// hookType values) it runs a local command (spec.exec) or makes an HTTP call
// (spec.http), time-limited (spec.timeout, a Go duration, default 60s), with
// the DIG, operation, revision, context id and per-cluster results in the
// command's environment (EMCO_*) or the call's JSON body; the command's
// output is kept in the operation's hook log ('emco dig history'). A failing
// blocking hook (the default) fails the operation: before delivery nothing
// changes, so CI can gate a rollout on a smoke test.

#include "core/lifecycle/runtime.hpp"

namespace emco::plugins::hooks {

// Registers the kind and the hooks with the runtime (plugins/builtin.cpp).
void install(lifecycle::Runtime& runtime);

}  // namespace emco::plugins::hooks
