#pragma once
// The per-context event queue (Instantiate, Update, Terminate ...) and the
// set of contexts with pending events.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/appcontext/value.hpp"
#include "core/store/store.hpp"

namespace emco::appcontext {

struct QueueEntry {
  int64_t seq = 0;
  std::string event;
  std::string ucid;  // the "update from" context for Update, else ""
  std::string status = queue_status::pending;
  std::string message;
};
// Appends an event (status Pending) and adds `ctx` to the active set; returns its seq.
int64_t enqueue(store::Store& st, const std::string& ctx, const std::string& event, const std::string& ucid = {});
std::optional<QueueEntry> next_pending(store::Store& st, const std::string& ctx);
// Whether `ctx` has a Pending event: next_pending() for a caller that needs
// no entry (a statement half as costly to prepare, which a read-only
// command pays at each start).
bool has_pending(store::Store& st, const std::string& ctx);
void mark(store::Store& st, const std::string& ctx, int64_t seq, const std::string& status,
          const std::string& message = {});
std::vector<QueueEntry> queue(store::Store& st, const std::string& ctx);
std::vector<std::string> active_contexts(store::Store& st);
// Whether any context is active: active_contexts() is empty exactly when
// this is false (its statement a third as costly to prepare).
bool any_active(store::Store& st);
void deactivate(store::Store& st, const std::string& ctx);
// Puts `ctx` back in the active set (its queued work is resumed again: a
// rollout that was waiting for 'emco dig rollout resume').
void activate(store::Store& st, const std::string& ctx);

}  // namespace emco::appcontext
