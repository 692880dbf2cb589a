// What emco stores but cannot run: read from the plugins' PluginInfo, never
// from a list of names, so a plugin that starts running drops out by itself.

#include "core/lifecycle/runtime.hpp"

#include "core/util/strings.hpp"

namespace emco::lifecycle {

namespace {

// Upstream names controllers loosely after their service ("sfcclient" for
// sfcClient, "hpa-placement" for hpaPlacement): compare without case and '-'.
std::string loose(const std::string& s) {
  std::string out;
  for (char c : to_lower(s))
    if (c != '-' && c != '_') out += c;
  return out;
}

bool under_dig(const resource::Kind& k) {
  for (const resource::Kind* c : resource::lineage(k.id))
    if (c->id == "deploymentIntentGroup") return true;
  return false;
}

}  // namespace

const PluginInfo* stored_only_plugin(const Runtime& runtime, const resource::Kind& k) {
  for (const auto& p : runtime.plugins)
    for (const auto& s : p.services)
      if (s == k.service) return p.runs ? nullptr : &p;
  return nullptr;
}

std::string missing_controller(const Runtime& runtime, const std::string& name, const std::string& type) {
  if (type == "placement" && runtime.controllers.placement(name)) return "";
  if (type == "action" && runtime.controllers.action(name)) return "";
  if (type != "placement" && type != "action") return "";
  const std::string want = loose(name);
  for (const auto& p : runtime.plugins) {
    if (p.runs) continue;
    bool match = loose(p.name) == want || starts_with(want, loose(p.name));
    for (const auto& s : p.services) match = match || loose(s) == want;
    if (match) return p.name;
  }
  return name;
}

std::string stored_only_warning(const PluginInfo& p, const resource::Kind& k) {
  // Controller registrations (dtc's nps, sds, ...) are keyed by a fixed group.
  if (!k.fixed.empty())
    return k.display + "s are registered, but emco has no " + p.name + " controller yet; nothing runs them";
  return p.name + " intents are stored, but emco has no " + p.name + " controller yet; " +
         (under_dig(k) ? "instantiate will fail" : "nothing deploys them");
}

std::vector<std::string> stored_only_features(const Runtime& runtime) {
  std::vector<std::string> out;
  for (const auto& p : runtime.plugins)
    if (!p.runs) out.push_back(p.name);
  return out;
}

const ResourcePlanner* resource_planner(const Runtime& runtime, const std::string& kind_id) {
  for (const auto& p : runtime.resource_planners)
    if (p->kind() == kind_id) return p.get();
  return nullptr;
}

}  // namespace emco::lifecycle
