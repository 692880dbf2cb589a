#pragma once
// The sync engine's executor: runs one operation (a Work: apps, their
// dependencies, and per (app, cluster) an ordered list of steps) over a
// bounded pool of worker threads, with reachability retry and backoff, hook
// waits, app dependencies, stop and interruption.
//
// Threading contract: run() is called on one thread (the "calling thread")
// and returns when the work has ended. Workers never touch the database:
// status updates are collected and handed to Hooks::flush on the calling
// thread in batches (every Options::poll), and Hooks::stop_requested /
// Hooks::progress are called there too, so persistence stays
// single-threaded and cheap (one transaction per batch).
//
// Per job (one app on one cluster): steps run strictly in order. Before the
// first step and after any transient failure the cluster is probed; while
// unreachable its connectivity is Retrying, the step's resource Retrying, and
// the probe is repeated with exponential backoff (Options::backoff_*) until
// it answers, max_retries is exceeded (-1 = forever), or the run is
// cancelled. A permanent apply failure marks the resource Failed and ends
// the job (failed); a permanent remove failure marks the resource Failed and
// the job continues (as rsync does). Steps that wait (hooks) poll the object
// until it is ready.
//
// Batching targets (Target::batch(), git): the steps of their jobs are
// staged, not run, and the job ends when they are staged (hook waits and
// Ready dependencies count as met: the remote's consumer orders them). Once
// every job has ended, each distinct Batch is committed once on the calling
// thread; the staged statuses (Committed / Deleted, with the commit) are
// recorded only after that succeeds. A transient commit failure marks the
// batch's clusters Retrying and is retried with backoff until it succeeds,
// max_retries, stop, interrupt or the deadline (then the outcome is
// interrupted and nothing of the batch is recorded); a permanent one marks
// the staged resources Failed and their jobs failed.
//
// Dependencies: an app starts when every app it depends on has finished
// successfully (Deployed) or is ready on all its clusters (Ready), plus the
// dependency's `wait` seconds. A failed dependency fails its dependents
// without running them.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/sync/target.hpp"

namespace emco::sync {

// What happened to one resource; each state means one thing (issue 23):
//   pending   — queued: not attempted yet, work is queued for it;
//   applied   — the cluster accepted it;
//   committed — written to a git repository (batching targets; the message
//               holds "commit <id>");
//   failed    — attempted, and the cluster (or repository) refused it: the
//               message is its answer;
//   retrying  — attempted, the cluster could not be reached; tried again;
//   skipped   — not attempted: an earlier resource of its app on that
//               cluster failed, or an app it depends on failed (the message
//               says which);
//   deleted   — a terminate or update removed it from the cluster;
//   absent    — a terminate or update found it not on the cluster (never
//               created, or already gone): nothing to delete.
// NotCreated is not an engine state: status shows it for a resource of a
// context with nothing queued that was never recorded, and the queue records
// it for one still Retrying when an apply is stopped (core/sync/queue.cpp).
enum class ResourceStatus { pending, applied, failed, retrying, deleted, committed, skipped, absent };
enum class Connectivity { unknown, available, retrying };
const char* status_name(ResourceStatus s);     // "Pending", "Applied", ..., "Committed"
const char* connectivity_name(Connectivity c); // "Unknown", "Available", "Retrying"
ResourceStatus parse_status(const std::string& text);           // unknown text -> pending
Connectivity parse_connectivity(const std::string& text);       // unknown text -> unknown

enum class StepAction {
  apply,          // server-side apply; status Applied
  create,         // create-if-absent (CRDs); status Applied
  apply_wait,     // apply then wait until ready (hooks); status Applied
  remove,         // delete; status Deleted (failure: Failed, job continues)
  remove_quiet,   // delete ignoring every failure (hook/CRD cleanup); no status
};

struct Step {
  StepAction action = StepAction::apply;
  std::string resource;  // the AppContext resource key "<name>+<Kind>"
  SharedText manifest;   // the object text
  bool record = true;    // write its status
};

struct Job {
  std::string app;      // the app whose resources the steps are (statuses are recorded under it)
  std::string cluster;  // "<provider>+<cluster>"
  std::vector<Step> steps;
  // The Work app that schedules this job ("" = `app`): lets a job wait for
  // other apps than its own (an update's removals run once every app of the
  // new context is deployed, in the same run and so the same git commit).
  std::string scheduled_with;

