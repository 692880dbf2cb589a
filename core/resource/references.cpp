#include "core/resource/references.hpp"

#include <nlohmann/json.hpp>

#include "core/util/strings.hpp"

namespace emco::resource {

using nlohmann::json;

namespace {

// The target's full key element list, in order.
std::vector<KeyPart> target_template(const Kind& target) {
  std::vector<KeyPart> parts;
  for (const Kind* c : lineage(target.id)) {
    for (const auto& f : c->fixed) parts.push_back(f);
    for (const auto& e : c->elements) parts.emplace_back(e, "");
  }
  return parts;
}

bool is_fixed(const Kind& target, const std::string& element) {
  for (const Kind* c : lineage(target.id))
    for (const auto& f : c->fixed)
      if (f.first == element) return true;
  return false;
}

// Fill a target key: values from `found` (spec), then from the own key (up to
// commonKey if set, else any element), then fixedKv. Returns false when incomplete.
bool fill(const Kind& target, const Reference& r, const Key& own, const std::map<std::string, std::string>& found, Key& out) {
  out.parts = target_template(target);
  std::map<std::string, std::string> from_own;
  for (const auto& [e, v] : own.parts) {
    from_own[e] = v;
    if (!r.common_key.empty() && e == r.common_key) break;
  }
  for (auto& [e, v] : out.parts) {
    if (is_fixed(target, e)) continue;  // keep the registry's fixed value
    if (auto it = found.find(e); it != found.end()) v = it->second;
    else if (!r.common_key.empty()) {
      if (auto o = from_own.find(e); o != from_own.end()) v = o->second;
    } else if (auto o = from_own.find(e); o != from_own.end()) v = o->second;
  }
  for (const auto& [e, v] : r.fixed_kv)
    for (auto& p : out.parts)
      if (p.first == e) p.second = v;
  for (const auto& p : out.parts)
    if (p.second.empty()) return false;
  return true;
}

void collect_many(const json& node, const std::vector<KeyPart>& tmpl, const std::string& path,
                  std::vector<std::pair<std::map<std::string, std::string>, std::string>>& out) {
  if (node.is_object()) {
    std::map<std::string, std::string> found;
    for (const auto& [e, unused] : tmpl) {
      (void)unused;
      auto it = node.find(e);
      if (it != node.end() && it->is_string() && !it->get_ref<const std::string&>().empty()) found[e] = *it;
    }
    if (!found.empty()) out.emplace_back(found, path);
    for (auto it = node.begin(); it != node.end(); ++it) collect_many(it.value(), tmpl, path + "." + it.key(), out);
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) collect_many(node[i], tmpl, path + "[" + std::to_string(i) + "]", out);
  }
}

const json* at_path(const json& spec, const std::string& dotted) {
  const json* cur = &spec;
  for (const auto& part : split(dotted, '.')) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(part);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

}  // namespace

std::vector<ReferenceTarget> compute_references(const Kind& k, const Key& own, const json& spec) {
  std::vector<ReferenceTarget> out;
  for (const auto& r : k.references) {
    if (!r.only_if.first.empty()) {
      const json* v = at_path(spec, r.only_if.first);
      if (!v || !v->is_string() || to_lower(v->get<std::string>()) != to_lower(r.only_if.second)) continue;
    }
    const Kind& target = kind(r.target);
    auto tmpl = target_template(target);
    const size_t first = out.size();
    switch (r.type) {
      case RefType::plain: {
        std::map<std::string, std::string> found;
        if (spec.is_object())
          for (const auto& [e, unused] : tmpl) {
            (void)unused;
            auto it = spec.find(e);
            if (it != spec.end() && it->is_string() && !it->get_ref<const std::string&>().empty()) found[e] = *it;
          }
        if (found.empty()) break;
        ReferenceTarget t{&target, {}, "spec." + target.elements.back(), false, ""};
        if (fill(target, r, own, found, t.key)) out.push_back(std::move(t));
        break;
      }
      case RefType::many: {
        std::vector<std::pair<std::map<std::string, std::string>, std::string>> hits;
        collect_many(spec, tmpl, "spec", hits);
        for (auto& [found, path] : hits) {
          if (!found.count(target.elements.back())) continue;  // must name the target itself
          ReferenceTarget t{&target, {}, path, false, ""};
          if (fill(target, r, own, found, t.key)) out.push_back(std::move(t));
        }
        break;
      }
      case RefType::map: {
        const json* m = at_path(spec, r.map_field);
        if (!m || !m->is_object()) break;
        for (auto it = m->begin(); it != m->end(); ++it) {
          bool skip = false;
          for (const auto& f : r.filter_keys) skip = skip || f == it.key();
          if (skip) continue;
          std::map<std::string, std::string> found{{target.elements.back(), it.key()}};
          ReferenceTarget t{&target, {}, "spec." + r.map_field + "." + it.key(), false, ""};
          if (fill(target, r, own, found, t.key)) out.push_back(std::move(t));
        }
        break;
      }
      case RefType::path: {
        for (const auto& p : r.paths) {
          const json* v = at_path(spec, p);
          if (!v || !v->is_string() || v->get_ref<const std::string&>().empty()) continue;
          std::map<std::string, std::string> found{{target.elements.back(), v->get<std::string>()}};
          ReferenceTarget t{&target, {}, "spec." + p, false, ""};
          if (fill(target, r, own, found, t.key)) out.push_back(std::move(t));
        }
        break;
      }
      case RefType::label: {
        std::vector<std::pair<std::map<std::string, std::string>, std::string>> hits;
        collect_many(spec, tmpl, "spec", hits);
        for (auto& [found, path] : hits) {
          auto label = found.find("clusterLabel");
          auto provider = found.find("clusterProvider");
          if (label == found.end() || provider == found.end()) continue;
          ReferenceTarget t{&target, {}, path + ".clusterLabel", true, label->second};
          t.key.parts = {{"clusterProvider", provider->second}};
          out.push_back(std::move(t));
        }
        break;
      }
    }
    for (size_t i = first; i < out.size(); ++i) out[i].soft = r.soft;
  }
  return out;
}

}  // namespace emco::resource
