#pragma once
// The child contexts a DIG context still owes (spec/lifecycle.md §7): the
// record that they are to be made once the context is delivered, kept with
// the context so that whichever process finishes the delivery (the one that
// started the operation, `emco sync`, `emco serve`'s delivery thread, a
// delivery worker) makes them, exactly once (core/lifecycle, the children step).

#include <optional>
#include <string>
#include <vector>

#include "core/store/store.hpp"

namespace emco::appcontext {

struct OwedChildren {
  std::string ctx;                    // the context whose children are owed
  std::vector<std::string> replaced;  // contexts it replaced whose children are terminated first, oldest first
  std::string error;                  // why the last attempt failed ("" when none failed)
};

// Records that `ctx` (stored) owes its children, after the children of
// `replaced` are terminated; replaces a record `ctx` has. Call it inside the
// write transaction that queues the context's delivery.
void owe_children(store::Store& st, const std::string& ctx, const std::vector<std::string>& replaced);
// The record of `ctx`, if it owes its children.
std::optional<OwedChildren> owed_children(store::Store& st, const std::string& ctx);
// The records of contexts whose status is `status` (Instantiated: delivered,
// their children still to make), oldest context first.
std::vector<OwedChildren> owed_children_with_status(store::Store& st, const std::string& status);
// Forgets the record of `ctx`. Returns whether there was one: inside a write
// transaction, true means this caller is the one that settles it.
bool settle_children(store::Store& st, const std::string& ctx);
// Keeps `error` as why the last attempt for `ctx` failed ("" clears it);
// nothing when `ctx` owes nothing (settled meanwhile).
void note_children_error(store::Store& st, const std::string& ctx, const std::string& error);

}  // namespace emco::appcontext
