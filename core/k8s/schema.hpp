#pragma once
// How the fields of one kind merge: which lists are associative (keyed by
// `x-kubernetes-list-map-keys` for server-side apply, by `patchMergeKey` for
// strategic merge patch), which are sets, which lists and maps are atomic.
// Built-in kinds carry the tags of the upstream Go types (k8s.io/api v1.32);
// custom resources get theirs from the CRD's openAPIV3Schema, and anything
// not described is "untyped": maps granular, lists atomic.
//
// Paths name fields only, joined by '.', with list items transparent:
// "spec.template.spec.containers.ports" is the ports list of any container.

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace emco::k8s {

enum class ListType { atomic, set, map };

struct ListSchema {
  ListType type = ListType::atomic;
  std::vector<std::string> keys;  // list-map keys, for ListType::map
  // Values the API server defaults for absent key fields before it computes
  // field ownership (a container port's protocol is "TCP").
  std::map<std::string, std::string> key_defaults;
  // Strategic merge patch: patchStrategy=merge with this patchMergeKey
  // (empty key + smp_merge = a list of primitives merged as a set).
  bool smp_merge = false;
  std::string merge_key;
  bool retain_keys = false;  // patchStrategy=retainKeys
};

class Schema {
public:
  // The schema of a built-in kind, or the untyped schema for anything else.
  static const Schema& for_kind(std::string_view group, std::string_view kind);
  static const Schema& untyped();
  // A custom resource's schema from the version's openAPIV3Schema
  // (x-kubernetes-list-type, -list-map-keys, -map-type).
  static Schema from_openapi(const nlohmann::json& open_api_v3_schema);

  // nullptr: an atomic list without strategic merge.
  const ListSchema* list(std::string_view path) const;
  bool atomic_map(std::string_view path) const;
  // Strategic merge patch is defined for built-in kinds only (the API answers
  // 415 for custom resources).
  bool supports_strategic_merge() const { return m_builtin; }

  void add_list(std::string path, ListSchema list);
  void add_atomic_map(std::string path);

private:
  std::map<std::string, ListSchema, std::less<>> m_lists;
  std::set<std::string, std::less<>> m_atomic_maps;
  bool m_builtin = false;
  friend Schema make_builtin_schema(std::string_view group, std::string_view kind);
};

// The child path of `path` for field `name`.
std::string child_path(std::string_view path, std::string_view name);

}  // namespace emco::k8s
