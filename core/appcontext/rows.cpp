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

std::optional<std::string> meta_value(std::string_view text, const std::string& name) {
  json j = json::parse(text.begin(), text.end());
  if (!j.is_object()) {  // what meta_from makes of it (nothing, or its error)
    auto meta = meta_from(std::string(text));
    auto it = meta.find(name);
    return it == meta.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  auto it = j.find(name);
  if (it == j.end()) return std::nullopt;
  return it->is_string() ? it->get<std::string>() : it->dump();
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
