#pragma once
// The jobs of distributed delivery (issue 21): on a workspace whose database
// several machines share (PostgreSQL, store::Database::shared()), the
// (app, cluster) jobs of a running event are rows of sync_jobs that any
// delivery worker may claim (core/sync/worker.hpp). The process that drives
// the context's queue (the coordinator, core/sync/queue.cpp) offers a job
// when the executor would start it (its app's dependencies met) and
// collects it when it ended; workers claim, run and finish jobs.
//
// A job's state: ready (claimable) -> running (claimed by `worker` until
// `lease_until`, the database's clock in ms) -> ok | failed. A running job
// whose lease expired is claimable again (its worker died or stalled); the
// claim (FOR UPDATE SKIP LOCKED) is the only way to run a job, and
// finish()/release() change a row only while the lease is still the
// caller's, so no job is run by two workers at once for longer than a
// stalled worker takes to notice its lost lease (it checks at every renew).
// The rows of an event go with the event (forget(), in the transaction that
// ends it).
//
// Every time here is the database server's clock (now()), never a
// machine's: workers on machines whose clocks differ agree on expiry.
// These functions use PostgreSQL-only SQL: callers check available() first
// (SQLite workspaces keep single-process delivery).

#include <cstdint>
#include <string>
#include <vector>

#include "core/store/store.hpp"

namespace emco::appcontext::jobs {

// Whether the workspace's database supports distributed delivery.
bool available(store::Store& st);

// The database server's clock in ms since the epoch (one round trip); the
// local clock where available() is false.
int64_t clock_ms(store::Store& st);

struct Offer {
  int64_t job = 0;  // the index of the job in the event's Work
  std::string app, cluster;
  int64_t steps = 0;
};
// Makes jobs of event `seq` of `ctx` claimable, collected by `coordinator`.
// A job already there keeps its state (a resumed event does not run a
// finished job again) unless it failed (it is ready again); every offered
// job is collected afresh by this coordinator (collect()).
void offer(store::Store& st, const std::string& ctx, int64_t seq, const std::string& coordinator,
           const std::vector<Offer>& jobs);

struct Ended {
  int64_t job = 0;
  bool ok = false;
  std::string message;  // failure
  int64_t steps = 0;
};
// The jobs `coordinator` offered for (ctx, seq) that ended since its last
// call (each reported once).
std::vector<Ended> collect(store::Store& st, const std::string& ctx, int64_t seq, const std::string& coordinator);

// Removes the rows of event `seq` of `ctx` (the event ended).
void forget(store::Store& st, const std::string& ctx, int64_t seq);

struct Claimed {
  int64_t id = 0;  // the row
  std::string ctx;
  int64_t seq = 0, job = 0;
  std::string app, cluster;
};
// Claims up to `limit` claimable jobs (ready, or running with an expired
// lease) for `worker` with a lease of `lease_ms`, oldest first, skipping
// rows another worker is claiming and contexts whose stop flag is set;
// only of context `only_ctx` unless it is empty.
std::vector<Claimed> claim(store::Store& st, const std::string& worker, int64_t lease_ms, size_t limit,
                           const std::string& only_ctx = {});
// Extends the lease of every job `worker` runs; returns their row ids (a
// row missing from it is no longer the worker's: its lease expired and
// another worker claimed it, or its event ended).
std::vector<int64_t> renew(store::Store& st, const std::string& worker, int64_t lease_ms);
// Records the end of a job; false when the row is no longer the worker's
// (nothing changed).
bool finish(store::Store& st, int64_t id, const std::string& worker, bool ok, const std::string& message);
// Makes a job the worker did not finish claimable again at once.
void release(store::Store& st, int64_t id, const std::string& worker);

// Whether a job could be claimed now (ready, or its lease expired).
bool claimable(store::Store& st, const std::string& only_ctx = {});

}  // namespace emco::appcontext::jobs
