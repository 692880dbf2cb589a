#include "core/resource/kinds.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::resource {

// ---- Key ------------------------------------------------------------------

std::string Key::str() const {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += '/';
    out += parts[i].first;
    out += '=';
    out += parts[i].second;
  }
  return out;
}

std::string Key::json() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [e, v] : parts) j[e] = v;
  return j.dump();
}

std::string Key::key_id() const {
  std::vector<std::string> names;
  for (const auto& p : parts) names.push_back(p.first);
  std::sort(names.begin(), names.end());
  std::string out = "{";
  for (const auto& n : names) out += n + ",";
  return out + "}";
}

std::optional<std::string> Key::get(const std::string& element) const {
  for (const auto& [e, v] : parts)
    if (e == element) return v;
  return std::nullopt;
}

Key Key::parent_prefix(size_t n) const {
  Key k;
  k.parts.assign(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(std::min(n, parts.size())));
  return k;
}

Key Key::parse(const std::string& canonical) {
  Key k;
  if (canonical.empty()) return k;
  for (const auto& part : split(canonical, '/')) {
    auto eq = part.find('=');
    k.parts.emplace_back(part.substr(0, eq), eq == std::string::npos ? "" : part.substr(eq + 1));
  }
  return k;
}

// ---- The registry ---------------------------------------------------------

