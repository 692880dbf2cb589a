#pragma once
// Lifecycle operations and state rules for resources that keep a stateInfo
// (deployment intent groups, logical clouds, cluster network intents).
//
// stateInfo = {"statusctxid": "<ctx>", "actions": [{"state","instance","time","revision"}]}
// (lifecycle.md §1). The current state is the last action's state.

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/appcontext/appcontext.hpp"
#include "core/lifecycle/runtime.hpp"
#include "core/resource/kinds.hpp"
#include "core/store/store.hpp"
#include "core/sync/engine.hpp"
#include "core/sync/worker.hpp"
#include "core/sync/target.hpp"
#include "core/util/clock.hpp"

namespace emco::lifecycle {

// The stateInfo a new lifecycle resource starts with ("Created").
std::string initial_state_info(Clock& clock);
// The current state ("Created", "Approved", ...), or "" when there is none.
std::string current_state(const std::string& state_info);

// Checks that a stored resource may be modified in its current state;
// throws Error(conflict) saying why not and what to do instead.
void check_modify_allowed(const resource::Kind& k, const store::Resource& existing);
// Called inside the delete's write transaction, before the resource is
// removed: throws Error(conflict) when its state forbids the delete, else
// removes what the lifecycle keeps for it (its AppContexts, issued credentials).
// Other lifecycle kinds (an OperationOwner's): refused while one of its
// contexts is delivered or in progress, else its contexts and the
// credentials stored under its key go.
void before_delete(store::Store& st, const resource::Kind& k, const store::Resource& existing);
// Throws Error(conflict) when resources of kind `k` are inputs of a
// ResourcePlanner (runtime.hpp) and the resource owning `key` has their
// context on clusters (a cluster's networks while they are applied, or a
// stop left them midway): such inputs are created, changed and deleted only
// before apply or after terminate.
void check_inputs_changeable(const store::Store& st, const Runtime& runtime, const resource::Kind& k,
                             const resource::Key& key);


// Makes the AppContext of a DIG from the current intents. `status_context`:
// the DIG's status context on update ("" on instantiate: the new context is
// its own); `update_from`: the running context on update, else "".
using Planner = std::function<appcontext::AppContext(store::Store&, const resource::Key& dig,
                                                     const std::string& status_context, const std::string& update_from)>;
// core/plan's planner (plan::build with the runtime's controllers); `live`
// reads cluster state for placement controllers (plan::Options::live).
Planner default_planner(const Runtime& runtime, sync::TargetFactory live = {});

struct OperationOptions {
  const Runtime* runtime = nullptr;                      // required: controllers and delivery (plugins/builtin.cpp)
  bool wait = true;                                      // run the sync engine here until done or timeout
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  int parallel = 16;
  const std::atomic<bool>* interrupt = nullptr;          // Ctrl-C: stop waiting, leave the work queued
  // Progress of the context being delivered (driving thread).
  std::function<void(const std::string& ctx, const std::string& event, const sync::Progress&)> progress;
  sync::TargetFactory factory;                           // empty: the runtime's delivery (cluster_targets)
  Planner planner;                                       // empty: plan::build (default_planner)
  sync::Options engine;                                  // backoff etc.; parallel/interrupt/deadline set from above
  // A context another live process is delivering is waited for (false:
  // left to it and reported pending; delivery workers, work()).
  bool wait_for_others = true;
  // A rollout in waves (rollout.hpp): stop once the current wave's gate has
  // passed (the rollout then waits for 'emco dig rollout resume') or failed.
  bool wait_wave = false;
  // resume(): also try again the child contexts whose last attempt failed
  // ('emco sync'; false where resume runs over and over or on the way to
  // something else: emco serve's delivery thread, delivery workers, the
  // queued work an operation finishes first).
  bool retry_children = true;
};

enum class Delivery {
  none,     // the operation changes nothing on clusters (approve, stop, admin logical clouds)
  done,     // delivered
  failed,   // delivered with failures (context status *Failed)
  pending,  // not finished: waiting ended (timeout, Ctrl-C, --no-wait) or another process is working on it
};

struct OperationResult {
  std::string message;                 // "instantiated", "updated to revision 2", ...
  std::string context;                 // the AppContext delivered ("" for none)
  Delivery delivery = Delivery::none;
  std::string status;                  // that context's status afterwards
  std::vector<std::string> failures;   // from the sync engine
  int revision = 0;                    // update/rollback: the new revision
};

// Runs lifecycle operation `op` on the resource `key` of kind `k` with the
// document body (rollback: {"spec":{"revision":n}}). Operations:
//   DIG: approve, instantiate, terminate, stop, update, rollback
//   logical cloud (admin level 0, standard/privileged level 1): instantiate, terminate, update, stop
//   kinds of a runtime OperationOwner: what the owner runs (ca-certs: enrollment/..., distribution/...)
// State checks, history records and AppContext creation happen in one write
// transaction each; delivery then runs in this process (options.wait) or is
// left queued for the next emco invocation / `emco sync`. Throws Error on a
// state the operation does not accept (conflict), a missing resource
// (not_found) or a failed plan (invalid/failed) — and then changes nothing.
OperationResult run(store::Store& st, const resource::Kind& k, const resource::Key& key, const std::string& op,
                    const nlohmann::json& body, Clock& clock, const OperationOptions& options);

// The batch-file entry (lifecycle anchors): run() with default options,
// returning the message. Delivery that failed throws Error(failed), one still
// pending after the default timeout Error(pending).
std::string run_operation(store::Store& st, const resource::Kind& k, const resource::Key& key, const std::string& op,
                          const nlohmann::json& body, Clock& clock, const Runtime& runtime);

// The hook log of context `ctx` (runtime.hpp OperationHooks): one entry per
// hooked operation on it, {"operation", "revision", "steps": [{"name",
// "point", "blocking", "state" (pending|started|done|failed), "message",
// "log", "time"}]}; an empty array when none ran there.
nlohmann::json hook_log(store::Store& st, const std::string& ctx);

// ---- for OperationOwners (runtime.hpp): the pieces the built-in lifecycles use ----

// The instance (context id) of the last action of a stateInfo object, "" when none.
std::string last_instance(const nlohmann::json& state_info);
// Appends {state, instance, time, revision} to state_info["actions"].
void append_action(nlohmann::json& state_info, const std::string& state, const std::string& instance, int revision,
                   Clock& clock);
// When an operation run with `o` stops waiting (now + o.timeout).
std::chrono::steady_clock::time_point deadline_of(const OperationOptions& o);
// Finishes contexts of `owner` with queued work and no live process on them
// before a new operation builds on their state; Error(conflict) when it
// cannot (the new operation is not recorded: nothing is pending for it).
void finish_queued(store::Store& st, const resource::Key& owner, const OperationOptions& o,
                   std::chrono::steady_clock::time_point deadline);
// Drives the saved and queued context `ctx` until its queue drains (waiting
// for another process that holds it), `deadline` or an interrupt, and
// records in `out` the context, how delivery ended, its status and failures.
// `goal`: the context status that counts as done ("" = anything but *Failed).
void deliver_into(OperationResult& out, store::Store& st, const std::string& ctx, const std::string& goal,
                  const OperationOptions& o, std::chrono::steady_clock::time_point deadline);

// Delivers every context with queued work (left by an interrupted process,
// or --no-wait), oldest first, with `options` (timeout applies to the whole
// call); a context another live process is delivering is waited for, as
// deliver_into does (unless options.wait_for_others is false: then such a
// context is reported pending and the others are delivered). Each DIG
// context delivered makes the children it owes, and so do those
// children_due lists (options.retry_children: also those whose last attempt
// failed). Returns the contexts driven and how each ended.
struct ResumeResult {
  std::string context;
  Delivery delivery = Delivery::none;
  std::string status;
  std::vector<std::string> failures;
};
std::vector<ResumeResult> resume(store::Store& st, const OperationOptions& options);
// The DIG contexts delivered (each its DIG's current deployment, Instantiated)
// whose child contexts (spec/lifecycle.md §7) are still to make, oldest
// first, each with why its last attempt failed ("" when none failed): an
// operation that did not wait for its delivery, a kill -9 or a planner's
// failure left them; resume() makes them.
std::vector<appcontext::OwedChildren> children_due(store::Store& st);

// `emco sync --worker` (issue 21; requires a workspace on a shared database,
// appcontext::jobs::available, else Error(usage)): until interrupted, drives
// every context with queued work that no live process holds (resume() with
// wait_for_others false: contexts others hold are left to them) and claims and runs the
// (app, cluster) jobs of any context (sync/worker.hpp). `until_idle`: returns
// once no job is claimable and no context has queued work or hooks to run.
// `options.timeout` does not apply (a worker runs until told to stop).
struct WorkerReport {
  std::vector<ResumeResult> driven;  // contexts this worker drove (coordinated)
  sync::WorkerStats jobs;            // jobs it ran for any context
  uint64_t round_trips = 0;          // requests to the database server
};
WorkerReport work(store::Store& st, const OperationOptions& options, bool until_idle);

// The TargetFactory reaching the workspace's clusters with their kubeconfigs
// through the runtime's direct mechanism (the registrations are read at its
// first call, on the calling thread; `st` and the runtime must outlive it):
// status reads live objects back with it, the planner's hpa Nodes.
sync::TargetFactory live_targets(store::Store& st, const Runtime* runtime);

// The answer to a status anchor (".../status", ".../enrollment/status") as
// upstream's service gives it: a DIG's status (status::dig_status with the
// anchor's query), an OperationOwner's own, a ResourcePlanner's context
// (status::owned_status), else the resource's name, its stateInfo ("states")
// and its current state ("deployedStatus"). Queries that read live objects
// reach the clusters through `runtime`. Error(not_found) for a resource that
// does not exist, Error(invalid) for a bad query.
nlohmann::json anchor_status(store::Store& st, const Runtime& runtime, const resource::Anchor& anchor);

// The TargetFactory delivering context `ctx`: each cluster through the first
// of the runtime's delivery mechanisms that delivers it (GitOps, then direct
// with the cluster's own kubeconfig), except that a deployment into a
// standard or privileged logical cloud (meta Level "1") reaches clusters
// delivered directly with the cloud user's kubeconfig issued at the cloud's
// instantiate (core/lifecycle/credentials.hpp); a cluster without one fails
// its jobs with a hint to instantiate the cloud. `at_rest`: `ctx` is not
// being delivered (drift check and repair, drift.hpp): batching targets
// describe their commits as an update to its revision.
sync::TargetFactory cluster_targets(store::Store& st, const std::string& ctx, const Runtime* runtime,
                                    bool at_rest = false);

}  // namespace emco::lifecycle
