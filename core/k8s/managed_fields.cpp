#include "core/k8s/managed_fields.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace emco::k8s {

using nlohmann::json;

bool FieldSet::empty() const {
  if (member) return false;
  for (const auto& [k, c] : children)
    if (!c.empty()) return false;
  return true;
}

namespace {

std::string element_display(const std::string& e) {
  std::string_view body(e);
  body.remove_prefix(2);
  switch (e[0]) {
    case 'f':
      return "." + std::string(body);
    case 'k': {
      json keys = json::parse(body, nullptr, false);
      std::string out = "[";
      bool first = true;
      if (keys.is_object())
        for (const auto& [k, v] : keys.items()) {
          if (!first) out += ",";
          first = false;
          out += k + "=" + v.dump();
        }
      return out + "]";
    }
    case 'v':
      return "[=" + std::string(body) + "]";
    case 'i':
      return "[" + std::string(body) + "]";
  }
  return std::string(e);
}

void collect_paths(const FieldSet& s, const std::string& prefix, std::vector<std::string>& out) {
  if (s.member) out.push_back(prefix);
  for (const auto& [e, c] : s.children) collect_paths(c, prefix + element_display(e), out);
}

}  // namespace

std::vector<std::string> FieldSet::paths() const {
  std::vector<std::string> out;
  collect_paths(*this, "", out);
  return out;
}

FieldSet set_union(const FieldSet& a, const FieldSet& b) {
  FieldSet out = a;
  out.member = a.member || b.member;
  for (const auto& [e, c] : b.children) {
    auto it = out.children.find(e);
    if (it == out.children.end())
      out.children.emplace(e, c);
    else
      it->second = set_union(it->second, c);
  }
  return out;
}

FieldSet set_difference(const FieldSet& a, const FieldSet& b) {
  FieldSet out;
  out.member = a.member && !b.member;
  for (const auto& [e, c] : a.children) {
    auto it = b.children.find(e);
    FieldSet child = it == b.children.end() ? c : set_difference(c, it->second);
    if (!child.empty()) out.children.emplace(e, std::move(child));
  }
  return out;
}

FieldSet set_intersection(const FieldSet& a, const FieldSet& b) {
  FieldSet out;
  out.member = a.member && b.member;
  for (const auto& [e, c] : a.children) {
    auto it = b.children.find(e);
    if (it == b.children.end()) continue;
    FieldSet child = set_intersection(c, it->second);
    if (!child.empty()) out.children.emplace(e, std::move(child));
  }
  return out;
}

FieldSet fields_from_v1(const json& v1) {
  FieldSet s;
  if (!v1.is_object()) return s;
  if (v1.empty()) s.member = true;
  for (const auto& [k, v] : v1.items()) {
    if (k == ".") {
      s.member = true;
      continue;
    }
    s.children.emplace(k, fields_from_v1(v));
  }
  return s;
}

json fields_to_v1(const FieldSet& s) {
  json out = json::object();
  if (s.member && !s.children.empty()) out["."] = json::object();
  for (const auto& [e, c] : s.children)
    if (!c.empty()) out[e] = fields_to_v1(c);
  return out;
}

