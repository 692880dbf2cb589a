#include "core/k8s/fields.hpp"

#include <nlohmann/json.hpp>

namespace emco::k8s {

using json = nlohmann::json;

const json& field(const json& object, std::string_view key) {
  static const json k_null;
  if (!object.is_object()) return k_null;
  auto it = object.find(key);
  return it == object.end() ? k_null : *it;
}

std::string str_field(const json& object, std::string_view key) {
  const json& v = field(object, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

const json& array_field(const json& object, std::string_view key) {
  static const json k_empty = json::array();
  const json& v = field(object, key);
  return v.is_array() ? v : k_empty;
}

}  // namespace emco::k8s
