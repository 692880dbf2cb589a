#pragma once
// Private to core/appcontext: helpers the row files share (persistence,
// header, status and queue rows). SQLiteCpp's types are only declared here;
// the .cpp files that call these include store_impl.hpp.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/store/store.hpp"

namespace SQLite {
class Column;
}

namespace emco::appcontext {

// A blob or text column's bytes, valid until the statement steps again.
std::string_view blob_view(const SQLite::Column& c);
// The context meta as stored (a JSON object of strings) and back.
std::string meta_text(const std::map<std::string, std::string>& meta);
std::map<std::string, std::string> meta_from(const std::string& text);
// A stored JSON array of strings (a context's children).
std::vector<std::string> strings_from(const std::string& text);
// Whether context `id` is stored.
bool exists_impl(store::Store::Impl& impl, const std::string& id);
// Throws Error(not_found) naming the context.
[[noreturn]] void no_context(const std::string& id);

}  // namespace emco::appcontext