namespace {

const char* const k_server_metadata[] = {"name",           "namespace",         "uid",
                                         "resourceVersion", "generation",        "creationTimestamp",
                                         "managedFields",   "selfLink",          "deletionTimestamp",
                                         "deletionGracePeriodSeconds"};

bool is_server_metadata(const std::string& key) {
  for (const char* k : k_server_metadata)
    if (key == k) return true;
  return false;
}

json list_key(const json& item, const ListSchema& ls) {
  json key = json::object();
  for (const auto& k : ls.keys) {
    if (item.contains(k))
      key[k] = item[k];
    else if (auto d = ls.key_defaults.find(k); d != ls.key_defaults.end())
      key[k] = d->second;
  }
  return key;
}

void walk_fields(const json& obj, const std::string& path, FieldSet& node, const Schema& schema);

void walk_value(const json& v, const std::string& path, FieldSet& node, const Schema& schema) {
  if (v.is_object()) {
    if (v.empty() || schema.atomic_map(path)) {
      node.member = true;
      return;
    }
    walk_fields(v, path, node, schema);
    return;
  }
  if (v.is_array()) {
    const ListSchema* ls = schema.list(path);
    if (!ls || ls->type == ListType::atomic || v.empty()) {
      node.member = true;
      return;
    }
    if (ls->type == ListType::set) {
      for (const auto& item : v) node.children["v:" + item.dump()].member = true;
      return;
    }
    for (const auto& item : v)
      if (!item.is_object()) {  // not a keyed list after all: own it whole
        node.children.clear();
        node.member = true;
        return;
      }
    for (const auto& item : v) {
      FieldSet& child = node.children["k:" + list_key(item, *ls).dump()];
      child.member = true;
      walk_fields(item, path, child, schema);
    }
    return;
  }
  node.member = true;
}

void walk_fields(const json& obj, const std::string& path, FieldSet& node, const Schema& schema) {
  for (const auto& [k, cv] : obj.items()) {
    if (cv.is_null()) continue;
    walk_value(cv, child_path(path, k), node.children["f:" + k], schema);
  }
}

// The intent reduced to the fields `scope` may own.
json scoped_view(const json& object, Scope scope) {
  json out = json::object();
  if (!object.is_object()) return out;
  for (const auto& [k, v] : object.items()) {
    if (k == "apiVersion" || k == "kind") continue;
    if ((k == "status") != (scope == Scope::status)) continue;
    if (k == "metadata") {
      if (scope == Scope::status || !v.is_object()) continue;
      json meta = json::object();
      for (const auto& [mk, mv] : v.items()) {
        if (is_server_metadata(mk)) continue;
        // Go drops empty maps and lists of ObjectMeta (omitempty).
        if ((mv.is_object() || mv.is_array()) && mv.empty()) continue;
        meta[mk] = mv;
      }
      if (!meta.empty()) out[k] = std::move(meta);
      continue;
    }
    out[k] = v;
  }
  return out;
}

}  // namespace

FieldSet object_fields(const json& object, const Schema& schema, Scope scope) {
  FieldSet s;
  json view = scoped_view(object, scope);
  walk_fields(view, "", s, schema);
  // Drops empty branches: "metadata: {}" with nothing in it owns nothing.
  return set_difference(s, FieldSet{});
}

namespace {

void default_keys_in(json& v, const std::string& path, const Schema& schema) {
  if (v.is_object()) {
    for (auto& [k, cv] : v.items()) default_keys_in(cv, child_path(path, k), schema);
    return;
  }
  if (!v.is_array()) return;
  const ListSchema* ls = schema.list(path);
  for (auto& item : v) {
    if (!item.is_object()) continue;
    if (ls && ls->type == ListType::map)
      for (const auto& [k, d] : ls->key_defaults)
        if (!item.contains(k)) item[k] = d;
    for (auto& [k, cv] : item.items()) default_keys_in(cv, child_path(path, k), schema);
  }
}

}  // namespace

void default_list_keys(json& object, const Schema& schema) {
  if (!object.is_object()) return;
  for (auto& [k, v] : object.items()) default_keys_in(v, k, schema);
}