  const std::string& schedule_app() const { return scheduled_with.empty() ? app : scheduled_with; }
};

struct Dependency {
  std::string app;
  bool ready = false;  // opStatus Ready (else Deployed)
  int wait_s = 0;
};

struct WorkApp {
  std::string name;
  std::vector<Dependency> depends_on;
};

struct Work {
  std::string ns;                // the context namespace (objects without one go there)
  std::vector<WorkApp> apps;     // in apporder
  std::vector<Job> jobs;         // any order; started per app order, gated by dependencies
};

struct Update {
  bool connectivity = false;  // else a resource status
  std::string app, cluster, resource;
  ResourceStatus status = ResourceStatus::pending;
  Connectivity conn = Connectivity::unknown;
  std::string message;
  int64_t time_ms = 0;
};

struct Progress {
  size_t jobs = 0, done = 0, failed = 0, retrying = 0;  // retrying: running jobs now waiting for a cluster
  size_t steps = 0, steps_done = 0;
  std::chrono::milliseconds elapsed{0};
};

// A job that ended in another process (Dispatch::collect).
struct RemoteEnd {
  size_t job = 0;  // index in Work::jobs
  bool ok = false;
  std::string failure;
  size_t steps = 0;  // steps it ran
};

// Jobs run by other processes (distributed delivery, core/sync/worker.hpp):
// when set, a job whose cluster's Target does not batch is not run here but
// offered once its app may start (dependencies, their waits and readiness
// are still decided here), and its end is collected; the other process
// records its statuses itself. Jobs on batching targets (git) stay here, so
// a repository still gets one commit per run. Both are called on the
// calling thread.
struct Dispatch {
  std::function<void(const std::vector<size_t>& jobs)> offer;
  std::function<std::vector<RemoteEnd>()> collect;  // every Options::poll
};

// Status updates per Hooks::flush call while a batch's commit is reported:
// large enough that the per-transaction cost vanishes, small enough that a
// slice's write-ahead log stays a few MB.
inline constexpr size_t kStatusSlice = 32768;

struct Hooks {
  // Persist a batch (calling thread). A batch's commit reports its jobs'
  // connectivity and its staged steps' statuses at most kStatusSlice at a
  // time, so neither the pending updates nor one transaction grows with the
  // fleet.
  std::function<void(std::vector<Update>&&)> flush;
  std::function<bool()> stop_requested;              // polled every Options::poll
  std::function<void(const Progress&)> progress;     // every Options::poll and at the end
  // Each job that ran to its end here, ok or failed (not one cancelled or
  // interrupted), on the calling thread after its statuses were flushed; a
  // job of a batching target ends when it is staged.
  std::function<void(size_t job, bool ok, const std::string& failure)> job_ended;
  Dispatch dispatch;  // empty: every job runs here
};

struct Options {
  int parallel = 16;
  std::chrono::milliseconds backoff_initial{250};
  std::chrono::milliseconds backoff_max{2000};
  int max_retries = -1;                        // per step; -1 = retry forever
  std::chrono::milliseconds poll{200};         // stop flag, flush and progress period
  std::chrono::milliseconds hook_timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds ready_poll{500};   // hook and Ready-dependency polling
  // Set from elsewhere (signal handler, timeout): end at once, leaving the
  // work to be resumed (Outcome::interrupted).
  const std::atomic<bool>* interrupt = nullptr;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

enum class Outcome {
  succeeded,    // every job finished
  failed,       // at least one job failed
  stopped,      // stop_requested() said so: waits were cancelled
  interrupted,  // interrupt or deadline: the operation must be resumed later
};
const char* outcome_name(Outcome o);

struct Result {
  Outcome outcome = Outcome::succeeded;
  Progress progress;
  std::vector<std::string> failures;  // "app on cluster: message", at most a few dozen
};

Result run(const Work& work, const TargetFactory& factory, const Options& options, const Hooks& hooks);

}  // namespace emco::sync
