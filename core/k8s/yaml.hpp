#pragma once
// Reads one Kubernetes object from text that is JSON or YAML (the API accepts
// both for server-side apply). YAML scalars type as sigs.k8s.io/yaml types
// them: unquoted true/false, null/~/empty, integers and floats become JSON
// booleans, null and numbers; quoted scalars stay strings.

#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace emco::k8s {

// Throws emco::Error(invalid) with the parser's message on bad input or when
// the text holds more than one YAML document.
nlohmann::json parse_json_or_yaml(std::string_view text);

}  // namespace emco::k8s
