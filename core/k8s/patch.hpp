#pragma once
// The three patch formats of the Kubernetes API, applied to JSON documents:
//
// - json_patch: RFC 6902 (add, remove, replace, move, copy, test) with RFC
//   6901 pointers ("~0", "~1", "-" to append). All or nothing: on error the
//   input is untouched and emco::Error(invalid) names the failing operation.
// - merge_patch: RFC 7386 (objects merge, null deletes, the rest replaces).
// - strategic_merge_patch: Kubernetes' strategic merge patch for built-in
//   kinds: lists with patchStrategy=merge merge by their patchMergeKey (or as
//   a set of primitives), other lists are replaced; directives `$patch:
//   replace|delete|merge` (on maps and list items), `$retainKeys`,
//   `$deleteFromPrimitiveList/<field>` and `$setElementOrder/<field>`.
//   The list semantics come from a Schema (core/k8s/schema.hpp).

#include <nlohmann/json_fwd.hpp>

#include "core/k8s/schema.hpp"

namespace emco::k8s {

nlohmann::json json_patch(const nlohmann::json& document, const nlohmann::json& patch);
nlohmann::json merge_patch(const nlohmann::json& document, const nlohmann::json& patch);
nlohmann::json strategic_merge_patch(const nlohmann::json& document, const nlohmann::json& patch,
                                     const Schema& schema);

// A null in an object a client sends means "not set": the API server decodes it
// to the field's zero value, which the stored object leaves out, and an applied
// configuration that no longer sets a field gives it up. Removes, recursively,
// every null member of an object and every null item of a list. The kube
// client sends objects pruned this way; the simulator prunes what it receives.
void prune_nulls(nlohmann::json& value);

}  // namespace emco::k8s
