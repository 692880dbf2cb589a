#pragma once
// Private to core/appcontext: helpers the row files share (persistence,
// header, status and queue rows), which reach the workspace database through
// store::Database (core/store/database.hpp).

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/store/store.hpp"

namespace emco::appcontext {

// The context meta as stored (a JSON object of strings) and back.
std::string meta_text(const std::map<std::string, std::string>& meta);
std::map<std::string, std::string> meta_from(const std::string& text);
// meta_from(text)'s entry `name`, without building the map.
std::optional<std::string> meta_value(std::string_view text, const std::string& name);
// A stored JSON array of strings (a context's children).
std::vector<std::string> strings_from(const std::string& text);
// A context's header row by id, the meta its column 2: the one statement
// header(), meta_field() and exists_in() read, so that a command asking
// several of them prepares one (a prepare costs more than the lookup).
inline constexpr std::string_view k_header_sql =
    "SELECT owner_kind, owner_key, meta, status, desired, COALESCE(parent_id, ''), children, status_ctx, stop_flag, "
    "pending_terminate, revision, created FROM ac_contexts WHERE id = ?";
// Whether context `id` is stored.
bool exists_in(store::Database& db, const std::string& id);
// Throws Error(not_found) naming the context.
[[noreturn]] void no_context(const std::string& id);

}  // namespace emco::appcontext
