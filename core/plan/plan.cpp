#include "core/plan/plan.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include <archive.h>
#include <archive_entry.h>
#include <nlohmann/json.hpp>

#include "core/helm/chart.hpp"
#include "core/helm/helm.hpp"
#include "core/helm/values.hpp"
#include "core/plan/controllers.hpp"
#include "core/plan/object.hpp"
#include "core/util/clock.hpp"
#include "core/util/error.hpp"
#include "core/util/sha256.hpp"
#include "core/util/strings.hpp"

namespace emco::plan {

using nlohmann::json;
using resource::Key;

namespace {

constexpr const char* k_deployment_label = "emco/deployment-id";

std::string anchor(const std::string& kind_id, const Key& key) {
  return resource::resource_anchor(resource::kind(kind_id), key);
}

std::string str_at(const json& j, const char* key) {
  if (!j.is_object()) return {};
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

json spec_of(const store::Resource& r) {
  json d = json::parse(r.data);
  return d.contains("spec") && d["spec"].is_object() ? d["spec"] : json::object();
}

Key child(Key k, const std::string& element, const std::string& value) {
  k.parts.emplace_back(element, value);
  return k;
}

const store::Content* file_of(const store::Resource& r) {
  for (const auto& c : r.contents)
    if (c.name == "file") return &c;
  return nullptr;
}

// ---- profile packages ---------------------------------------------------------------------

// Files of a profile .tgz by path (leading "./" dropped). A package whose
// manifest.yaml sits below one top-level directory is read from there.
std::map<std::string, std::string> read_profile(const std::string& bytes, const std::string& where) {
  std::map<std::string, std::string> files;
  std::unique_ptr<archive, decltype(&archive_read_free)> a(archive_read_new(), archive_read_free);
  archive_read_support_filter_gzip(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_memory(a.get(), bytes.data(), bytes.size()) != ARCHIVE_OK)
    fail(ErrorKind::invalid, where + ": profile package is not a gzip tar archive");
  archive_entry* e = nullptr;
  size_t total = 0;
  for (;;) {
    int rc = archive_read_next_header(a.get(), &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK)
      fail(ErrorKind::invalid, where + ": profile package is corrupt: " + std::string(archive_error_string(a.get())));
    if (archive_entry_filetype(e) != AE_IFREG) continue;
    std::string name = archive_entry_pathname(e) ? archive_entry_pathname(e) : "";
    while (name.rfind("./", 0) == 0) name.erase(0, 2);
    std::string data;
    const void* buf = nullptr;
    size_t size = 0;
    la_int64_t offset = 0;
    int d;
    while ((d = archive_read_data_block(a.get(), &buf, &size, &offset)) == ARCHIVE_OK) {
      data.append(static_cast<const char*>(buf), size);
      total += size;
      if (total > (size_t{100} << 20)) fail(ErrorKind::invalid, where + ": profile package is larger than 100 MiB");
    }
    if (d != ARCHIVE_EOF) fail(ErrorKind::invalid, where + ": profile package is truncated or corrupt");
    files[name] = std::move(data);
  }
  if (!files.count("manifest.yaml")) {
    // One top-level directory holding manifest.yaml.
    std::string prefix;
    for (const auto& [name, _] : files) {
      auto slash = name.find('/');
      if (slash != std::string::npos && name.substr(slash + 1) == "manifest.yaml") prefix = name.substr(0, slash + 1);
    }
    if (!prefix.empty()) {
      std::map<std::string, std::string> inner;
      for (auto& [name, data] : files)
        if (name.rfind(prefix, 0) == 0) inner[name.substr(prefix.size())] = std::move(data);
      files = std::move(inner);
    }
  }
  return files;
}

struct Profile {
  tmpl::Value values;                                   // the values file
  std::vector<std::pair<std::string, std::string>> copies;  // chart-relative path, data
};

Profile load_profile(const store::Resource& profile, const std::string& app) {
  std::string where = anchor("appProfile", profile.key);
  const store::Content* pkg = file_of(profile);
  if (!pkg) fail(ErrorKind::invalid, where + ": the app profile has no package", "attach the profile .tgz with file:");
  auto files = read_profile(pkg->data, where);
  auto mit = files.find("manifest.yaml");
  if (mit == files.end())
    fail(ErrorKind::invalid, where + ": profile package has no manifest.yaml",
         "a profile package holds manifest.yaml and the values file it names");
  json manifest = controllers::parse_object(mit->second, where + ": manifest.yaml");
  json type = manifest.is_object() && manifest.contains("type") ? manifest["type"] : json::object();
  std::string values_file = str_at(type, "values");
  if (values_file.empty())
    fail(ErrorKind::invalid, where + ": manifest.yaml names no values file (type.values)",
         "set type.values: override_values.yaml");
  while (values_file.rfind("./", 0) == 0) values_file.erase(0, 2);
  auto vit = files.find(values_file);
  if (vit == files.end())
    fail(ErrorKind::invalid, where + ": profile package lacks '" + values_file + "' named by manifest.yaml");
  Profile p;
  try {
    p.values = tmpl::parse_yaml(vit->second, tmpl::YamlMode::helm, values_file);
  } catch (const Error& e) {
    // syntax errors name the file and position; Helm's conversion errors name nothing
    bool names_file = e.message().rfind(values_file + ":", 0) == 0;
    throw e.with_context(names_file ? where : where + ": " + values_file);
  }
  if (p.values.is_null()) p.values = tmpl::Value(tmpl::Map{});
  if (!p.values.is_map()) fail(ErrorKind::invalid, where + ": '" + values_file + "' is not a map of values");
  if (type.contains("configresource") && type["configresource"].is_array()) {
    for (const auto& cr : type["configresource"]) {
      std::string from = str_at(cr, "filepath"), to = str_at(cr, "chartpath");
      while (from.rfind("./", 0) == 0) from.erase(0, 2);
      auto fit = files.find(from);
      if (fit == files.end())
        fail(ErrorKind::invalid, where + ": profile package lacks '" + from + "' named by manifest.yaml configresource");
      if (to.rfind(app + "/", 0) != 0 || to.size() == app.size() + 1)
        fail(ErrorKind::invalid, where + ": configresource chartpath '" + to + "' is not inside the chart directory '" +
                                     app + "/'");
      p.copies.emplace_back(to.substr(app.size() + 1), fit->second);
    }
  }
  return p;
}

// ---- rendering ----------------------------------------------------------------------------

struct Rendered {
  std::vector<appcontext::Resource> resources;
  std::vector<appcontext::HookGroup> hooks;
};

// Adds the deployment-id label to an object and its pod template (and to the items of a List).
void label(json& object, const std::string& value) {
  if (!object.is_object()) return;
  if (str_at(object, "kind") == "List" && object.contains("items") && object["items"].is_array()) {
    for (auto& item : object["items"]) label(item, value);
    return;
  }
  json& meta = object["metadata"];
  if (!meta.is_object()) meta = json::object();
  json& labels = meta["labels"];
  if (!labels.is_object()) labels = json::object();
  labels[k_deployment_label] = value;
  if (object.contains("spec") && object["spec"].is_object()) {
    json& spec = object["spec"];
    if (spec.contains("template") && spec["template"].is_object()) {
      json& tmeta = spec["template"]["metadata"];
      if (!tmeta.is_object()) tmeta = json::object();
      json& tl = tmeta["labels"];
      if (!tl.is_object()) tl = json::object();
      tl[k_deployment_label] = value;
    }
  }
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

std::string base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Splits a multi-document YAML file at "---" lines.
std::vector<std::string> split_documents(const std::string& text) {
  std::vector<std::string> docs;
  std::string cur;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (line.rfind("---", 0) == 0 && (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r')) {
      docs.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += line;
      cur += '\n';
    }
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  docs.push_back(std::move(cur));
  return docs;
}

class Renderer {
public:
  explicit Renderer(appcontext::AppContext& ctx) : m_ctx(ctx) {}

  // One object: parsed and checked; nullopt for documents EMCO drops.
  std::optional<std::pair<std::string, appcontext::ContentRef>> object(const std::string& text,
                                                                        const std::string& source,
                                                                        std::map<std::string, int>& list_index) {
    if (blank(text)) return std::nullopt;
    json o = controllers::parse_object(text, source);
    if (!o.is_object()) return std::nullopt;
    std::string kind = str_at(o, "kind");
    std::string name = str_at(o.contains("metadata") ? o["metadata"] : json(), "name");
    if (str_at(o, "apiVersion").empty() || kind.empty()) return std::nullopt;
    if (name.empty()) {
      if (kind != "List") return std::nullopt;
      name = base_name(source) + "-" + std::to_string(list_index[source]++);
    }
    return std::make_pair(name + "+" + kind, m_ctx.intern(controllers::object_yaml(o)));
  }

  Rendered render(const helm::Chart& chart, const std::string& release,
                  const std::string& ns, const tmpl::Value& values) {
    helm::RenderOptions opts;
    opts.release_name = release;
    opts.namespace_name = ns;
    opts.values = values;
    opts.include_crds = true;
    opts.random_seed = 1;  // plans are deterministic (randAlphaNum etc. repeat between plans)
    helm::RenderResult r = helm::render(chart, opts);
    Rendered out;
    std::map<std::string, int> list_index;
    std::vector<appcontext::Resource> crds;
    auto put = [](std::vector<appcontext::Resource>& list, std::string key, appcontext::ContentRef c) {
      for (auto& e : list)
        if (e.name == key) {  // a duplicate key overwrites, as upstream
          e.content = std::move(c);
          return;
        }
      list.push_back({std::move(key), std::move(c)});
    };
    for (const auto& c : r.crds)
      for (const auto& doc : split_documents(c.content))
        if (auto o = object(doc, c.source, list_index)) put(crds, o->first, o->second);
    for (const auto& m : r.manifests) {
      auto o = object(m.content, m.source, list_index);
      if (!o) continue;
      if (m.kind == "CustomResourceDefinition")
        put(crds, o->first, o->second);
      else
        put(out.resources, o->first, o->second);
    }
    // Hooks: grouped per event, ordered by weight then name; test-only hooks dropped.
    std::map<std::string, std::vector<std::pair<std::pair<int, std::string>, appcontext::Resource>>> by_event;
    for (const auto& h : r.hooks) {
      auto o = object(h.content, h.source, list_index);
      if (!o) continue;
      for (const auto& ev : h.events) {
        if (ev == "test" || ev == "test-success") continue;
        by_event[ev].push_back({{h.weight, h.name}, {o->first, o->second}});
      }
    }
    if (!crds.empty()) out.hooks.push_back({"crd-install", std::move(crds)});
    for (const auto& ev : appcontext::hook_group_order()) {
      auto it = by_event.find(ev);
      if (it == by_event.end()) continue;
      auto& list = it->second;
      std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      appcontext::HookGroup g{ev, {}};
      for (auto& [_, res] : list) g.resources.push_back(std::move(res));
      out.hooks.push_back(std::move(g));
      by_event.erase(it);
    }
    for (auto& [ev, list] : by_event) {  // events emco does not know by name, after the known ones
      std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      appcontext::HookGroup g{ev, {}};
      for (auto& [_, res] : list) g.resources.push_back(std::move(res));
      out.hooks.push_back(std::move(g));
    }
    return out;
  }

private:
  appcontext::AppContext& m_ctx;
};

// ---- placement ----------------------------------------------------------------------------

struct ClusterIndex {
  std::set<std::string> all;                                               // "<p>+<c>"
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> by_label;  // (provider, label) -> clusters
};

ClusterIndex index_clusters(store::Store& st) {
  ClusterIndex ix;
  for (const auto& r : st.list(resource::kind("cluster")))
    ix.all.insert(*r.key.get("clusterProvider") + "+" + *r.key.get("cluster"));
  for (const auto& r : st.list(resource::kind("clusterLabel"))) {
    std::string p = *r.key.get("clusterProvider");
    ix.by_label[{p, *r.key.get("clusterLabel")}].push_back(p + "+" + *r.key.get("cluster"));
  }
  return ix;
}

struct Assignment {
  int group = 0;
  std::string why;  // how an intent element selected it
  bool any_of = false;
};

struct Placement {
  std::map<std::string, Assignment> chosen;      // cluster -> group
  std::map<std::string, std::string> outside;    // label match outside the logical cloud -> why
};

// `explain`: say in Assignment::why and Placement::outside why (for the
// explanation only).
Placement place(const json& intent, const std::string& where, const std::set<std::string>& lc_clusters,
                const std::string& lc_name, const ClusterIndex& ix, bool explain) {
  Placement p;
  int next_group = 1;
  auto resolve = [&](const json& e, const char* list) {
    std::string provider = str_at(e, "clusterProvider"), cluster = str_at(e, "cluster"), label = str_at(e, "clusterLabel");
    std::vector<std::pair<std::string, std::string>> out;  // cluster, why
    if (provider.empty())
      fail(ErrorKind::invalid, where + ": an " + std::string(list) + " element lacks clusterProvider");
    if (!cluster.empty()) {
      std::string name = provider + "+" + cluster;
      if (!ix.all.count(name))
        fail(ErrorKind::not_found, where + ": cluster '" + provider + "/" + cluster + "' does not exist",
             "register it under cluster-providers/" + provider + "/clusters");
      if (!lc_clusters.count(name))
        fail(ErrorKind::invalid, where + ": cluster '" + provider + "/" + cluster + "' is not part of logical cloud '" +
                                     lc_name + "'",
             "add a cluster reference to the logical cloud or fix the intent");
      out.emplace_back(name, std::string(list) + ": cluster named");
      return out;
    }
    if (label.empty())
      fail(ErrorKind::invalid, where + ": an " + std::string(list) + " element names neither cluster nor clusterLabel");
    auto it = ix.by_label.find({provider, label});
    if (it == ix.by_label.end() || it->second.empty())
      fail(ErrorKind::invalid, where + ": no cluster of provider '" + provider + "' has label '" + label + "'",
           "label a cluster (emco apply a labels document) or fix the intent");
    const std::string why = explain ? std::string(list) + ": has label '" + label + "'" : std::string();
    for (const auto& c : it->second) {
      if (lc_clusters.count(c))
        out.emplace_back(c, why);
      else if (explain)
        p.outside[c] = "has label '" + label + "' but is not in logical cloud '" + lc_name + "'";
    }
    if (out.empty())
      fail(ErrorKind::invalid, where + ": no cluster with label '" + label + "' of provider '" + provider +
                                   "' is part of logical cloud '" + lc_name + "'",
           "add a cluster reference to the logical cloud or fix the intent");
    return out;
  };
  if (intent.contains("allOf") && intent["allOf"].is_array())
    for (const auto& e : intent["allOf"])
      for (auto& [c, why] : resolve(e, "allOf")) p.chosen.insert_or_assign(p.chosen.end(), c, Assignment{next_group++, why, false});
  if (intent.contains("anyOf") && intent["anyOf"].is_array() && !intent["anyOf"].empty()) {
    int g = next_group++;
    for (const auto& e : intent["anyOf"])
      for (auto& [c, why] : resolve(e, "anyOf")) p.chosen.insert_or_assign(p.chosen.end(), c, Assignment{g, why, true});  // anyOf wins over allOf
  }
  return p;
}

// ---- controllers ----------------------------------------------------------------------------

struct ControllerRun {
  std::string name, intent, type;
  int64_t priority = 0;
};

std::vector<ControllerRun> controllers_to_run(store::Store& st, const std::vector<std::pair<std::string, std::string>>& named,
                                              const std::map<std::string, std::string>& named_in) {
  std::map<std::string, json> registered;
  for (const auto& r : st.list(resource::kind("controller"))) registered[*r.key.get("controller")] = spec_of(r);
  std::vector<ControllerRun> runs;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& [name, intent] : named) {
    if (!seen.insert({name, intent}).second) continue;
    auto it = registered.find(name);
    if (it == registered.end())
      fail(ErrorKind::not_found,
           named_in.at(name) + ": controller '" + name + "' is not registered",
           "register it under controllers (anchor 'controllers') or remove it from the group intent");
    std::string type = str_at(it->second, "type");
    if (type != "placement" && type != "action") continue;  // rsync and the like take no part in planning
    int64_t prio = it->second.contains("priority") && it->second["priority"].is_number_integer()
                       ? it->second["priority"].get<int64_t>()
                       : 0;
    runs.push_back({name, intent, type, prio});
  }
  std::stable_sort(runs.begin(), runs.end(), [](const ControllerRun& a, const ControllerRun& b) {
    return std::tie(a.priority, a.name, a.intent) < std::tie(b.priority, b.name, b.intent);
  });
  return runs;
}

void check_cycles(const std::vector<appcontext::App>& apps, const std::string& where) {
  std::map<std::string, const appcontext::App*> by;
  for (const auto& a : apps) by[a.name] = &a;
  std::map<std::string, int> state;  // 0 new, 1 on stack, 2 done
  std::vector<std::string> stack;
  std::function<void(const std::string&)> visit = [&](const std::string& n) {
    state[n] = 1;
    stack.push_back(n);
    for (const auto& d : by[n]->dependencies) {
      if (!by.count(d.app))
        fail(ErrorKind::invalid, where + ": app '" + n + "' depends on app '" + d.app + "', which is not in the composite app");
      if (state[d.app] == 1) {
        std::string cycle;
        auto it = std::find(stack.begin(), stack.end(), d.app);
        for (; it != stack.end(); ++it) cycle += *it + " -> ";
        fail(ErrorKind::invalid, where + ": app dependency cycle " + cycle + d.app,
             "remove one of the dependencies (anchor .../apps/<app>/dependency)");
      }
      if (state[d.app] == 0) visit(d.app);
    }
    stack.pop_back();
    state[n] = 2;
  };
  for (const auto& a : apps)
    if (state[a.name] == 0) visit(a.name);
}

}  // namespace

namespace {

// A SHA-256 over length-prefixed parts (so no two part lists collide).
class InputDigest {
public:
  InputDigest& add(std::string_view part) {
    m_text += std::to_string(part.size());
    m_text += ':';
    m_text += part;
    return *this;
  }
  // A resource: its key, data and attached files.
  InputDigest& add(const std::optional<store::Resource>& r) {
    if (!r) return add("-");
    add(r->key.str()).add(r->data);
    for (const auto& c : r->contents) add(c.name).add(c.filename).add(sha256_hex(c.data));
    return *this;
  }
  std::string hex() const { return sha256_hex(m_text); }

private:
  std::string m_text;
};

}  // namespace

Plan make(store::Store& st, const Key& dig, const Options& options) {
  const auto& dig_kind = resource::kind("deploymentIntentGroup");
  std::string dig_where = "deployment intent group '" + resource::resource_anchor(dig_kind, dig) + "'";
  auto dig_res = st.get(dig);
  if (!dig_res || dig_res->kind != &dig_kind) fail(ErrorKind::not_found, dig_where + " not found");
  json dig_spec = spec_of(*dig_res);
  Key ca_key = dig.parent_prefix(3);
  std::string project = *dig.get("project"), composite_app = *dig.get("compositeApp"),
              version = *dig.get("compositeAppVersion"), dig_name = *dig.get("deploymentIntentGroup");
  std::string release = str_at(dig_spec, "version");
  std::string lc_name = str_at(dig_spec, "logicalCloud");
  std::string profile_name = str_at(dig_spec, "compositeProfile");

  // Logical cloud: must exist; its cluster references are the only candidates.
  Key lc_key = child(Key{{{"project", project}}}, "logicalCloud", lc_name);
  auto lc = st.get(lc_key);
  if (!lc)
    fail(ErrorKind::not_found, dig_where + ": logical cloud '" + anchor("logicalCloud", lc_key) + "' does not exist");
  json lc_spec = spec_of(*lc);
  std::string level = str_at(lc_spec, "level").empty() ? "1" : str_at(lc_spec, "level");
  std::string ns = str_at(lc_spec, "namespace").empty() ? "default" : str_at(lc_spec, "namespace");
  std::set<std::string> lc_clusters;
  for (const auto& r : st.list(resource::kind("clusterReference"), lc_key)) {
    json s = spec_of(r);
    lc_clusters.insert(str_at(s, "clusterProvider") + "+" + str_at(s, "cluster"));
  }
  if (lc_clusters.empty())
    fail(ErrorKind::invalid, dig_where + ": logical cloud '" + anchor("logicalCloud", lc_key) + "' has no cluster references",
         "add cluster references to the logical cloud");

  Plan plan;
  auto& ctx = plan.context;
  ctx.id = options.context_id.empty() ? random_context_id() : options.context_id;
  ctx.owner = {dig_kind.id, dig};
  ctx.status_context = options.status_context_id;
  ctx.created = options.created.empty() ? system_clock().now_rfc3339() : options.created;
  ctx.meta = {{"Project", project},          {"CompositeApp", composite_app},
              {"Version", version},          {"Release", release},
              {"DeploymentIntentGroup", dig_name}, {"Namespace", ns},
              {"Level", level},              {"LogicalCloud", lc_name}};
  std::string label_prefix = options.status_context_id.empty() ? ctx.id : options.status_context_id;

  // Group intents: genericPlacementIntent entries and controller entries.
  std::vector<std::string> gpis;
  std::vector<std::pair<std::string, std::string>> named;  // controller, intent
  std::map<std::string, std::string> named_in;             // controller -> "group intent '...'" (first)
  for (const auto& gi : st.list(resource::kind("groupIntent"), dig)) {
    json spec = spec_of(gi);
    if (!spec.contains("intent") || !spec["intent"].is_object()) continue;
    for (auto it = spec["intent"].begin(); it != spec["intent"].end(); ++it) {
      if (!it->is_string()) continue;
      if (it.key() == "genericPlacementIntent") {
        gpis.push_back(it->get<std::string>());
      } else {
        named.emplace_back(it.key(), it->get<std::string>());
        named_in.emplace(it.key(), "group intent '" + anchor("groupIntent", gi.key) + "'");
      }
    }
  }
  if (gpis.empty())
    fail(ErrorKind::invalid, dig_where + ": no group intent names a genericPlacementIntent",
         "create a group intent (anchor .../intents) with spec.intent.genericPlacementIntent");
  auto runs = controllers_to_run(st, named, named_in);
  if (!options.registry) fail(ErrorKind::internal, "plan::build needs the runtime's controller registry");
  const controllers::Registry& registry = *options.registry;
  for (const auto& r : runs) {
    bool known = r.type == "placement" ? registry.placement(r.name) != nullptr : registry.action(r.name) != nullptr;
    if (!known)
      fail(ErrorKind::unsupported,
           named_in.at(r.name) + " names controller '" + r.name + "' (type " + r.type + "), but emco has no " + r.name +
               " controller yet",
           "remove it from the group intent to deploy without it; built-in controllers: " + join(registry.names(), ", "));
  }

  // Apps, their profiles and dependencies.
  auto apps = st.list(resource::kind("app"), ca_key);
  std::map<std::string, const store::Resource*> app_res;
  for (const auto& a : apps) {
    appcontext::App app;
    app.name = *a.key.get("app");
    for (const auto& d : st.list(resource::kind("appDependency"), a.key)) {
      json s = spec_of(d);
      app.dependencies.push_back({str_at(s, "app"), str_at(s, "opStatus"), s.value("wait", 0)});
    }
    app_res[app.name] = &a;
    ctx.apps.push_back(std::move(app));
  }
  // A composite app without apps plans an empty deployment, as upstream's
  // does (its controllers may still act).
  check_cycles(ctx.apps, dig_where);

  // Upstream reads the composite profile per app it renders: without apps
  // a missing one does not matter.
  Key cp_key = child(ca_key, "compositeProfile", profile_name);
  if (!ctx.apps.empty() && !st.get(cp_key))
    fail(ErrorKind::not_found,
         dig_where + ": composite profile '" + anchor("compositeProfile", cp_key) + "' does not exist; app '" +
             ctx.apps.front().name + "' needs its app profile from it",
         "create it, or name another composite profile in the DIG's spec.compositeProfile");
  std::map<std::string, const store::Resource*> profiles;
  auto profile_list = st.list(resource::kind("appProfile"), cp_key);
  for (const auto& p : profile_list) {
    std::string app = str_at(spec_of(p), "app");
    if (!profiles.count(app)) profiles[app] = &p;
  }

  // App placement intents: per app the first one naming it.
  std::map<std::string, store::Resource> app_intents;
  for (const auto& g : gpis) {
    Key gk = child(dig, "genericPlacementIntent", g);
    if (!st.get(gk))
      fail(ErrorKind::not_found, dig_where + ": generic placement intent '" + anchor("genericPlacementIntent", gk) +
                                     "' named in a group intent does not exist");
    for (auto& ai : st.list(resource::kind("genericAppPlacementIntent"), gk)) {
      std::string app = str_at(spec_of(ai), "app");
      if (!app_res.count(app))
        fail(ErrorKind::invalid, "app placement intent '" + anchor("genericAppPlacementIntent", ai.key) + "': app '" + app +
                                     "' is not part of composite app '" + anchor("compositeApp", ca_key) + "'");
      if (!app_intents.count(app)) app_intents.emplace(app, std::move(ai));
    }
  }

  // Override values per app (DIG spec.overrideValues), as --set strings.
  std::map<std::string, std::vector<std::string>> overrides;
  if (dig_spec.contains("overrideValues") && dig_spec["overrideValues"].is_array())
    for (const auto& ov : dig_spec["overrideValues"]) {
      std::string app = str_at(ov, "app");
      if (!app_res.count(app))
        fail(ErrorKind::invalid, dig_where + ": overrideValues names app '" + app + "', which is not in the composite app");
      if (ov.contains("values") && ov["values"].is_object())
        for (auto it = ov["values"].begin(); it != ov["values"].end(); ++it)
          overrides[app].push_back(it.key() + "=" + (it->is_string() ? it->get<std::string>() : it->dump()));
    }

  ClusterIndex ix = index_clusters(st);

  // Each app keeps the digest of its inputs, and an update reuses the
  // running context's plan of every app whose inputs are as they were then.
  // Controllers named in the group intents may change any app, so with them
  // everything is planned every time; so is a plan that is explained (emco
  // dig plan shows every candidate).
  if (!options.explain && runs.empty()) {
    const auto running = options.update_from.empty() ? std::map<std::string, appcontext::StoredApp>()
                                                     : appcontext::stored_apps(st, options.update_from);
    InputDigest common;
    common.add(EMCO_VERSION).add(dig_res->data).add(lc->data).add(label_prefix);
    for (const auto& c : lc_clusters) common.add(c);
    for (const auto& gi : st.list(resource::kind("groupIntent"), dig)) common.add(gi.key.str()).add(gi.data);
    for (const auto& c : ix.all) common.add(c);
    for (const auto& [label, clusters] : ix.by_label) {
      common.add(label.first).add(label.second);
      for (const auto& c : clusters) common.add(c);
    }
    for (auto& app : ctx.apps) {
      InputDigest d = common;
      d.add(app.name);
      for (const auto& dep : app.dependencies) d.add(dep.app).add(dep.op_status).add(std::to_string(dep.wait));
      d.add(st.get(app_res[app.name]->key));
      auto pit = profiles.find(app.name);
      if (pit != profiles.end()) d.add(st.get(pit->second->key));
      auto ai = app_intents.find(app.name);
      if (ai != app_intents.end()) d.add(ai->second.key.str()).add(ai->second.data);
      for (const auto& o : overrides[app.name]) d.add(o);
      app.inputs = d.hex();
      auto was = running.find(app.name);
      if (was != running.end() && was->second.inputs == app.inputs && !was->second.plan_digest.empty()) {
        app.elided = true;
        app.plan_digest = was->second.plan_digest;
      }
    }
  }

  Renderer renderer(ctx);
  std::map<std::string, Rendered> rendered;
  std::map<std::string, Placement> placements;
  for (auto& app : ctx.apps) {
    if (app.elided) continue;
    std::string app_where = dig_where + ": app '" + app.name + "'";
    // Placement first: it is cheap and its errors are the likelier ones.
    auto ai = app_intents.find(app.name);
    if (ai == app_intents.end())
      fail(ErrorKind::invalid, app_where + " has no app placement intent",
           "add an app intent under the generic placement intent (no compatible clusters otherwise)");
    std::string intent_where = "app placement intent '" + anchor("genericAppPlacementIntent", ai->second.key) + "'";
    json intent = spec_of(ai->second).value("intent", json::object());
    placements[app.name] = place(intent, intent_where, lc_clusters, lc_name, ix, options.explain);
    if (placements[app.name].chosen.empty())
      fail(ErrorKind::invalid, intent_where + " selects no cluster", "add allOf or anyOf elements");

    // Render once per app; every cluster shares the result.
    auto ares = st.get(app_res[app.name]->key);  // list() leaves attached files out
    const store::Content* chart_pkg = file_of(*ares);
    if (!chart_pkg) fail(ErrorKind::invalid, "app '" + anchor("app", ares->key) + "' has no chart package");
    auto pit = profiles.find(app.name);
    if (pit == profiles.end())
      fail(ErrorKind::invalid, app_where + " has no profile in composite profile '" + anchor("compositeProfile", cp_key) + "'",
           "every app needs an app profile (a minimal one: manifest.yaml naming an empty override_values.yaml)");
    Profile profile = load_profile(*st.get(pit->second->key), app.name);
    try {
      auto files = helm::read_chart_archive(chart_pkg->data);
      for (auto& [path, data] : profile.copies) {
        bool replaced = false;
        for (auto& f : files)
          if (f.name == path) {
            f.data = data;
            replaced = true;
          }
        if (!replaced) files.push_back({path, data});
      }
      helm::Chart chart = helm::load_chart_files(std::move(files));
      if (!chart.metadata.type.empty() && chart.metadata.type != "application")
        fail(ErrorKind::invalid, "chart '" + chart.name() + "' is of type '" + chart.metadata.type +
                                     "'; only application charts can be deployed");
      tmpl::Value values = profile.values;
      values = helm::merge_maps(tmpl::Value(tmpl::Map{}), values);  // a private copy (maps share like Go's)
      for (const auto& s : overrides[app.name]) helm::parse_set(s, values);
      rendered[app.name] = renderer.render(chart, release, ns, values);
      ++plan.renders;
    } catch (const Error& e) {
      throw e.with_context(app_where);
    }
  }

  // Clusters per app with their groups (placement controllers may remove some).
  for (auto& app : ctx.apps)
    if (!app.elided)
      for (const auto& [cluster, a] : placements[app.name].chosen) app.clusters.push_back({cluster, a.group, {}, {}});

  std::map<std::string, std::map<std::string, std::string>> removed_by;  // app -> cluster -> why
  std::map<std::string, std::map<std::string, std::string>> said;        // what the running controller said
  auto name_ctx = [&](const ControllerRun& r) {
    controllers::Call call{st, dig, r.intent, options.update_from, options.live, {}, options.explain_only};
    call.removed = [&said](const std::string& app, const std::string& cluster, const std::string& why) {
      said[app][cluster] = why;
    };
    return call;
  };
  for (const auto& r : runs) {
    if (r.type != "placement") continue;
    std::map<std::string, std::set<std::string>> before;
    for (const auto& a : ctx.apps)
      for (const auto& c : a.clusters) before[a.name].insert(c.name);
    said.clear();
    try {
      registry.placement(r.name)->filter(name_ctx(r), ctx);
    } catch (const Error& e) {
      throw e.with_context(dig_where + ": placement controller '" + r.name + "'");
    }
    for (const auto& a : ctx.apps) {
      std::set<std::string> after;
      for (const auto& c : a.clusters) after.insert(c.name);
      for (const auto& c : before[a.name]) {
        if (after.count(c)) continue;
        auto why = said[a.name].find(c);
        removed_by[a.name][c] = "removed by placement controller '" + r.name + "'" +
                                (why == said[a.name].end() ? "" : ": " + why->second);
      }
    }
  }

  // anyOf pruning: a group with several clusters keeps the lexicographically first.
  std::map<std::string, std::map<std::string, std::string>> pruned;  // app -> cluster -> chosen instead
  for (auto& app : ctx.apps) {
    if (app.elided) continue;
    std::sort(app.clusters.begin(), app.clusters.end(),
              [](const appcontext::Cluster& a, const appcontext::Cluster& b) { return a.name < b.name; });
    // group -> its cluster in `kept`; hashed: allOf gives every cluster a group of its own.
    std::unordered_map<int, size_t> first;
    first.reserve(app.clusters.size());
    std::vector<appcontext::Cluster> kept;
    kept.reserve(app.clusters.size());
    for (auto& c : app.clusters) {
      auto [it, inserted] = first.emplace(c.group, kept.size());
      if (inserted)
        kept.push_back(std::move(c));
      else
        pruned[app.name][c.name] = kept[it->second].name;
    }
    app.clusters = std::move(kept);
    if (app.clusters.empty() && !options.explain_only)
      fail(ErrorKind::invalid, dig_where + ": app '" + app.name + "': no cluster is left after the placement controllers");
    // Every cluster gets the app's rendered resources (shared content).
    const Rendered& r = rendered[app.name];
    for (auto& c : app.clusters) {
      c.resources = r.resources;
      c.hooks = r.hooks;
    }
  }

  for (const auto& r : runs) {
    if (r.type != "action") continue;
    try {
      registry.action(r.name)->update(name_ctx(r), ctx);
    } catch (const Error& e) {
      throw e.with_context(dig_where + ": action controller '" + r.name + "'");
    }
  }

  // The deployment-id label on every object, controller-made ones included;
  // each distinct content is labelled once per app.
  for (auto& app : ctx.apps) {
    std::unordered_map<std::string, appcontext::ContentRef> done;
    std::string value = label_prefix + "-" + app.name;
    auto relabel = [&](appcontext::Resource& r) {
      auto it = done.find(r.hash());
      if (it == done.end()) {
        json o = controllers::parse_object(r.text(), "resource '" + r.name + "' of app '" + app.name + "'");
        label(o, value);
        it = done.emplace(r.hash(), ctx.intern(controllers::object_yaml(o))).first;
      }
      r.content = it->second;
    };
    for (auto& c : app.clusters) {
      for (auto& r : c.resources) relabel(r);
      for (auto& g : c.hooks)
        for (auto& r : g.resources) relabel(r);
    }
  }

  // Explanation: every cluster of the logical cloud, then label matches outside it.
  if (!options.explain) return plan;
  for (const auto& app : ctx.apps) {
    // An app an action controller added (sfc's network-chain-intents) was not placed.
    if (!app_intents.count(app.name)) continue;
    AppExplanation ex;
    ex.app = app.name;
    ex.intent = anchor("genericAppPlacementIntent", app_intents.at(app.name).key);
    const Placement& p = placements[app.name];
    // The logical cloud's clusters, the chosen ones and the final ones in
    // name order, walked together (a search per cluster grew as n log n).
    std::vector<std::string_view> final_clusters;
    final_clusters.reserve(app.clusters.size());
    for (const auto& c : app.clusters) final_clusters.push_back(c.name);
    if (!std::is_sorted(final_clusters.begin(), final_clusters.end()))
      std::sort(final_clusters.begin(), final_clusters.end());
    auto ch = p.chosen.begin();
    auto fin = final_clusters.begin();
    for (const auto& c : lc_clusters) {
      Candidate cand{c, false, ""};
      while (ch != p.chosen.end() && ch->first < c) ++ch;
      while (fin != final_clusters.end() && *fin < c) ++fin;
      if (ch == p.chosen.end() || ch->first != c) {
        cand.reason = "no element of the intent selects it";
      } else if (fin != final_clusters.end() && *fin == c) {
        cand.chosen = true;
        cand.reason = ch->second.why + (ch->second.any_of ? " (lexicographically first anyOf candidate)" : "");
      } else if (removed_by[app.name].count(c)) {
        cand.reason = ch->second.why + "; " + removed_by[app.name][c];
      } else {
        cand.reason = ch->second.why + "; anyOf chose '" + pruned[app.name][c] + "' (lexicographically first)";
      }
      ex.candidates.push_back(std::move(cand));
    }
    for (const auto& [c, why] : p.outside) ex.candidates.push_back({c, false, why});
    plan.explanation.push_back(std::move(ex));
  }
  return plan;
}

appcontext::AppContext build(store::Store& st, const Key& dig, const Options& options) {
  Options o = options;
  o.explain = false;
  return std::move(make(st, dig, o).context);
}

namespace {
json state_info(store::Store& st, const Key& dig) {
  auto r = st.get(dig);
  if (!r || r->state_info.empty()) return json::object();
  return json::parse(r->state_info);
}
}  // namespace

std::optional<std::string> running_context(store::Store& st, const Key& dig) {
  return running_context(st, state_info(st, dig));
}

std::optional<std::string> running_context(store::Store& st, const json& si) {
  if (!si.contains("actions") || !si["actions"].is_array() || si["actions"].empty()) return std::nullopt;
  const json& actions = si["actions"];
  std::string state = str_at(actions.back(), "state");
  if (state != "Instantiated" && state != "InstantiateStopped") return std::nullopt;
  for (auto it = actions.rbegin(); it != actions.rend(); ++it) {
    std::string inst = str_at(*it, "instance");
    if (!inst.empty()) {
      if (!appcontext::exists(st, inst)) return std::nullopt;
      return inst;
    }
  }
  return std::nullopt;
}

std::string status_context(store::Store& st, const Key& dig) { return str_at(state_info(st, dig), "statusctxid"); }

}  // namespace emco::plan
