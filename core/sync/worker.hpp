#pragma once
// Delivery workers (issue 21): on a workspace whose database several
// machines share (PostgreSQL; appcontext/job_rows.hpp), the (app, cluster)
// jobs of running events are rows; any number of worker processes, on any
// machines, claim them (FOR UPDATE SKIP LOCKED, a lease by the database's
// clock), run them with the same executor and targets as the process that
// drives the context (queue.hpp, the coordinator), and record statuses in
// the same rows, so status reads the same from every machine.
//
// What is parallel across workers and what is not:
//   * jobs of one app on different clusters, and of independent apps, run
//     anywhere at once;
//   * an app's dependencies (and their wait and readiness), update's
//     removals after every app is deployed, Terminate's reverse order: the
//     coordinator offers a job only when the executor would start it
//     (engine.hpp Dispatch), so the order holds whoever runs it;
//   * the steps of one job stay in order on one worker;
//   * jobs on batching targets (GitOps) are never offered: the coordinator
//     stages and commits them itself, one commit per repository per event;
//   * Read events run on the coordinator.
// A worker renews its leases every k_job_renew; one whose lease was lost
// (it stalled longer than k_job_lease and another worker claimed the job)
// abandons its run at that renew. The context's stop flag (emco dig stop)
// and a pending terminate are polled every Options::poll (200 ms) by every
// worker running its jobs: the same as the single-process engine, within a
// second on every machine, without a connection held open for LISTEN.
// Stopped contexts' jobs are not claimed.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "core/store/store.hpp"
#include "core/sync/engine.hpp"

namespace emco::sync {

inline constexpr std::chrono::milliseconds k_job_lease{10000};
inline constexpr std::chrono::milliseconds k_job_renew{2000};

// This process as a worker: "<host>:<pid>:<random>" (the random part tells
// apart a process that reuses a pid).
const std::string& worker_id();
const std::string& worker_host();
const std::string& worker_token();

struct WorkerOptions {
  Options engine;  // parallel: jobs claimed and run at once; interrupt ends the worker (its jobs are released)
  // The targets of context `ctx`'s clusters, made with `st` (the worker's connection).
  std::function<TargetFactory(store::Store& st, const std::string& ctx)> factory;
  std::string only_ctx;                     // claim only this context's jobs ("" = any)
  bool until_idle = false;                  // return as soon as no job is claimable
  const std::atomic<bool>* done = nullptr;  // set: return once the jobs in hand are finished
  std::chrono::milliseconds idle_poll{100};
};

struct WorkerStats {
  size_t jobs = 0;    // jobs run to their end (ok or failed)
  size_t failed = 0;  // of those, failed
  size_t lost = 0;    // jobs whose lease was lost or that were released unfinished
  uint64_t round_trips = 0;  // JobThread: requests its own connection sent
};

// Claims and runs jobs until interrupted, `done`, or (until_idle) none is
// claimable. Requires appcontext::jobs::available(st).
WorkerStats run_jobs(store::Store& st, const WorkerOptions& options);

// A worker thread with a connection of its own for the jobs of one context,
// while this process coordinates it (queue.cpp drive()): one machine alone
// still delivers everything. The destructor stops it (it finishes the jobs
// in hand) and joins.
// What every JobThread of this process did so far (for a worker's report).
WorkerStats job_thread_totals();

class JobThread {
public:
  JobThread(const store::Store& st, const std::string& ctx, const TargetFactory& factory, const Options& engine);
  ~JobThread();
  JobThread(const JobThread&) = delete;
  JobThread& operator=(const JobThread&) = delete;
  // Stops and joins; rethrows the thread's error.
  WorkerStats finish();

private:
  std::atomic<bool> m_done{false};
  std::thread m_thread;
  std::exception_ptr m_error;
  WorkerStats m_stats;
};

}  // namespace emco::sync
