#include "core/appcontext/rows.hpp"

#include <nlohmann/json.hpp>

#include "core/store/database.hpp"
#include "core/util/error.hpp"

namespace emco::appcontext {

using nlohmann::json;

std::string meta_text(const std::map<std::string, std::string>& meta) {
  json j = json::object();
  for (const auto& [k, v] : meta) j[k] = v;
  return j.dump();
}

std::map<std::string, std::string> meta_from(const std::string& text) {
  std::map<std::string, std::string> out;
  json j = json::parse(text);
  for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
  return out;
}

namespace {

// Parses a stored meta for one member's string value without building the
// document (`emco dig status` reads three fields of one meta: hooks,
// rollout, drift repairs, ~25K instructions each as a whole json). What it
// does not handle itself it leaves to meta_from (`complete` false): a meta
// that is not an object, a value of `name` that is not a string.
struct MemberFinder {
  const std::string& name;
  std::optional<std::string> value;
  bool complete = true;
  int depth = 0;
  bool at_name = false;  // the last key at depth 1 was `name`

  // A value at the current depth; false stops the parse.
  bool other_value() {
    if (depth == 0 || at_name) complete = false;
    return complete;
  }
  bool null() { return other_value(); }
  bool boolean(bool) { return other_value(); }
  bool number_integer(json::number_integer_t) { return other_value(); }
  bool number_unsigned(json::number_unsigned_t) { return other_value(); }
  bool number_float(json::number_float_t, const std::string&) { return other_value(); }
  bool binary(json::binary_t&) { return other_value(); }
  bool string(std::string& s) {
    if (depth == 0) complete = false;
    else if (at_name) value = std::move(s);  // a later duplicate wins, as in json::parse
    at_name = false;
    return complete;
  }
  bool start_object(std::size_t) {
    if (depth == 0) {
      ++depth;
      return true;
    }
    return nested();
  }
  bool start_array(std::size_t) { return nested(); }
  // An object or array that is not the root object: fine unless it is `name`'s value.
  bool nested() {
    if (depth == 0 || at_name) complete = false;
    ++depth;
    return complete;
  }
  bool key(std::string& k) {
    at_name = depth == 1 && k == name;
    return true;
  }
  bool end_object() {
    --depth;
    return true;
  }
  bool end_array() {
    --depth;
    return true;
  }
  // The exception json::parse throws for the same text.
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& e) {
    throw e;
  }
};

}  // namespace

std::optional<std::string> meta_value(std::string_view text, const std::string& name) {
  MemberFinder finder{name};
  json::sax_parse(text.begin(), text.end(), &finder);
  if (finder.complete) return std::move(finder.value);
  auto meta = meta_from(std::string(text));
  auto it = meta.find(name);
  return it == meta.end() ? std::nullopt : std::optional<std::string>(it->second);
}

std::vector<std::string> strings_from(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& v : json::parse(text)) out.push_back(v.get<std::string>());
  return out;
}

bool exists_in(store::Database& db, const std::string& id) {
  auto& s = db.statement(k_header_sql);
  s.bind(1, id);
  const bool found = s.step();
  s.reset();
  return found;
}

void no_context(const std::string& id) { fail(ErrorKind::not_found, "appcontext '" + id + "' not found"); }

}  // namespace emco::appcontext
