// hpa action: the node selectors and resource requests of hpa intents
// written into the workloads (plugins/hpa/hpa.hpp states what is written).

#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/plan/object.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "plugins/hpa/hpa.hpp"

namespace emco::controllers {

using nlohmann::json;
using namespace emco::plugins::hpa;

namespace {

// Writes consumer `c`'s requirements into workload object `o`.
void apply_consumer(json& o, const Consumer& c, const std::string& resource_name) {
  json& spec = o["spec"];
  if (c.replicas > 0 && spec.contains("replicas")) spec["replicas"] = c.replicas;
  json& pod = spec["template"]["spec"];
  for (const Requirement& r : c.requirements) {
    if (!r.allocatable) {
      pod["nodeSelector"][r.key] = r.value;
      continue;
    }
    json* container = nullptr;
    std::vector<std::string> names;
    for (auto& k : pod["containers"]) {
      names.push_back(k.value("name", ""));
      if (k.value("name", "") == c.container) container = &k;
    }
    if (!container)
      fail(ErrorKind::invalid,
           c.where + ": workload '" + resource_name + "' has no container '" + c.container + "'",
           names.empty() ? "the workload has no containers" : "its containers: " + join(names, ", "));
    const long long scale = r.resource == "memory" ? 1000LL * 1000LL : 1LL;
    (*container)["resources"]["requests"][r.resource] = unformatted_quantity(r.requests * scale);
    if (r.limits > 0) (*container)["resources"]["limits"][r.resource] = unformatted_quantity(r.limits * scale);
  }
}

}  // namespace

void HpaAction::update(const Call& call, appcontext::AppContext& ctx) const {
  const std::vector<Intent> intents = load(call.store, call.dig);
  for (const auto& in : intents) {
    appcontext::App* app = ctx.find_app(in.app);
    if (!app) fail(ErrorKind::invalid, in.where + ": app '" + in.app + "' is not in the composite app");
    for (const Consumer& c : in.consumers) {
      if (c.requirements.empty()) continue;
      const std::string resource_name = c.workload + "+" + c.kind;
      // Clusters share content: each distinct workload text is edited once.
      std::unordered_map<std::string, appcontext::ContentRef> done;
      for (auto& cl : app->clusters) {
        appcontext::Resource* r = cl.find(resource_name);
        if (!r) {
          std::vector<std::string> workloads;
          for (const auto& x : cl.resources)
            if (ends_with(x.name, "+" + c.kind)) workloads.push_back(x.name.substr(0, x.name.size() - c.kind.size() - 1));
          fail(ErrorKind::invalid,
               c.where + ": app '" + in.app + "' has no " + c.kind + " '" + c.workload + "'",
               workloads.empty() ? "spec.name names the workload's metadata.name; the app has no " + c.kind
                                 : "spec.name names the workload's metadata.name: " + join(workloads, ", "));
        }
        auto it = done.find(r->hash());
        if (it == done.end()) {
          json o = parse_object(r->text(), "resource '" + r->name + "' of app '" + in.app + "'");
          apply_consumer(o, c, resource_name);
          it = done.emplace(r->hash(), ctx.intern(object_yaml(o))).first;
        }
        r->content = it->second;
      }
    }
  }
}

}  // namespace emco::controllers
