#pragma once
// emco's rsync: the persisted per-AppContext event queue and its state
// machine (spec/lifecycle.md §6, newest-code table), driving the executor
// (engine.hpp) for DIGs, logical clouds and cluster network intents alike.
//
// Queue semantics. Events are rows of the context's queue (appcontext
// enqueue); enqueuing also puts the context in the active set. One process at
// a time drives a context: it holds a lease (host, pid, a random token and a
// heartbeat by appcontext::jobs::clock_ms — the database server's clock on a
// shared database — in the store's meta rows) that a later process takes
// over when the holder is dead (its pid, when it is on this machine) or its
// heartbeat older than k_lease_stale. On a shared database (PostgreSQL) the
// executor's jobs are offered as rows that delivery workers on any machine
// run (worker.hpp), this process among them; on SQLite it runs them itself.
// For every Pending element, in order:
//   stopflag set                    -> Skip (no state change)
//   PendingTerminateFlag, not Terminate -> Skip
//   current state not a valid source -> Skip and status := E (Terminate on a
//                                       Terminated context: Skip, untouched)
//   otherwise DesiredState := D, status := C, run; success: status := D,
//   Done; failure or stop: status := E, Error.
// An element whose run was interrupted (Ctrl-C, --timeout, kill -9) stays
// Pending with status C and DesiredState D and is resumed by the next
// process (a resumed element is accepted from C). Update (on the new
// context, uCID = old) applies new and changed resources and then, once
// every app is deployed and in the same executor run (so a git repository
// gets one commit per update), deletes what the new context no longer has;
// its success also records the old context's UpdateDelete (uCID = new) as
// Done and the old context Updated, in one transaction. An UpdateDelete
// found queued (by an earlier emco) still runs on its own. When the queue
// drains the context leaves the active set and PendingTerminateFlag is
// cleared.
//
// Statuses are written under the context's status context (statusappctxid).

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/store/store.hpp"
#include "core/sync/engine.hpp"