namespace {

Schema no_spec() { return obj({}); }
Schema kv_list() { return obj({req("kv", array(map_of(str(128))))}); }
// Cluster sync objects also hold key material inline (sshKey, knownHosts,
// caCert: see plugins/targets/gitops/gitops_target.cpp).
constexpr size_t k_sync_object_value_max = 64 * 1024;
Schema sync_object_kv_list() { return obj({req("kv", array(map_of(str(k_sync_object_value_max))))}); }
// Upstream's ranges: orchestrator and clm controllers port 0-50000 and
// priority 0-100 (rsync is registered without one, i.e. 0); dtc's
// sub-controllers port 1-65535 and priority 1-100.
Schema controller_spec(long long port_min = 0, long long port_max = 50000, long long priority_min = 0) {
  return obj({opt("host", str(128)), opt("port", integer(port_min, port_max)),
              opt("type", one_of({"placement", "action"}, true)), opt("priority", integer(priority_min, 100))});
}
Schema placement_element() {
  return obj({req("clusterProvider", name_str()), opt("cluster", name_str()), opt("clusterLabel", name_str())});
}


// Core's kinds, in registry order: what finding one needs, and how to make
// the rest of it. Each is made on first need (core_kind): making them all,
// schemas and all, was a sixth of `emco get`'s own instructions, and a
// short command needs a few.
struct CoreKind {
  std::string_view id;
  std::string_view parent;
  std::string_view collection;
  Kind (*make)();  // the kind but its id, parent and collection
};

constexpr CoreKind k_core[] = {
    // clm
    {"clusterProvider", "", "cluster-providers",
     [] {
       return Kind{.elements = {"clusterProvider"}, .service = "clm", .display = "cluster provider", .spec = no_spec()};
     }},
    {"cluster", "clusterProvider", "clusters",
     [] {
       return Kind{
           .elements = {"cluster"},
           .service = "clm",
           .display = "cluster",
           .spec = obj({opt("gitOps",
                            obj({req("gitOpsType", one_of({"fluxcd", "fluxv2", "anthos", "azureArcV2"})),
                                 req("gitOpsReferenceObject", name_str()), req("gitOpsResourceObject", name_str())}))}),
           .file = FileMode::single,
           .file_what = "kubeconfig",
           .lifecycle = true,
           .operations = {"apply", "terminate", "stop"},
           .references = {Reference{"clusterSyncObject", RefType::path, "", {}, {}, "",
                                    {"gitOps.gitOpsReferenceObject", "gitOps.gitOpsResourceObject"}, {}}},
           .secret_file = true};
     }},
    {"clusterLabel", "cluster", "labels",
     [] {
       return Kind{.elements = {"clusterLabel"},
                   .service = "clm",
                   .display = "cluster label",
                   .spec = no_spec(),
                   .body = BodyShape::label};
     }},
    {"clusterKv", "cluster", "kv-pairs",
     [] {
       return Kind{.elements = {"clusterKv"}, .service = "clm", .display = "cluster kv pairs", .spec = kv_list()};
     }},
    {"clusterSyncObject", "clusterProvider", "cluster-sync-objects",
     [] {
       return Kind{.elements = {"clusterSyncObject"},
                   .service = "clm",
                   .display = "cluster sync object",
                   .spec = sync_object_kv_list(),
                   .secret_spec = true};
     }},
    {"clmController", "", "clm-controllers",
     [] {
       return Kind{.elements = {"controller"},
                   .fixed = {{"controllerGroup", "cluster"}},
                   .service = "clm",
                   .display = "clm controller",
                   .spec = controller_spec()};
     }},
    // orchestrator
    {"controller", "", "controllers",
     [] {
       return Kind{.elements = {"controller"},
                   .fixed = {{"controllerGroup", "orchestrator"}},
                   .service = "orchestrator",
                   .display = "controller",
                   .spec = controller_spec()};
     }},
    {"dtcController", "", "dtc-controllers",
     [] {
       return Kind{.elements = {"controller"},
                   .fixed = {{"controllerGroup", "dtc"}},
                   .service = "dtc",
                   .display = "dtc controller",
                   .spec = controller_spec(1, 65535, 1)};
     }},
    {"project", "", "projects",
     [] { return Kind{.elements = {"project"}, .service = "orchestrator", .display = "project", .spec = no_spec()}; }},
    {"compositeApp", "project", "composite-apps",
     [] {
       return Kind{.elements = {"compositeApp", "compositeAppVersion"},
                   .service = "orchestrator",
                   .display = "composite app",
                   .spec = obj({req("compositeAppVersion", name_str()), opt("id", str())})};
     }},
    {"app", "compositeApp", "apps",
     [] {
       return Kind{.elements = {"app"},
                   .service = "orchestrator",
                   .display = "app",
                   .spec = no_spec(),
                   .file = FileMode::single,
                   .file_required = true,
                   .file_what = "Helm chart"};
     }},
    {"appDependency", "app", "dependency",
     [] {
       return Kind{.elements = {"appDependency"},
                   .service = "orchestrator",
                   .display = "app dependency",
                   .spec = obj({req("app", name_str()), req("opStatus", one_of({"Ready", "Deployed"}, true)),
                                opt("wait", integer(0, 4096))}),
                   .references = {plain_ref("app")}};
     }},
    {"compositeProfile", "compositeApp", "composite-profiles",
     [] {
       return Kind{.elements = {"compositeProfile"},
                   .service = "orchestrator",
                   .display = "composite profile",
                   .spec = no_spec()};
     }},
    {"appProfile", "compositeProfile", "profiles",
     [] {
       return Kind{.elements = {"appProfile"},
                   .service = "orchestrator",
                   .display = "app profile",
                   .spec = obj({req("app", name_str())}),
                   .file = FileMode::single,
                   .file_required = true,
                   .file_what = "profile package",
                   .references = {plain_ref("app")}};
     }},
    {"deploymentIntentGroup", "compositeApp", "deployment-intent-groups",
     [] {
       return Kind{
           .elements = {"deploymentIntentGroup"},
           .service = "orchestrator",
           .display = "deployment intent group",
           .spec =
               obj({req("compositeProfile", name_str()), req("version", name_str()), req("logicalCloud", name_str()),
                    opt("overrideValues", array(obj({req("app", name_str()), opt("values", map_of(str()))}))),
                    opt("id", str())},
                   {"services", "instantiatedServices", "action", "isCheckedOut"}),
           .lifecycle = true,
           .operations = {"approve", "instantiate", "terminate", "stop", "update", "rollback", "migrate", "clone"},
           // A DIG whose composite profile is missing is stored (upstream does);
           // instantiate needs the profile only for the apps it renders.
           .references = {plain_ref("logicalCloud"), soft_ref("compositeProfile")}};
     }},
    {"groupIntent", "deploymentIntentGroup", "intents",
     [] {
       return Kind{.elements = {"groupIntent"},
                   .service = "orchestrator",
                   .display = "group intent",
                   // Values as upstream's schema has them (any string up to 128): a Go
                   // template's '<no value>' is stored, with a warning (manifest.cpp).
                   .spec = obj({req("intent", map_of(str(128)))}),
                   .references = {Reference{"controller", RefType::map, "intent", {{"controllerGroup", "orchestrator"}},
                                            {"genericPlacementIntent"}, "", {}, {}}}};
     }},
    {"genericPlacementIntent", "deploymentIntentGroup", "generic-placement-intents",
     [] {
       return Kind{.elements = {"genericPlacementIntent"},
                   .service = "orchestrator",
                   .display = "generic placement intent",
                   .spec = obj({}, {"logicalCloud"})};
     }},
    {"genericAppPlacementIntent", "genericPlacementIntent", "app-intents",
     [] {
       return Kind{
           .elements = {"genericAppPlacementIntent"},
           .service = "orchestrator",
           .display = "app placement intent",
           .spec = obj({req("app", name_str()), req("intent", obj({opt("selector", one_of({"name", "label"}, true)),
                                                                   opt("allOf", array(placement_element())),
                                                                   opt("anyOf", array(placement_element()))}))}),
           .references = {plain_ref("app"), many_ref("cluster"),
                          Reference{"clusterLabel", RefType::label, "", {}, {}, "", {}, {}}}};
     }},
    {"service", "project", "services",
     [] {
       return Kind{.elements = {"service"},
                   .service = "orchestrator",
                   .display = "service",
                   .spec = obj({opt("digs", array(str()))}),
                   .lifecycle = true,
                   .operations = {"update", "instantiate", "terminate", "instantiate-apps", "terminate-apps"}};
     }},
    // dcm
    {"logicalCloud", "project", "logical-clouds",
     [] {
       return Kind{.elements = {"logicalCloud"},
                   .service = "dcm",
                   .display = "logical cloud",
                   .spec = obj({opt("level", one_of({"0", "1"})), opt("namespace", name_str()),
                                opt("user", obj({opt("userName", str(20)), opt("type", str())})),
                                opt("labels", map_of(str()))}),
                   .lifecycle = true,
                   .operations = {"instantiate", "terminate", "update", "stop"}};
     }},
    {"clusterReference", "logicalCloud", "cluster-references",
     [] {
       return Kind{.elements = {"clusterReference"},
                   .service = "dcm",
                   .display = "cluster reference",
                   .spec = obj({req("clusterProvider", name_str()), req("cluster", name_str()),
                                opt("loadBalancerIP", str(16)), opt("certificate", str())}),
                   .references = {plain_ref("cluster")}};
     }},
    {"userPermission", "logicalCloud", "user-permissions",
     [] {
       return Kind{.elements = {"userPermission"},
                   .service = "dcm",
                   .display = "user permission",
                   .spec = obj({opt("namespace", str()), opt("apiGroups", array(str())), opt("resources", array(str())),
                                opt("verbs", array(str()))})};
     }},
    {"clusterQuota", "logicalCloud", "cluster-quotas",
     [] {
       return Kind{.elements = {"clusterQuota"}, .service = "dcm", .display = "cluster quota", .spec = map_of(str())};
     }},
    {"logicalCloudKv", "logicalCloud", "kv-pairs",
     [] {
       return Kind{
           .elements = {"logicalCloudKv"}, .service = "dcm", .display = "logical cloud kv pairs", .spec = kv_list()};
     }},
};
constexpr size_t k_core_count = std::size(k_core);

std::optional<size_t> core_index(std::string_view id) {
  for (size_t i = 0; i < k_core_count; ++i)
    if (k_core[i].id == id) return i;
  return std::nullopt;
}

struct Registry {
  // Core's kinds (made in place on first need), then the plugins'. A deque:
  // installing kinds never moves those handed out.
  std::deque<Kind> kinds{k_core_count};
  std::array<Kind*, k_core_count> core{};  // kinds[i], reached without the deque (install_kinds grows it)
  std::array<std::once_flag, k_core_count> made;
  std::map<std::string, size_t> plugin_by_id;  // index in kinds
  Registry() {
    for (size_t i = 0; i < k_core_count; ++i) core[i] = &kinds[i];
  }
};

Registry& registry() {
  // Never destroyed: destroying every kind's schema was work at every exit.
  static Registry& r = *new Registry;
  return r;
}

const Kind& core_kind(size_t i) {
  Registry& r = registry();
  std::call_once(r.made[i], [&] {
    Kind k = k_core[i].make();
    k.id = k_core[i].id;
    k.parent = k_core[i].parent;
    k.collection = k_core[i].collection;
    *r.core[i] = std::move(k);
  });
  return *r.core[i];
}

void (*g_kind_loader)() = nullptr;
std::once_flag g_kinds_loaded;
thread_local bool t_loading = false;  // this thread runs the loader: its lookups see what is installed

// Every kind, the plugins' too: runs the loader (once) unless this thread
// is running it.
Registry& complete_registry() {
  if (g_kind_loader && !t_loading)
    std::call_once(g_kinds_loaded, [] {
      t_loading = true;
      g_kind_loader();
      t_loading = false;
    });
  return registry();
}

}  // namespace

