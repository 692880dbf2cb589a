#include "core/k8s/patch.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/util/error.hpp"

namespace emco::k8s {

using nlohmann::json;

// ---- RFC 6902 and RFC 7386: nlohmann's patch() and merge_patch() ----
//
// kubectl and the API server apply patches with Go's evanphx/json-patch. Where it differs from
// nlohmann in a way a user of emco sees, a check below does what evanphx does first:
// - Errors read as the API server's ("remove operation does not apply: doc is missing path:
//   '/x'"): the simulator returns them in its 422 responses and GAC quotes them.
// - A path through a number or string is missing: evanphx fails the operation, nlohmann's
//   add would do nothing (its assertion is compiled out).
// - "test" with a null value passes on a missing member of an object (evanphx reads it as null).
// Array indexes with a leading zero ("01") are refused, as before; evanphx would read 1.

namespace {

[[noreturn]] void patch_fail(const std::string& op, const std::string& path, const std::string& why) {
  fail(ErrorKind::invalid, op + " operation does not apply: " + why + ": '" + path + "'");
}

const json& member(const json& op, const char* name, const std::string& op_name) {
  auto it = op.find(name);
  if (it == op.end()) fail(ErrorKind::invalid, op_name + " operation is missing '" + name + "'");
  return *it;
}

std::string string_member(const json& op, const char* name, const std::string& op_name) {
  const json& v = member(op, name, op_name);
  if (!v.is_string()) fail(ErrorKind::invalid, op_name + " operation has a non-string '" + name + "'");
  return v.get<std::string>();
}

json::json_pointer pointer(const std::string& text) {
  try {
    return json::json_pointer(text);
  } catch (const json::exception&) {
    fail(ErrorKind::invalid, "invalid JSON pointer '" + text + "': must start with '/' and escape '~' as ~0 or ~1");
  }
}

// evanphx reads a missing member of an existing object as null, so "test" with a null value
// passes there (not for a missing array item or a missing parent).
bool null_test_of_missing_member(const json& doc, const json::json_pointer& ptr) {
  if (ptr.empty() || doc.contains(ptr)) return false;
  auto parent = ptr.parent_pointer();
  return doc.contains(parent) && doc.at(parent).is_object();
}

// The container an add (or the add half of move and copy) writes into must exist.
void require_parent(const json& doc, const json::json_pointer& ptr, const std::string& op, const std::string& path) {
  if (ptr.empty()) return;
  auto parent = ptr.parent_pointer();
  if (!doc.contains(parent) || !doc.at(parent).is_structured()) patch_fail(op, path, "doc is missing path");
}

}  // namespace

json json_patch(const json& document, const json& patch) {
  if (!patch.is_array()) fail(ErrorKind::invalid, "json patch must be an array of operations");
  json doc = document;
  for (const auto& op : patch) {
    if (!op.is_object() || !op.contains("op") || !op["op"].is_string())
      fail(ErrorKind::invalid, "json patch operation must be an object with an 'op'");
    std::string name = op["op"].get<std::string>();
    std::string path = string_member(op, "path", name);
    auto ptr = pointer(path);
    if (name == "add" || name == "replace" || name == "test") {
      member(op, "value", name);
    } else if (name == "move" || name == "copy") {
      std::string from = string_member(op, "from", name);
      pointer(from);
      if (name == "move" && path.size() > from.size() && path.compare(0, from.size(), from) == 0 &&
          path[from.size()] == '/')
        patch_fail(name, path, "cannot move a value into one of its children");
    } else if (name != "remove") {
      fail(ErrorKind::invalid, "unexpected json patch operation '" + name + "'");
    }
    if (name == "test" && op["value"].is_null() && null_test_of_missing_member(doc, ptr)) continue;
    if (name == "add" || name == "move" || name == "copy") require_parent(doc, ptr, name, path);
    try {
      doc.patch_inplace(json::array({op}));
    } catch (const json::exception& e) {
      if (e.id == 501) fail(ErrorKind::invalid, "testing value '" + path + "' failed");
      if (e.id == 401 && name == "add") patch_fail(name, path, "index out of bounds");
      patch_fail(name, path, "doc is missing path");
    }
  }
  return doc;
}

json merge_patch(const json& document, const json& patch) {
  json out = document;
  out.merge_patch(patch);
  return out;
}

// ---- strategic merge patch ----

namespace {

constexpr const char* k_patch = "$patch";
constexpr const char* k_retain = "$retainKeys";
constexpr std::string_view k_delete_prefix = "$deleteFromPrimitiveList/";
constexpr std::string_view k_order_prefix = "$setElementOrder/";

bool is_directive(const std::string& key) { return !key.empty() && key[0] == '$'; }

json merge_map(json original, const json& patch, const Schema& schema, const std::string& path);
json merge_list(const json& original, const json& patch, const Schema& schema, const std::string& path);

// A patch value meant for a field the original lacks: directives still
// apply (against nothing), so they never leak into the object.
json fresh(const json& patch, const Schema& schema, const std::string& path) {
  if (patch.is_object()) return merge_map(json::object(), patch, schema, path);
  if (patch.is_array()) return merge_list(json::array(), patch, schema, path);
  return patch;
}

json without_directives(const json& m) {
  json out = json::object();
  for (const auto& [k, v] : m.items())
    if (!is_directive(k)) out[k] = v;
  return out;
}

void reorder(json& list, const json& order, const ListSchema* ls) {
  if (!list.is_array() || !order.is_array()) return;
  auto key_of = [&](const json& item) -> json {
    if (ls && !ls->merge_key.empty() && item.is_object()) return item.value(ls->merge_key, json());
    return item;
  };
  json sorted = json::array();
  std::vector<bool> used(list.size(), false);
  for (const auto& o : order) {
    json want = (ls && !ls->merge_key.empty() && o.is_object()) ? o.value(ls->merge_key, json()) : o;
    for (size_t i = 0; i < list.size(); ++i)
      if (!used[i] && key_of(list[i]) == want) {
        sorted.push_back(list[i]);
        used[i] = true;
        break;
      }
  }
  for (size_t i = 0; i < list.size(); ++i)
    if (!used[i]) sorted.push_back(list[i]);
  list = std::move(sorted);
}

json merge_map(json original, const json& patch, const Schema& schema, const std::string& path) {
  if (!original.is_object()) original = json::object();
  if (auto p = patch.find(k_patch); p != patch.end()) {
    std::string directive = p->is_string() ? p->get<std::string>() : "";
    if (directive == "replace") return fresh(without_directives(patch), schema, path);
    if (directive == "delete") return json();
    if (directive != "merge") fail(ErrorKind::invalid, "unknown patch type '" + directive + "' in '$patch'");
  }
  for (const auto& [k, v] : patch.items()) {
    if (k.rfind(k_delete_prefix, 0) != 0) continue;
    std::string field = k.substr(k_delete_prefix.size());
    auto it = original.find(field);
    if (it == original.end() || !it->is_array() || !v.is_array()) continue;
    json kept = json::array();
    for (const auto& item : *it)
      if (std::find(v.begin(), v.end(), item) == v.end()) kept.push_back(item);
    *it = std::move(kept);
  }
  for (const auto& [k, v] : patch.items()) {
    if (is_directive(k)) continue;
    std::string child = child_path(path, k);
    if (v.is_null()) {
      original.erase(k);
      continue;
    }
    auto it = original.find(k);
    if (it == original.end()) {
      json value = fresh(v, schema, child);
      if (!value.is_null()) original[k] = std::move(value);
    } else if (v.is_object() && it->is_object()) {
      json merged = merge_map(*it, v, schema, child);
      if (merged.is_null())
        original.erase(it);
      else
        *it = std::move(merged);
    } else if (v.is_array() && it->is_array()) {
      *it = merge_list(*it, v, schema, child);
    } else {
      *it = fresh(v, schema, child);
    }
  }
  if (auto r = patch.find(k_retain); r != patch.end() && r->is_array()) {
    for (auto it = original.begin(); it != original.end();) {
      if (std::find(r->begin(), r->end(), it.key()) == r->end())
        it = original.erase(it);
      else
        ++it;
    }
  }
  for (const auto& [k, v] : patch.items()) {
    if (k.rfind(k_order_prefix, 0) != 0) continue;
    std::string field = k.substr(k_order_prefix.size());
    if (auto it = original.find(field); it != original.end())
      reorder(*it, v, schema.list(child_path(path, field)));
  }
  return original;
}

json merge_list(const json& original, const json& patch, const Schema& schema, const std::string& path) {
  const ListSchema* ls = schema.list(path);
  bool replace_all = false;
  json items = json::array();
  for (const auto& item : patch) {
    if (item.is_object() && item.size() == 1 && item.contains(k_patch)) {
      if (item[k_patch] == "replace") replace_all = true;
      continue;
    }
    items.push_back(item);
  }
  if (replace_all || !ls || !ls->smp_merge) {
    json out = json::array();
    for (const auto& item : items) {
      if (item.is_object() && item.value(k_patch, "") == "delete") continue;
      out.push_back(fresh(item, schema, path));
    }
    return out;
  }
  json out = original;
  if (ls->merge_key.empty()) {
    for (const auto& item : items)
      if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
    return out;
  }
  const std::string& key = ls->merge_key;
  for (const auto& item : items) {
    if (!item.is_object()) {
      out.push_back(item);
      continue;
    }
    if (!item.contains(key))
      fail(ErrorKind::invalid, "map: " + item.dump() + " does not contain declared merge key: " + key);
    const json& want = item[key];
    auto found = std::find_if(out.begin(), out.end(),
                              [&](const json& o) { return o.is_object() && o.contains(key) && o[key] == want; });
    if (item.value(k_patch, "") == "delete") {
      if (found != out.end()) out.erase(found);
      continue;
    }
    if (found != out.end()) {
      json merged = merge_map(*found, item, schema, path);
      if (merged.is_null())
        out.erase(found);
      else
        *found = std::move(merged);
    } else {
      json value = merge_map(json::object(), item, schema, path);
      if (!value.is_null()) out.push_back(std::move(value));
    }
  }
  return out;
}

}  // namespace

json strategic_merge_patch(const json& document, const json& patch, const Schema& schema) {
  if (!patch.is_object()) fail(ErrorKind::invalid, "strategic merge patch must be a JSON object");
  json out = merge_map(document, patch, schema, "");
  return out.is_null() ? json::object() : out;
}

void prune_nulls(nlohmann::json& value) {
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end();) {
      if (it->is_null()) {
        it = value.erase(it);
      } else {
        prune_nulls(*it);
        ++it;
      }
    }
  } else if (value.is_array()) {
    nlohmann::json kept = nlohmann::json::array();
    for (auto& item : value)
      if (!item.is_null()) {
        prune_nulls(item);
        kept.push_back(std::move(item));
      }
    value = std::move(kept);
  }
}

}  // namespace emco::k8s
