#pragma once
// Reference discovery (resources.md §0): which other resources a document
// refers to, computed from its kind's referential schema, its own key and its
// spec. The store checks that they exist and records them so a referenced
// resource cannot be deleted.

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/resource/kinds.hpp"

namespace emco::resource {

struct ReferenceTarget {
  const Kind* kind = nullptr;
  Key key;                 // complete key of the referenced resource
  std::string field;       // where in spec it was named, for messages ("spec.logicalCloud")
  // RefType::label: every clusterLabel resource under provider `key[clusterProvider]` whose
  // label equals `label` (the key then holds only the provider).
  bool label_set = false;
  std::string label;
  bool soft = false;       // Reference::soft: may be missing (the store records it only when it exists)
};

// References of a resource of kind `k` with key `own` and spec `spec`.
// Incomplete keys are dropped, as upstream does.
std::vector<ReferenceTarget> compute_references(const Kind& k, const Key& own, const nlohmann::json& spec);

}  // namespace emco::resource
