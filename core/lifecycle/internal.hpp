#pragma once
// Shared by the lifecycle operations of core/lifecycle (DIGs in
// lifecycle.cpp, logical clouds in logical_cloud.cpp); not a public API.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/lifecycle/lifecycle.hpp"

namespace emco::lifecycle::detail {

// A logical cloud's spec.level ("0" admin, "1" standard/privileged; "1" when unset).
std::string lc_level(const store::Resource& lc);

// How a delivery ended for the caller.
struct Delivered {
  Delivery delivery = Delivery::pending;
  std::string status;
  std::vector<std::string> failures;
};

// Drives context `ctx` until its queue drains, waiting for another process
// that holds it, until `deadline` or an interrupt. `goal`: the context status
// that counts as done ("" = anything but *Failed).
Delivered deliver(store::Store& st, const std::string& ctx, const std::string& goal, const OperationOptions& o,
                  std::chrono::steady_clock::time_point deadline);
// Child contexts of a DIG's context (lifecycle.md §7). Inside the write
// transaction that queues the delivery of `ctx` (instantiate, update,
// rollback, migrate; `from`: the context it replaces, else ""): records that
// `ctx` owes its children once delivered, after the children of `from` (and
// of whatever `from` replaced and still owed the termination of) are
// terminated (appcontext/children_rows.hpp).
void owe_children(store::Store& st, const std::string& ctx, const std::string& from);
// Whether `ctx` is the current deployment of its DIG: Instantiated, and the
// instance of the DIG's last action, which is Instantiated.
bool current_deployment(store::Store& st, const std::string& ctx);
// The children step, run by whoever finished delivering `parent` (the
// operation that waited, resume()): `parent_d` is how that delivery ended.
// When it is done and `parent` is still its DIG's current deployment and owes
// its children, the children of the contexts it replaced are terminated,
// every child planner of the runtime is asked (outside any transaction), and
// in one write transaction, if the record is still there and `parent` still
// current, the children are stored as its children and queued and the
// record is settled; then they are delivered like any context. A process
// that loses that claim discards its plan (the winner delivers them). A
// planner's or a terminate's failure is kept with the record, which stays for
// the next resume. Returns the first step that did not finish, else parent_d.
Delivered with_children(store::Store& st, const std::string& parent, Clock& clock, const OperationOptions& o,
                        std::chrono::steady_clock::time_point deadline, Delivered parent_d);

// Rollouts (rollout.cpp, rollout.hpp). Inside the write transaction that
// records instantiate or update, after its event `seq` was queued on `ctx`
// (`from`: the context an update replaces, else ""): when the runtime has a
// strategy for `dig`, plans the waves, stores the rollout with `ctx` and
// opens the first wave.
void record_rollout(store::Store& st, const Runtime* runtime, const resource::Key& dig, const std::string& ctx,
                    const std::string& op, int64_t seq, const std::string& from);
// Called by deliver() before each drive of `ctx`: moves its rollout on (runs
// the open wave's gate, opens the next wave, pauses...) holding the
// context's lease. A context without a rollout in progress is driven as is.
// Error(conflict) when `ctx` (a DIG's current context) has a rollout in
// progress (running, waiting or paused), or one aborted without rollback
// (the clusters of the waves that started run its revision, the others the
// one before): `op` (update, rollback, migrate) delivers a difference from
// one revision, which only some clusters have. The one exception: a
// rollback of an aborted update to the context it replaced
// (`rollback_target`), which every cluster gets right (those the update
// reached get the difference, the others already run it). `what` names the DIG.
void refuse_during_rollout(store::Store& st, const std::string& ctx, const std::string& what, const std::string& op,
                           const std::string& rollback_target = "");
struct RolloutTurn {
  std::chrono::steady_clock::time_point deadline;  // for the drive: the operation's, or the wave's progress deadline
  std::optional<Delivered> stop;                   // set: deliver() returns it (waiting, paused, gate unfinished)
};
RolloutTurn rollout_turn(store::Store& st, const std::string& ctx, const OperationOptions& o,
                         std::chrono::steady_clock::time_point deadline, const sync::TargetFactory& factory);

// Copies a delivery's outcome into the operation result.
void fill(OperationResult& out, const std::string& ctx, const Delivered& d);

// The revision of the last Instantiated action of a DIG's stateInfo (0: none).
int last_revision(const nlohmann::json& state_info);
// Plans the DIG `key` (options' planner, else the runtime's default).
appcontext::AppContext plan_dig(store::Store& st, const resource::Key& key, const OperationOptions& o,
                                const std::string& status_context = {}, const std::string& update_from = {});
// Frees a planned context once it is saved and returns its id: delivery loads
// what it needs from the store, so keeping the planned copy through delivery
// held a fleet's context twice (~35 MB at 10,000 clusters of 10 apps).
std::string drop_planned(appcontext::AppContext& planned);
// Error(not_found/conflict) unless the DIG's logical cloud is Instantiated
// or Updated; `what` names the DIG in the message.
void check_logical_cloud(store::Store& st, const store::Resource& dig, const std::string& what);
// The hint for a context another operation still works on.
std::string busy_hint(store::Store& st, const std::string& ctx);

// DIG migrate and clone (dig_migrate.cpp).
OperationResult migrate_dig(store::Store& st, const resource::Kind& k, const resource::Key& key,
                            const nlohmann::json& body, Clock& clock, const OperationOptions& o);
OperationResult clone_dig(store::Store& st, const resource::Kind& k, const resource::Key& key,
                          const nlohmann::json& body, Clock& clock);

// Hooks of DIG operations (hooks.cpp; runtime.hpp OperationHooks).
//
// Inside the operation's write transaction: asks the runtime's hook
// providers for the steps of `op` on `dig` and stores them with context
// `ctx`: instantiate, update and terminate at their pre and post points,
// migrate at the target's pre- and post-update, rollback at post-update
// only (as upstream calls its action controllers). `undo_info` says how to
// put the DIG back when a blocking pre step fails ({"pop": n actions,
// "statusctxid": the previous one, "remove": the context too, and for a
// migrate "source": {"dig", "pop", "contexts" to give back}}). Providers'
// Errors propagate (the operation is refused, nothing recorded).
void record_hooks(store::Store& st, const Runtime* runtime, const resource::Key& dig, const std::string& ctx,
                  const std::string& op, long revision, const nlohmann::json& undo_info);
// The status a delivery reports when a blocking pre step failed and the
// operation was undone (nothing delivered, the DIG as before).
inline constexpr const char* k_hook_refused = "HookFailed";
// Runs the steps of `phase` ("pre", "post") of the current operation of
// `ctx` not yet done. nullopt: nothing to report (no steps, or all ran).
// A blocking pre step that fails undoes the operation and returns
// Delivery::failed, status k_hook_refused, with the step's answer; a
// blocking post step returns failed; non-blocking failures return
// Delivery::done with them as failures; a deadline or interrupt before a
// step returns pending.
std::optional<Delivered> run_hooks(store::Store& st, const std::string& ctx, const std::string& phase,
                                   const OperationOptions& o, std::chrono::steady_clock::time_point deadline);
// Throws Error(failed) with the hook's answer when `d` says a blocking pre
// hook refused the operation `op` of `what` (k_hook_refused); else returns `d`.
Delivered refused_by_hook(const Delivered& d, const std::string& what, const std::string& op);
// The context status the current hooked operation of `ctx` delivers to
// ("" when it has none).
std::string hook_goal(store::Store& st, const std::string& ctx);
// Forgets that `ctx` has hook steps to run (its delivery failed, or it is gone).
void abandon_hooks(store::Store& st, const std::string& ctx);
// Contexts whose hooks have steps still to run (for resume).
std::vector<std::string> contexts_with_hooks(store::Store& st);

// Logical-cloud operations (logical_cloud.cpp).
OperationResult lc_operation(store::Store& st, const resource::Kind& k, const resource::Key& key, const std::string& op,
                             const nlohmann::json& body, Clock& clock, const OperationOptions& options);
// After resume() delivered context `ctx` (emco sync, emco serve's delivery
// thread): when it is the current, Instantiated context of a level-1 logical
// cloud, issues the user credentials its clusters still lack, as a waited
// instantiate or update does once delivered. One failure per cluster not
// served; nothing for any other context.
std::vector<std::string> lc_resumed(store::Store& st, const std::string& ctx, const OperationOptions& o,
                                    std::chrono::steady_clock::time_point deadline);

// Operations on a resource a plugin's ResourcePlanner owns (owned.cpp).
OperationResult owned_operation(store::Store& st, const resource::Kind& k, const resource::Key& key,
                                const std::string& op, const ResourcePlanner& planner, Clock& clock,
                                const OperationOptions& o);
// Whether an owned resource in `state` has its context on clusters (applied,
// being applied or terminated, or stopped midway): its inputs are frozen.
bool frozen_state(const std::string& state);

}  // namespace emco::lifecycle::detail
