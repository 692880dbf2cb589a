#pragma once
// Progressive rollouts (issue 24): a DIG's instantiate or update delivered
// to its clusters in waves, each wave gated on the readiness of its
// workloads before the next starts.
//
// The strategy comes from the runtime's RolloutSource (runtime.hpp;
// plugins/rollout reads the DIG's emco-rollout-strategies resource). When
// the operation is recorded, its waves are planned over the clusters of the
// new context (and, for an update, those the running one leaves) and stored
// with the context (meta "rollout"), in the same transaction, and the first
// wave opened as the event's stage (core/sync/queue.hpp Stage: the event runs
// only that wave's (app, cluster) jobs). Each wave then goes
//   applying -> gating -> passed | failed
// applying: its jobs run (a kill -9 leaves the event queued; the next process
// runs the wave's jobs again). gating: every resource of the new revision on
// the wave's clusters is read live through the delivery targets until all
// are ready, continuously for minSuccessTime; a cluster whose apply was
// refused (a Failed or Skipped resource) fails at once, the others fail when
// progressDeadline (from the wave's start) passes while they are not ready.
// Then, in one transaction, the next wave is opened (or, after the last, a
// final empty stage that ends the event: the context reaches Instantiated and
// the post hooks and child contexts follow). A finished wave is never
// delivered again. When the clusters failed so far exceed maxFailures the
// rollout pauses (or, with rollbackOnFailure, is aborted with rollback).
//
// The rollout's state: running; waiting (a wave passed under --wait-wave);
// paused (too many failures); done; aborted. Waiting and paused rollouts
// leave the active set, so 'emco sync' and other commands do not continue
// them: 'emco dig rollout resume' does (a paused one runs its failed wave
// again, its failures no longer counted); 'emco dig rollout abort' ends the
// operation (its event Error, the context its error state), with rollback
// removing what the waves that started delivered: an instantiate's objects
// are deleted from those clusters, an update's clusters get the previous
// revision back (recorded as a new revision, as 'emco dig rollback' does).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/lifecycle/lifecycle.hpp"
#include "core/lifecycle/rollout_strategy.hpp"

namespace emco::lifecycle::rollout {

struct Wave {
  std::string name;                   // "wave 2", "group canary", "group canary (2/3)"
  std::vector<std::string> clusters;  // "<provider>+<cluster>"
};
// The waves of `clusters` (sorted) under `s`; `labels_of(cluster)` gives a
// cluster's labels (asked only when s.groups is set). Deterministic.
std::vector<Wave> plan_waves(const Strategy& s, const std::vector<std::string>& clusters,
                             const std::function<std::vector<std::string>(const std::string&)>& labels_of);

// The rollout of context `ctx` as stored, null when it has none:
// {"strategy", "operation", "state", "message", "current" (index), "failures",
//  "maxFailures", "waves": [{"name", "clusters", "state", "failed",
//  "started", "ended" (RFC 3339), "gateMs"}]}.
nlohmann::json of_context(store::Store& st, const std::string& ctx);
// The rollout of the DIG's current deployment (its last action's context),
// null when it has none; the waves' cluster lists only with `clusters`. Its
// state is "ended" when a terminate or stop ended the operation first.
nlohmann::json of_dig(store::Store& st, const resource::Key& dig, bool clusters = false);
// The same for the DIG's current deployment `ctx` (last_instance of its
// stateInfo as read already); null when `ctx` is "" or has no rollout.
nlohmann::json of_current(store::Store& st, const std::string& ctx, bool clusters = false);

// `emco dig rollout resume`: continues the rollout of the DIG's current
// deployment (waiting: the next wave; paused: its failed wave again; running:
// what a killed process left) and delivers it as the operation would
// (o.wait_wave: up to the current wave's gate). Error(conflict) when there is
// no rollout to resume or another process delivers it.
OperationResult resume(store::Store& st, const resource::Key& dig, Clock& clock, const OperationOptions& o);
// `emco dig rollout abort`: ends the rollout (see above); `rollback` (or the
// strategy's rollbackOnFailure) removes what its waves delivered and
// delivers that. Error(conflict) when no rollout is in progress or another
// process delivers it.
OperationResult abort(store::Store& st, const resource::Key& dig, bool rollback, Clock& clock,
                      const OperationOptions& o);

}  // namespace emco::lifecycle::rollout
