#pragma once
// Label and field selectors as the Kubernetes API parses them (internal to
// sim). Label: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x,y)`,
// `a`, `!a`, comma-separated (ANDed). Field: `path=v`, `path==v`, `path!=v`.

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace emco::sim::detail {

struct LabelRequirement {
  enum Op { equals, not_equals, in, not_in, exists, not_exists } op;
  std::string key;
  std::vector<std::string> values;
};

struct LabelSelector {
  std::vector<LabelRequirement> requirements;
  bool empty() const { return requirements.empty(); }
  bool matches(const nlohmann::json& object) const;
};

struct FieldRequirement {
  std::string path;  // "metadata.name"
  bool negate = false;
  std::string value;
};

struct FieldSelector {
  std::vector<FieldRequirement> requirements;
  bool empty() const { return requirements.empty(); }
  bool matches(const nlohmann::json& object) const;
};

// Both throw emco::Error(invalid) with the API's wording on bad syntax.
LabelSelector parse_label_selector(const std::string& text);
// `kind` restricts the field paths to those the API supports for it.
FieldSelector parse_field_selector(const std::string& text, const std::string& kind);

}  // namespace emco::sim::detail
