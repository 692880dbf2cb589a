#include "plugins/gac/gac.hpp"

#include <map>
#include <regex>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/k8s/patch.hpp"
#include "core/k8s/schema.hpp"
#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "core/plan/object.hpp"

namespace emco::controllers {

using nlohmann::json;

namespace {

std::string anchor_of(const store::Resource& r) { return resource::resource_anchor(*r.kind, r.key); }

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string str_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Rejects $(http...)$ values anywhere in a patch value: they need upstream's HTTP API.
void reject_http_values(const json& v, const std::string& where) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s.size() > 4 && s.rfind("$(", 0) == 0 && s.compare(s.size() - 2, 2, ")$") == 0)
      fail(ErrorKind::invalid,
           where + ": patch value '" + s + "' reads a value over HTTP, which emco does not support (plans are made offline)",
           "put the value itself into patchJson");
  } else if (v.is_structured()) {
    for (const auto& e : v) reject_http_values(e, where);
  }
}

struct Customization {
  const store::Resource* res;
  json spec;
  std::string where;  // anchor, for messages
};

// Cluster labels per provider, loaded on first use.
class Labels {
public:
  explicit Labels(const store::Store& st) : m_store(st) {}
  bool has(const std::string& provider, const std::string& cluster, const std::string& label) {
    auto it = m_by_provider.find(provider);
    if (it == m_by_provider.end()) {
      std::set<std::pair<std::string, std::string>> set;
      resource::Key pk{{{"clusterProvider", provider}}};
      for (const auto& r : m_store.list(resource::kind("clusterLabel"), pk))
        set.emplace(*r.key.get("cluster"), *r.key.get("clusterLabel"));
      it = m_by_provider.emplace(provider, std::move(set)).first;
    }
    return it->second.count({cluster, label}) > 0;
  }

private:
  const store::Store& m_store;
  std::map<std::string, std::set<std::pair<std::string, std::string>>> m_by_provider;
};

bool targets(const json& spec, const std::string& cluster, Labels& labels) {
  if (lower(str_at(spec, "clusterSpecific")) != "true") return true;
  const json& info = spec.contains("clusterInfo") ? spec.at("clusterInfo") : json::object();
  // Upstream matches nothing for mode deny (the docs say "all but these").
  if (lower(str_at(info, "mode")) != "allow") return false;
  auto plus = cluster.find('+');
  std::string provider = cluster.substr(0, plus), name = cluster.substr(plus + 1);
  if (provider != str_at(info, "clusterProvider")) return false;
  if (lower(str_at(info, "scope")) == "name") return name == str_at(info, "cluster");
  return labels.has(provider, name, str_at(info, "clusterLabel"));
}

// dataKeyOptions of a ConfigMap/Secret customization, by file name.
struct KeyOption {
  std::string key;
  bool merge_patch = false;
};
std::map<std::string, KeyOption> key_options(const json& spec, const char* field) {
  std::map<std::string, KeyOption> out;
  auto it = spec.find(field);
  if (it == spec.end() || !it->is_object() || !it->contains("dataKeyOptions")) return out;
  for (const auto& o : it->at("dataKeyOptions"))
    out[str_at(o, "fileName")] = {str_at(o, "keyName"), lower(str_at(o, "mergePatch")) == "true"};
  return out;
}

bool is_data_kind(const std::string& kind) { return kind == "ConfigMap" || kind == "Secret"; }

// The files of a customization that are strategic-merge patches.
std::vector<const store::Content*> patch_files(const Customization& c, const std::string& kind) {
  std::vector<const store::Content*> out;
  if (!is_data_kind(kind)) {
    for (const auto& f : c.res->contents) out.push_back(&f);
    return out;
  }
  auto opts = key_options(c.spec, kind == "ConfigMap" ? "configMapOptions" : "secretOptions");
  for (const auto& f : c.res->contents) {
    auto o = opts.find(f.name);
    if (o != opts.end() && o->second.merge_patch) out.push_back(&f);
  }
  return out;
}

json apply_patch(const Customization& c, json object, const std::string& api_version, const std::string& kind) {
  std::string type = lower(str_at(c.spec, "patchType"));
  if (type == "json") {
    json ops = c.spec.value("patchJson", json::array());
    reject_http_values(ops, c.where);
    try {
      return k8s::json_patch(object, ops);
    } catch (const Error& e) {
      fail(ErrorKind::invalid, c.where + ": JSON patch does not apply: " + e.message(),
           "check each patchJson path against the object (emco dig render shows it)");
    }
  }
  if (type == "merge") {
    const auto& schema = k8s::Schema::for_kind(api_group(api_version), kind);
    if (!schema.supports_strategic_merge())
      fail(ErrorKind::invalid,
           c.where + ": strategic merge patch is defined for built-in kinds only, not '" + api_version + " " + kind + "'",
           "use patchType json for custom resources");
    for (const auto* f : patch_files(c, kind)) {
      json patch = parse_object(f->data, c.where + ": file '" + f->name + "'");
      try {
        object = k8s::strategic_merge_patch(object, patch, schema);
      } catch (const Error& e) {
        fail(ErrorKind::invalid, c.where + ": merge patch '" + f->name + "' does not apply: " + e.message());
      }
    }
    return object;
  }
  return object;
}

const std::regex& data_key_re() {
  static const std::regex re("[-._a-zA-Z0-9]+");
  return re;
}

