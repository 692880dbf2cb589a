#pragma once
// Internal to core/sync: what the queue (queue.cpp) and the delivery
// workers (worker.cpp) share — the executor's Work of a queued event and
// the recording of its statuses — so that a job runs the same steps and
// records the same rows whichever process runs it.

#include <string>
#include <vector>

#include "core/appcontext/appcontext.hpp"
#include "core/store/store.hpp"
#include "core/sync/engine.hpp"

namespace emco::sync {

struct EventWork {
  // Read only: the context read back (empty for the other events, whose Work
  // holds what delivery needs — names and shared texts —, so a fleet's
  // context is not in memory twice while it is delivered).
  appcontext::AppContext context;
  Work work;                       // empty for Read
  std::string status_ctx;          // where its statuses are recorded
};
// The Work of queued event `entry` of `ctx`; the same jobs in the same order
// every time it is built. Throws Error when an update's other context is gone.
EventWork event_work(store::Store& st, const std::string& ctx, const appcontext::QueueEntry& entry);

// Records the executor's updates under `status_ctx` in one transaction.
void record_updates(store::Store& st, const std::string& status_ctx, const std::vector<Update>& batch);

}  // namespace emco::sync
