#pragma once
// Rollout strategies: `.../deployment-intent-groups/DIG/emco-rollout-strategies/NAME`,
// an emco extension (upstream has no such intent; emcoctl would send it to the
// orchestrator, which answers 404). A DIG with one is instantiated and
// updated in waves (core/lifecycle/rollout.hpp):
//   spec:
//     waves: 10                # N waves of equal size, or
//     waveSize: 10%            # waves of this many clusters (a count or a percentage), or
//     groups: [canary, eu]     # one wave per cluster label, in this order; the other clusters last
//     maxConcurrency: 25%      # no wave holds more clusters (OCM)
//     maxUnavailable: 5        # clusters not ready at once (Fleet): no wave holds more
//     maxFailures: 0           # failed clusters tolerated before the rollout pauses
//     minSuccessTime: 30s      # a wave's gate: every workload ready for this long (Go duration)
//     progressDeadline: 10m    # ... within this long from the wave's start
//     rollbackOnFailure: false # on too many failures (and on abort): roll back the waves that started
// A DIG has at most one; several make instantiate and update fail.

#include "core/lifecycle/runtime.hpp"

namespace emco::plugins::rollout {

// Registers the kind, its check and the RolloutSource (plugins/builtin.cpp).
void install(lifecycle::Runtime& runtime);

}  // namespace emco::plugins::rollout