namespace {

// The child of `v` named by path element `e`, or nullptr.
const json* child_of(const json* v, const std::string& e) {
  if (!v) return nullptr;
  std::string_view body(e);
  body.remove_prefix(2);
  switch (e[0]) {
    case 'f': {
      if (!v->is_object()) return nullptr;
      auto it = v->find(std::string(body));
      return it == v->end() ? nullptr : &*it;
    }
    case 'k': {
      if (!v->is_array()) return nullptr;
      json keys = json::parse(body, nullptr, false);
      if (!keys.is_object()) return nullptr;
      for (const auto& item : *v) {
        if (!item.is_object()) continue;
        bool match = true;
        for (const auto& [k, kv] : keys.items()) {
          auto it = item.find(k);
          if (it == item.end() || *it != kv) {
            match = false;
            break;
          }
        }
        if (match) return &item;
      }
      return nullptr;
    }
    case 'v': {
      if (!v->is_array()) return nullptr;
      json value = json::parse(body, nullptr, false);
      for (const auto& item : *v)
        if (item == value) return &item;
      return nullptr;
    }
    case 'i': {
      if (!v->is_array()) return nullptr;
      size_t i = std::stoul(std::string(body));
      return i < v->size() ? &(*v)[i] : nullptr;
    }
  }
  return nullptr;
}

// Members of `set` whose value differs between `a` and `b`.
void differing(const FieldSet& set, const json* a, const json* b, FieldSet& out) {
  if (set.member && set.children.empty()) {
    if (!a || !b || *a != *b) out.member = true;
    return;
  }
  if (set.member && (!a || !b)) out.member = true;  // a list item present on one side only
  for (const auto& [e, c] : set.children) {
    FieldSet sub;
    differing(c, child_of(a, e), child_of(b, e), sub);
    if (!sub.empty()) out.children.emplace(e, std::move(sub));
  }
}

// Removes the members of `set` from `v`; prunes containers left empty.
void remove_members(json& v, const FieldSet& set) {
  for (const auto& [e, c] : set.children) {
    const json* target = child_of(&v, e);
    if (!target) continue;
    bool erase_whole = c.member;
    if (!erase_whole) {
      json& t = const_cast<json&>(*target);
      remove_members(t, c);
      erase_whole = (t.is_object() || t.is_array()) && t.empty();
    }
    if (!erase_whole) continue;
    if (v.is_object()) {
      v.erase(e.substr(2));
    } else if (v.is_array()) {
      for (auto it = v.begin(); it != v.end(); ++it)
        if (&*it == target) {
          v.erase(it);
          break;
        }
    }
  }
}

void merge_into(json& live, const json& intent, const Schema& schema, const std::string& path) {
  if (intent.is_object() && live.is_object() && !schema.atomic_map(path)) {
    for (const auto& [k, v] : intent.items()) {
      if (v.is_null()) {
        live.erase(k);
        continue;
      }
      auto it = live.find(k);
      if (it == live.end())
        live[k] = v;
      else
        merge_into(*it, v, schema, child_path(path, k));
    }
    return;
  }
  if (intent.is_array() && live.is_array()) {
    const ListSchema* ls = schema.list(path);
    if (ls && ls->type == ListType::map) {
      for (const auto& item : intent) {
        if (!item.is_object()) {
          live = intent;
          return;
        }
      }
      for (const auto& item : intent) {
        json key = list_key(item, *ls);
        const json* found = child_of(&live, "k:" + key.dump());
        if (found)
          merge_into(const_cast<json&>(*found), item, schema, path);
        else
          live.push_back(item);
      }
      return;
    }
    if (ls && ls->type == ListType::set) {
      for (const auto& item : intent)
        if (std::find(live.begin(), live.end(), item) == live.end()) live.push_back(item);
      return;
    }
  }
  live = intent;
}

struct Entry {
  std::string manager, operation, api_version, time, subresource;
  FieldSet set;
};

std::vector<Entry> read_entries(const json& object) {
  std::vector<Entry> out;
  if (!object.is_object()) return out;
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return out;
  auto mf = meta->find("managedFields");
  if (mf == meta->end() || !mf->is_array()) return out;
  for (const auto& e : *mf) {
    if (!e.is_object()) continue;
    Entry en;
    en.manager = e.value("manager", "");
    en.operation = e.value("operation", "");
    en.api_version = e.value("apiVersion", "");
    en.time = e.value("time", "");
    en.subresource = e.value("subresource", "");
    if (e.contains("fieldsV1")) en.set = fields_from_v1(e["fieldsV1"]);
    out.push_back(std::move(en));
  }
  return out;
}

void write_entries(json& object, const std::vector<Entry>& entries) {
  json arr = json::array();
  for (const auto& e : entries) {
    if (e.set.empty()) continue;
    json j = {{"manager", e.manager},
              {"operation", e.operation},
              {"apiVersion", e.api_version},
              {"fieldsType", "FieldsV1"},
              {"fieldsV1", fields_to_v1(e.set)}};
    if (!e.time.empty()) j["time"] = e.time;
    if (!e.subresource.empty()) j["subresource"] = e.subresource;
    arr.push_back(std::move(j));
  }
  if (!object.contains("metadata") || !object["metadata"].is_object()) object["metadata"] = json::object();
  if (arr.empty())
    object["metadata"].erase("managedFields");
  else
    object["metadata"]["managedFields"] = std::move(arr);
}

std::string display(const Entry& e) {
  std::string out = json(e.manager).dump();
  if (!e.subresource.empty()) out += " with subresource " + json(e.subresource).dump();
  if (e.operation == "Update") {
    out += " using " + e.api_version;
    if (!e.time.empty()) out += " at " + e.time;
  }
  return out;
}

const char* subresource_of(Scope scope) { return scope == Scope::status ? "status" : ""; }

}  // namespace