void set_kind_loader(void (*loader)()) { g_kind_loader = loader; }

Reference plain_ref(std::string target) { return Reference{std::move(target), RefType::plain, "", {}, {}, "", {}, {}}; }
Reference many_ref(std::string target) { return Reference{std::move(target), RefType::many, "", {}, {}, "", {}, {}}; }
Reference soft_ref(std::string target) {
  Reference r = plain_ref(std::move(target));
  r.soft = true;
  return r;
}

void install_kinds(std::vector<Kind>&& kinds) {
  Registry& r = registry();
  auto defined = [&r](const std::string& id) { return core_index(id) || r.plugin_by_id.count(id); };
  for (Kind& k : kinds) {
    if (defined(k.id))
      fail(ErrorKind::internal, "resource kind '" + k.id + "' is defined twice");
    if (k.parent.empty())
      fail(ErrorKind::internal, "resource kind '" + k.id + "' has no parent: the roots of the resource tree are core's");
    if (!defined(k.parent))
      fail(ErrorKind::internal, "resource kind '" + k.id + "' names parent '" + k.parent + "', which is not defined before it");
    r.plugin_by_id[k.id] = r.kinds.size();
    r.kinds.push_back(std::move(k));
  }
}

const std::deque<Kind>& all_kinds() {
  Registry& r = complete_registry();
  for (size_t i = 0; i < k_core_count; ++i) core_kind(i);
  return r.kinds;
}

