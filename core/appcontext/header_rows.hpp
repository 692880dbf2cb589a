#pragma once
// A stored context's header row: read without its apps, and its status,
// desired state, flags and meta updated in place.

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

// Header fields without loading apps (cheap).
struct Header {
  std::string id, owner_kind, owner_key, status, desired, parent, status_context, created;
  std::map<std::string, std::string> meta;
  std::vector<std::string> children;
  bool stop = false, pending_terminate = false;
  int64_t revision = 0;
};
Header header(store::Store& st, const std::string& id);  // Error(not_found)
// header(), or nullopt when context `id` is not stored.
std::optional<Header> find_header(store::Store& st, const std::string& id);
// One field of the header's meta, as Header::meta has it, or nullopt when
// the meta has no such field: reads the row as header() does, but neither
// copies its other columns nor builds the whole map (the hooks, rollout and
// drift-repair logs each live in one field). Error(not_found) as header().
std::optional<std::string> meta_field(store::Store& st, const std::string& id, const std::string& name);
// meta_field(), or nullopt when context `id` is not stored either: one
// read where exists() and meta_field() were two.
std::optional<std::string> find_meta_field(store::Store& st, const std::string& id, const std::string& name);

void set_status(store::Store& st, const std::string& id, const std::string& current);
void set_desired(store::Store& st, const std::string& id, const std::string& desired);
void set_stop(store::Store& st, const std::string& id, bool stop);
void set_pending_terminate(store::Store& st, const std::string& id, bool flag);
void set_meta(store::Store& st, const std::string& id, const std::string& name, const std::string& value);
// Moves the context to another owner (a DIG migrate hands its history to the
// target DIG, so list(), delete and rollback of the target find it).
void set_owner(store::Store& st, const std::string& id, const resource::Key& owner);

}  // namespace emco::appcontext