std::vector<Conflict> apply(json& live, const json& intent, const Schema& schema, const Manager& manager,
                            bool force) {
  std::vector<Entry> entries = read_entries(live);
  json view = scoped_view(intent, manager.scope);
  FieldSet applied = object_fields(intent, schema, manager.scope);
  const std::string subresource = subresource_of(manager.scope);
  auto is_self = [&](const Entry& e) {
    return e.manager == manager.name && e.operation == "Apply" && e.subresource == subresource;
  };

  json live_view = live.is_null() ? json::object() : scoped_view(live, manager.scope);
  std::vector<Conflict> conflicts;
  std::vector<FieldSet> lost(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    if (is_self(entries[i])) continue;
    FieldSet common = set_intersection(applied, entries[i].set);
    if (common.empty()) continue;
    differing(common, &view, &live_view, lost[i]);
    for (const auto& p : lost[i].paths()) conflicts.push_back({display(entries[i]), p});
  }
  if (!conflicts.empty() && !force) return conflicts;
  for (size_t i = 0; i < entries.size(); ++i)
    if (!lost[i].empty()) entries[i].set = set_difference(entries[i].set, lost[i]);

  json merged = live.is_null() ? json::object() : live;
  if (intent.contains("apiVersion")) merged["apiVersion"] = intent["apiVersion"];
  if (intent.contains("kind")) merged["kind"] = intent["kind"];
  if (!merged.contains("metadata")) merged["metadata"] = json::object();
  if (intent.contains("metadata") && intent["metadata"].is_object()) {
    for (const char* k : {"name", "namespace"})
      if (intent["metadata"].contains(k)) merged["metadata"][k] = intent["metadata"][k];
  }
  for (const auto& [k, v] : view.items()) {
    auto it = merged.find(k);
    if (it == merged.end())
      merged[k] = v;
    else
      merge_into(*it, v, schema, k);
  }

  FieldSet previous, others;
  Entry* self = nullptr;
  for (auto& e : entries) {
    if (is_self(e)) {
      previous = e.set;
      self = &e;
    } else {
      others = set_union(others, e.set);
    }
  }
  FieldSet dropped = set_difference(set_difference(previous, applied), others);
  if (!dropped.empty()) remove_members(merged, dropped);

  if (self) {
    if (!(self->set == applied) || self->api_version != manager.api_version) self->time = manager.time;
    self->set = applied;
    self->api_version = manager.api_version;
  } else {
    entries.push_back({manager.name, "Apply", manager.api_version, manager.time, subresource, applied});
  }
  write_entries(merged, entries);
  live = std::move(merged);
  return conflicts;
}

