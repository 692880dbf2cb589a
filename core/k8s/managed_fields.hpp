#pragma once
// Server-side apply field ownership, as kube-apiserver keeps it in
// metadata.managedFields (structured-merge-diff semantics):
//
// - A FieldSet is a tree of path elements spelled as in fieldsV1:
//   "f:<field>", "k:<json of list-map keys>", "v:<json value>", "i:<index>".
//   A node is a member when the field itself is owned (a leaf, an atomic
//   list or map, or a list item: "." in fieldsV1).
// - apply() merges a manager's intent into the live object, reports fields
//   another manager owns with a different value as conflicts (unless forced),
//   removes fields this manager applied before and no longer does (when no one
//   else owns them) and rewrites that manager's Apply entry.
// - record_update() gives a non-apply writer (create, PUT, patch) ownership of
//   the fields it changed and takes them from everyone else.
//
// Server-managed metadata (name, namespace, uid, resourceVersion, generation,
// creationTimestamp, managedFields, deletion*) and apiVersion/kind are never
// owned. With Scope::main, status is not owned (and is dropped from applied
// intent); with Scope::status, only status is.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/k8s/schema.hpp"

namespace emco::k8s {

struct FieldSet {
  bool member = false;
  std::map<std::string, FieldSet> children;

  bool empty() const;  // no member anywhere
  bool operator==(const FieldSet& other) const = default;
  // Every member path, in SMD's string form (".spec.replicas",
  // ".spec.template.spec.containers[name=\"web\"].image").
  std::vector<std::string> paths() const;
};

FieldSet set_union(const FieldSet& a, const FieldSet& b);
FieldSet set_difference(const FieldSet& a, const FieldSet& b);
FieldSet set_intersection(const FieldSet& a, const FieldSet& b);

FieldSet fields_from_v1(const nlohmann::json& fields_v1);
nlohmann::json fields_to_v1(const FieldSet& set);

enum class Scope { main, status };

// The fields an object sets (for apply: the fields a manager's intent sets).
FieldSet object_fields(const nlohmann::json& object, const Schema& schema, Scope scope = Scope::main);

// Fills absent list-map key fields with the API's defaults (a container
// port's protocol), as the server does before it computes ownership.
void default_list_keys(nlohmann::json& object, const Schema& schema);

struct Manager {
  std::string name;         // fieldManager
  std::string api_version;  // of the request, "apps/v1"
  std::string time;         // RFC 3339, "2026-01-01T00:00:00Z"
  Scope scope = Scope::main;
};

struct Conflict {
  std::string manager;  // display form: "\"helm\"" or "\"kubectl-edit\" using apps/v1 at <time>"
  std::string path;     // ".spec.replicas"
};


// Server-side apply. `live` is the stored object (null when absent) and is
// updated in place to the merged result with managedFields rewritten;
// `intent` is the manager's applied configuration (already defaulted with
// default_list_keys). Returns the conflicts; when there are any and `force`
// is false, `live` is left unchanged.
std::vector<Conflict> apply(nlohmann::json& live, const nlohmann::json& intent, const Schema& schema,
                            const Manager& manager, bool force);

// Ownership after a non-apply write from `old_object` (null on create) to
// `new_object`; rewrites new_object's metadata.managedFields.
void record_update(const nlohmann::json& old_object, nlohmann::json& new_object, const Schema& schema,
                   const Manager& manager);

// A field of a manager's applied intent whose live value differs: drift.
struct FieldDrift {
  std::string path;     // SMD's string form, ".spec.replicas"
  std::string manager;  // the manager owning the live field now ("" when no one: it was removed)
  std::string operation;  // that manager's entry: "Update" or "Apply"
  std::string time;     // when that manager last wrote (RFC 3339, "" when unknown)
  std::string planned;  // the intent's value, JSON text
  std::string live;     // the live value, JSON text; "" when the field is absent
};

// The fields `intent` sets (as object_fields(intent) with Scope::main; the
// intent defaulted with default_list_keys by the caller, as apply() wants
// it) whose value in `live` differs, with who owns each now according to
// live's metadata.managedFields. Fields the intent does not set (status,
// server defaults, fields only other managers own) never count. A list item
// or map missing from `live` is one drift, not one per field under it.
std::vector<FieldDrift> drifted_fields(const nlohmann::json& live, const nlohmann::json& intent, const Schema& schema);

// "Apply failed with 1 conflict: conflict with \"helm\": .spec.replicas", and
// the grouped multi-conflict form, worded as kube-apiserver words them.
std::string conflict_message(const std::vector<Conflict>& conflicts);

}  // namespace emco::k8s
