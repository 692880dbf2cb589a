#pragma once
// Kubernetes objects as the planner and the action controllers handle them:
// manifest text → JSON → edited → YAML text again. The YAML is written the
// way Helm's toYaml / sigs.k8s.io/yaml write it (keys sorted), so equal
// objects always give equal text and equal content hashes.

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace emco::controllers {

// Parses one object from YAML or JSON text; Error(invalid) prefixed with `what`.
nlohmann::json parse_object(std::string_view text, const std::string& what);
// The object as YAML text.
std::string object_yaml(const nlohmann::json& object);
// The pod template of a workload, where EMCO's network controllers
// (ovnaction, sfc, sfcclient) put annotations and labels: a Pod is its own
// (the object itself), a CronJob's is spec.jobTemplate.spec.template, any
// other object's is spec.template. Returns that object (its `metadata` is
// where they go), or nullptr when the object has no such object.
nlohmann::json* pod_template(nlohmann::json& object);
// The API group of an apiVersion ("apps/v1" → "apps", "v1" → "").
std::string api_group(const std::string& api_version);

}  // namespace emco::controllers