// Builds a new object of a customization (before its patch).
json build_new_object(const store::Resource& res, const Customization& c, const std::string& kind,
                      const std::string& name) {
  const store::Content* tmpl = nullptr;
  for (const auto& f : res.contents)
    if (f.name == "file") tmpl = &f;
  std::string where = anchor_of(res);
  json object;
  if (tmpl) {
    object = parse_object(tmpl->data, where + ": resource template");
    if (!object.is_object() || str_at(object, "apiVersion").empty() || str_at(object, "kind").empty() ||
        !object.contains("metadata") || str_at(object["metadata"], "name").empty())
      fail(ErrorKind::invalid, where + ": resource template lacks apiVersion, kind or metadata.name");
  } else if (is_data_kind(kind)) {
    object = {{"apiVersion", "v1"}, {"kind", kind}, {"metadata", {{"name", name}}}};
  } else {
    fail(ErrorKind::invalid, where + ": a new '" + kind + "' needs a resource template file",
         "attach the object's YAML with file:");
  }
  if (!is_data_kind(kind)) return object;
  if (tmpl && str_at(object, "kind") != kind)
    fail(ErrorKind::invalid, where + ": resource template is a '" + str_at(object, "kind") + "', not a '" + kind + "'");
  bool secret = kind == "Secret";
  if (secret && !object.contains("type")) object["type"] = "Opaque";
  auto opts = key_options(c.spec, secret ? "secretOptions" : "configMapOptions");
  json& data = object["data"];
  if (data.is_null()) data = json::object();
  for (const auto& f : c.res->contents) {
    auto o = opts.find(f.name);
    if (o != opts.end() && o->second.merge_patch) continue;  // a patch, not data
    std::string key = o != opts.end() && !o->second.key.empty() ? o->second.key : f.name;
    if (!std::regex_match(key, data_key_re()))
      fail(ErrorKind::invalid, c.where + ": '" + key + "' is not a valid " + kind + " data key",
           "keys consist of alphanumerics, '-', '_' or '.'");
    if (data.contains(key))
      fail(ErrorKind::invalid, c.where + ": duplicate " + kind + " data key '" + key + "'");
    data[key] = secret ? base64_encode(f.data) : f.data;
  }
  return object;
}

}  // namespace

void Gac::update(const Call& call, appcontext::AppContext& ctx) const {
  const store::Store& st = call.store;
  resource::Key intent_key = call.dig;
  intent_key.parts.emplace_back("genericK8sIntent", call.intent);
  const auto& intent_kind = resource::kind("genericK8sIntent");
  if (!st.get(intent_key))
    fail(ErrorKind::not_found,
         "generic k8s intent '" + resource::resource_anchor(intent_kind, intent_key) + "' named in the group intent does not exist",
         "create it or fix the gac entry of the group intent");
  Labels labels(st);
  for (const auto& listed : st.list(resource::kind("genericResource"), intent_key)) {
    const store::Resource res = *st.get(listed.key);  // with its attached template
    json data = json::parse(res.data);
    const json& spec = data["spec"];
    std::string where = anchor_of(res);
    std::string app_name = str_at(spec, "app");
    bool new_object = lower(str_at(spec, "newObject")) == "true";
    json gvk = spec.value("resourceGVK", json::object());
    std::string api_version = str_at(gvk, "apiVersion"), kind = str_at(gvk, "kind"), name = str_at(gvk, "name");
    if (kind.empty() || name.empty())
      fail(ErrorKind::invalid, where + ": resourceGVK with apiVersion, kind and name is required");
    auto customizations = st.list(resource::kind("customization"), res.key);
    if (customizations.empty()) continue;  // upstream: no customization, nothing happens
    appcontext::App* app = ctx.find_app(app_name);
    if (!app)
      fail(ErrorKind::invalid, where + ": app '" + app_name + "' is not part of the composite app");
    std::string key = name + "+" + kind;
    for (const auto& listed_c : customizations) {
      const store::Resource cr = *st.get(listed_c.key);  // with its files
      Customization c{&cr, json::parse(cr.data)["spec"], anchor_of(cr)};
      std::string patch_type = lower(str_at(c.spec, "patchType"));
      if (!new_object && patch_type.empty())
        fail(ErrorKind::invalid, c.where + ": patchType is required to change an existing object",
             "set patchType to json or merge");
      std::vector<appcontext::Cluster*> target;
      for (auto& cl : app->clusters)
        if (targets(c.spec, cl.name, labels)) target.push_back(&cl);
      if (target.empty()) continue;
      if (new_object) {
        json object = apply_patch(c, build_new_object(res, c, kind, name), api_version, kind);
        auto content = ctx.intern(object_yaml(object));
        for (auto* cl : target) cl->put({key, content});
        continue;
      }
      // Patch each cluster's copy; equal inputs give equal outputs, so patch once per input hash.
      std::unordered_map<std::string, appcontext::ContentRef> done;
      for (auto* cl : target) {
        appcontext::Resource* r = cl->find(key);
        if (!r) continue;
        auto it = done.find(r->hash());
        if (it == done.end()) {
          json object = parse_object(r->text(), where + ": resource '" + key + "'");
          std::string av = str_at(object, "apiVersion").empty() ? api_version : str_at(object, "apiVersion");
          json patched = apply_patch(c, std::move(object), av, kind);
          it = done.emplace(r->hash(), ctx.intern(object_yaml(patched))).first;
        }
        r->content = it->second;
      }
    }
  }
}

}  // namespace emco::controllers
