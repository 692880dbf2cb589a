#include "core/plan/object.hpp"

#include <vector>

#include <nlohmann/json.hpp>

#include "core/k8s/yaml.hpp"
#include "core/template/value.hpp"
#include "core/util/error.hpp"

namespace emco::controllers {

nlohmann::json parse_object(std::string_view text, const std::string& what) {
  try {
    return k8s::parse_json_or_yaml(text);
  } catch (const Error& e) {
    throw e.with_context(what);
  }
}

std::string object_yaml(const nlohmann::json& object) { return tmpl::to_yaml(tmpl::Value::from_json(object)); }

nlohmann::json* pod_template(nlohmann::json& object) {
  if (!object.is_object()) return nullptr;
  if (object.value("kind", nlohmann::json()) == "Pod") return &object;
  static const std::vector<const char*> k_template = {"spec", "template"};
  static const std::vector<const char*> k_cron = {"spec", "jobTemplate", "spec", "template"};
  const auto& path = object.value("kind", nlohmann::json()) == "CronJob" ? k_cron : k_template;
  nlohmann::json* at = &object;
  for (const char* p : path) {
    auto it = at->find(p);
    if (it == at->end() || !it->is_object()) return nullptr;
    at = &*it;
  }
  return at;
}

std::string api_group(const std::string& api_version) {
  auto slash = api_version.find('/');
  return slash == std::string::npos ? std::string() : api_version.substr(0, slash);
}

}  // namespace emco::controllers