namespace emco::sync {

inline constexpr std::chrono::seconds k_lease_stale{15};

struct Transition {
  std::vector<std::string> sources;
  std::string current, desired, error;
};
// The state machine row of an event ("Instantiate", ...); Error(invalid) for others.
const Transition& transition(const std::string& event);

struct DriveOptions {
  Options engine;
  TargetFactory factory;
  // Called on the driving thread with the context and event being run.
  std::function<void(const std::string& ctx, const std::string& event, const Progress&)> progress;
};

enum class DriveEnd {
  drained,      // the queue is empty: every event ran (look at the context status for the result)
  interrupted,  // interrupt/deadline: an element is still Pending
  busy,         // another live process holds the context (nothing was done)
  stage,        // a staged event's open stage ended (see Stage): the event is still Pending
};

struct DriveResult {
  DriveEnd end = DriveEnd::drained;
  std::string status;                 // the context status afterwards
  std::vector<std::string> failures;  // of the last event run
};

// Staged events (lifecycle/rollout.hpp delivers an operation in waves). A
// context may have one open stage (its meta "sync.stage"): a queued event (by
// seq) and the clusters that event may deliver now. The event's work is
// built with only the (app, cluster) jobs of those clusters (event_work, so
// delivery workers on other machines run the same jobs). The run of a stage
// that is not `final` ends the stage, not the event: whatever its jobs'
// outcome (their statuses are recorded), the stage is recorded ended in the
// transaction that forgets its job rows, the event stays Pending in its
// current state, and drive() returns DriveEnd::stage -- at once, running
// nothing, while the stage stays ended. Its owner then opens the next stage. A
// final stage's run ends the event as usual. A stop or an interrupt ends the
// run as for any event. Stages apply to Instantiate, Update and Terminate.
struct Stage {
  int64_t seq = 0;                    // the event (queue element) it belongs to
  std::vector<std::string> clusters;  // "<provider>+<cluster>", the clusters delivered in this stage
  bool final = false;                 // this stage's run ends the event
  bool ended = false;                 // its run ended (not final: the owner opens the next)
};
// Opens `stage` (its `ended` is ignored) on `ctx`, replacing the stage before
// and forgetting the event's job rows of that one; in one transaction (the
// caller's when it holds one).
void open_stage(store::Store& st, const std::string& ctx, const Stage& stage);
// The stage of `ctx`, if any.
std::optional<Stage> current_stage(store::Store& st, const std::string& ctx);

// Processes the queue of `ctx` until it drains, is interrupted, another
// process holds it, or an open stage that is not final ended (DriveEnd::stage).
DriveResult drive(store::Store& st, const std::string& ctx, const DriveOptions& options);

// Contexts in the active set that no live process holds (resumable now).
std::vector<std::string> resumable(store::Store& st);

// Auto-resume's background `emco sync`, one at a time per workspace: its
// slot (meta sync.background, "<pid> <clock_ms>") names the process and
// when it started. A slot is held while that pid lives on this machine and
// for at most k_background_timeout plus a minute (the sync is started with
// --timeout k_background_timeout): a pid reused by an unrelated process
// does not hold it for ever. claim_background_slot takes a free slot for
// this process (one transaction) and says whether it did; set_background_slot
// then names the started child, or frees the slot (pid 0).
inline constexpr std::chrono::minutes k_background_timeout{10};
bool claim_background_slot(store::Store& st);
void set_background_slot(store::Store& st, long pid);

// Queues `event` (with `ucid`, ac::enqueue) on `ctx` for this process to
// deliver, and holds the context's lease for it in the same transaction (the
// caller's when it holds one): another command starting meanwhile must not
// see queued work nobody holds and resume it in the background while this
// process is about to drive it. The lease is this process's until drive()
// ends, lifecycle's deliver() gives it up without delivering (--no-wait), or
// the process dies; another live holder keeps it (take_lease). Returns the
// entry's sequence number.
int64_t enqueue_to_deliver(store::Store& st, const std::string& ctx, const std::string& event,
                           const std::string& ucid = {});

// The lease of `ctx` for work done around its queue (an operation's hooks,
// lifecycle/hooks.cpp), so that no other process resumes the context
// meanwhile: take_lease is false when another live process holds it;
// renew_lease refreshes this process's heartbeat (needed at least every
// k_lease_stale while it works); release_lease gives it up. drive() takes
// and releases the same lease itself.
bool take_lease(store::Store& st, const std::string& ctx);
void renew_lease(store::Store& st, const std::string& ctx);
void release_lease(store::Store& st, const std::string& ctx);

// Begun before take_lease: gives up the lease of `ctx` when it goes out of
// scope, unless this process held it already when the scope began (work it
// queued to deliver: enqueue_to_deliver) or the context is gone by then (an
// undone operation may remove it). Releasing it earlier with release_lease
// is allowed; the scope's end then releases nothing held.
class LeaseScope {
public:
  LeaseScope(store::Store& st, std::string ctx);
  ~LeaseScope();
  LeaseScope(const LeaseScope&) = delete;
  LeaseScope& operator=(const LeaseScope&) = delete;

private:
  store::Store& m_st;
  std::string m_ctx;
  bool m_release;
};

// Whether a live process (possibly this one) holds the lease of `ctx`.
bool held_by_live_process(store::Store& st, const std::string& ctx);

// Enqueues Read on `ctx` (lifecycle.md §6): when driven, every resource is
// read back from its cluster and its readiness and the cluster's
// connectivity recorded under the status context; the deployment itself is
// not touched.
void request_read(store::Store& st, const std::string& ctx);

// Enqueues Terminate on `ctx`; when a live process is working on the context
// sets PendingTerminateFlag so that it cancels the running event first, else
// holds the context's lease for this process as enqueue_to_deliver does.
void request_terminate(store::Store& st, const std::string& ctx);

}  // namespace emco::sync