void record_update(const json& old_object, json& new_object, const Schema& schema, const Manager& manager) {
  std::vector<Entry> entries = read_entries(old_object);
  const std::string subresource = subresource_of(manager.scope);
  FieldSet old_set = old_object.is_null() ? FieldSet{} : object_fields(old_object, schema, manager.scope);
  FieldSet new_set = object_fields(new_object, schema, manager.scope);
  json old_view = old_object.is_null() ? json::object() : scoped_view(old_object, manager.scope);
  json new_view = scoped_view(new_object, manager.scope);
  FieldSet changed;
  differing(new_set, &new_view, &old_view, changed);
  FieldSet removed = set_difference(old_set, new_set);

  Entry* self = nullptr;
  for (auto& e : entries) {
    e.set = set_difference(e.set, removed);
    if (e.manager == manager.name && e.operation == "Update" && e.subresource == subresource) {
      self = &e;
      continue;
    }
    e.set = set_difference(e.set, changed);
  }
  if (!changed.empty()) {
    if (self) {
      self->set = set_union(self->set, changed);
      self->time = manager.time;
      self->api_version = manager.api_version;
    } else {
      entries.push_back({manager.name, "Update", manager.api_version, manager.time, subresource, changed});
    }
  }
  write_entries(new_object, entries);
}

namespace {

bool owns(const FieldSet& set, const std::vector<std::string>& elements) {
  const FieldSet* node = &set;
  for (const auto& e : elements) {
    auto it = node->children.find(e);
    if (it == node->children.end()) return false;
    node = &it->second;
  }
  return node->member;
}

void drift_walk(const FieldSet& set, const json* planned, const json* live, std::vector<std::string>& elements,
                const std::string& path, const std::vector<Entry>& entries, std::vector<FieldDrift>& out) {
  if (set.member && (!planned || !live || set.children.empty())) {
    if (planned && live && *planned == *live) return;
    FieldDrift d;
    d.path = path;
    d.planned = planned ? planned->dump() : "null";
    if (live) d.live = live->dump();
    // The writer that took the field last: its entry owns it (an Update
    // takes a changed field from every other manager).
    for (const auto& e : entries)
      if (owns(e.set, elements)) {
        d.manager = e.manager;
        d.operation = e.operation;
        d.time = e.time;
        if (e.operation == "Update") break;  // prefer the non-apply writer over a shared Apply
      }
    out.push_back(std::move(d));
    return;
  }
  for (const auto& [e, c] : set.children) {
    elements.push_back(e);
    drift_walk(c, child_of(planned, e), child_of(live, e), elements, path + element_display(e), entries, out);
    elements.pop_back();
  }
}

}  // namespace

std::vector<FieldDrift> drifted_fields(const json& live, const json& intent, const Schema& schema) {
  std::vector<FieldDrift> out;
  FieldSet applied = object_fields(intent, schema, Scope::main);
  json view = scoped_view(intent, Scope::main);
  json live_view = live.is_null() ? json::object() : scoped_view(live, Scope::main);
  std::vector<std::string> elements;
  drift_walk(applied, &view, &live_view, elements, "", read_entries(live), out);
  return out;
}

std::string conflict_message(const std::vector<Conflict>& conflicts) {
  if (conflicts.size() == 1)
    return "Apply failed with 1 conflict: conflict with " + conflicts[0].manager + ": " + conflicts[0].path;
  std::map<std::string, std::vector<std::string>> by_manager;
  for (const auto& c : conflicts) by_manager[c.manager].push_back(c.path);
  std::string out = "Apply failed with " + std::to_string(conflicts.size()) + " conflicts: ";
  bool first = true;
  for (const auto& [m, paths] : by_manager) {
    if (!first) out += "\n";
    first = false;
    out += "conflicts with " + m + ":";
    for (const auto& p : paths) out += "\n- " + p;
  }
  return out;
}

}  // namespace emco::k8s