const Kind* find_kind(const std::string& id) {
  // Core's kinds answer most lookups without the plugins' being built.
  if (auto i = core_index(id)) return &core_kind(*i);
  const Registry& r = complete_registry();
  auto it = r.plugin_by_id.find(id);
  return it == r.plugin_by_id.end() ? nullptr : &r.kinds[it->second];
}

const Kind& kind(const std::string& id) {
  if (const Kind* k = find_kind(id)) return *k;
  fail(ErrorKind::internal, "unknown resource kind '" + id + "'");
}

const Kind* find_root(std::string_view collection) {
  // Roots are core's (install_kinds refuses others): the plugins' kinds
  // need not be built to tell an anchor from an address.
  for (size_t i = 0; i < k_core_count; ++i)
    if (k_core[i].parent.empty() && k_core[i].collection == collection) return &core_kind(i);
  return nullptr;
}

std::vector<const Kind*> children_of(const std::string& id) {
  std::vector<const Kind*> out;
  for (const auto& k : all_kinds())
    if (k.parent == id) out.push_back(&k);
  return out;
}

std::vector<const Kind*> lineage(const std::string& id) {
  std::vector<const Kind*> chain;
  for (const Kind* k = &kind(id); k; k = k->parent.empty() ? nullptr : &kind(k->parent)) chain.push_back(k);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

size_t key_size(const Kind& k) {
  size_t n = 0;
  for (const Kind* c : lineage(k.id)) n += c->fixed.size() + c->elements.size();
  return n;
}

// ---- Anchors --------------------------------------------------------------

namespace {

[[noreturn]] void bad_segment(const std::vector<std::string>& segs, size_t i, const std::vector<std::string>& expected,
                              const std::string& what) {
  std::string before;
  for (size_t j = 0; j < i; ++j) before += (j ? "/" : "") + segs[j];
  std::string msg = i < segs.size() ? "unknown anchor segment '" + segs[i] + "'" : "anchor ends early";
  if (!before.empty()) msg += " after '" + before + "'";
  std::string hint;
  if (i < segs.size()) {
    std::string guess = closest_match(segs[i], expected);
    if (!guess.empty()) hint = "did you mean '" + guess + "'?";
  }
  if (hint.empty() && !expected.empty()) hint = what + ": " + join(expected, ", ");
  fail(ErrorKind::invalid, msg, hint);
}

void add_key(Key& key, const Kind& k, const std::vector<std::string>& values) {
  for (const auto& f : k.fixed) key.parts.push_back(f);
  for (size_t i = 0; i < k.elements.size(); ++i) key.parts.emplace_back(k.elements[i], values[i]);
}

}  // namespace

Anchor parse_anchor(const std::string& text) {
  Anchor a;
  std::string path = text;
  if (auto q = path.find('?'); q != std::string::npos) {
    a.query = path.substr(q + 1);
    path = path.substr(0, q);
  }
  if (starts_with(path, "/")) path = path.substr(1);
  if (starts_with(path, "v2/")) path = path.substr(3);
  while (ends_with(path, "/")) path.pop_back();
  a.text = path;
  if (path.empty()) fail(ErrorKind::invalid, "empty anchor", "an anchor looks like 'projects/p1/composite-apps'");
  auto segs = split(path, '/');
  for (const auto& s : segs)
    if (s.empty()) fail(ErrorKind::invalid, "anchor '" + path + "' has an empty segment");

  // The root collection.
  const Kind* current = find_root(segs[0]);
  if (!current) {
    std::vector<std::string> roots;
    for (const auto& k : all_kinds())
      if (k.parent.empty()) roots.push_back(k.collection);
    bad_segment(segs, 0, roots, "an anchor starts with one of");
  }

  Key key;
  size_t i = 1;
  for (;;) {
    // At a collection of `current`, parent key = key.
    if (i == segs.size()) {
      a.target = AnchorTarget::collection;
      a.kind = current;
      a.key = key;
      return a;
    }
    size_t n = current->elements.size();
    if (i + n > segs.size()) {
      // composite-apps/{ca} without version: name what is missing.
      fail(ErrorKind::invalid, "anchor '" + path + "' names a " + current->display + " without its version",
           "use '" + join(std::vector<std::string>(segs.begin(), segs.end()), "/") + "/<version>'");
    }
    std::vector<std::string> values(segs.begin() + static_cast<std::ptrdiff_t>(i),
                                    segs.begin() + static_cast<std::ptrdiff_t>(i + n));
    add_key(key, *current, values);
    i += n;
    if (i == segs.size()) {
      a.target = AnchorTarget::resource;
      a.kind = current;
      a.key = key;
      return a;
    }
    // Next: a child collection, an operation or status.
    std::vector<std::string> expected;
    const Kind* next = nullptr;
    for (const Kind* c : children_of(current->id)) {
      expected.push_back(c->collection);
      if (c->collection == segs[i]) next = c;
    }
    if (next) {
      current = next;
      ++i;
      continue;
    }
    std::string rest;
    for (size_t j = i; j < segs.size(); ++j) rest += (j > i ? "/" : "") + segs[j];
    if (rest == "status" || ends_with(rest, "/status")) {
      if (current->lifecycle || rest == "status") {
        a.target = AnchorTarget::status;
        a.kind = current;
        a.key = key;
        a.operation = rest;
        return a;
      }
    }
    for (const auto& op : current->operations) {
      expected.push_back(op);
      if (op == rest) {
        a.target = AnchorTarget::operation;
        a.kind = current;
        a.key = key;
        a.operation = op;
        return a;
      }
    }
    if (current->lifecycle) expected.push_back("status");
    bad_segment(segs, i, expected, "a " + current->display + " anchor continues with one of");
  }
}

std::string resource_anchor(const Kind& k, const Key& key) {
  std::string out;
  size_t pos = 0;
  for (const Kind* c : lineage(k.id)) {
    if (!out.empty()) out += '/';
    out += c->collection;
    pos += c->fixed.size();
    for (size_t i = 0; i < c->elements.size(); ++i) out += "/" + key.parts.at(pos++).second;
  }
  return out;
}

std::string collection_anchor(const Kind& k, const Key& parent_key) {
  if (k.parent.empty()) return k.collection;
  return resource_anchor(kind(k.parent), parent_key) + "/" + k.collection;
}

}  // namespace emco::resource
