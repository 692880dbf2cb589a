// `emco controller`: placement and action controllers, and the DTC's
// sub-controllers (register, update, get, list, delete).

#include <algorithm>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/resource_verbs.hpp"
#include "cli/table.hpp"
#include "core/util/strings.hpp"
#include "plugins/builtin.hpp"

namespace emco::cli {

using nlohmann::json;

namespace {

// The controllers built into emco and the plugins whose intents emco only
// stores, from the runtime: a registration takes effect only for a
// controller emco has.
std::string builtin_notes() {
  const auto& rt = plugins::builtin_runtime();
  std::vector<std::string> runs, stored;
  for (const auto& p : rt.plugins)
    if (!p.runs) stored.push_back(p.name + " (" + p.summary + ")");
  // A plugin's controllers are registered under its name or names starting
  // with it (hpa-placement-controller-1): listed together with its summary.
  std::vector<std::pair<const lifecycle::PluginInfo*, std::vector<std::string>>> groups;  // by first name
  for (const auto& name : rt.controllers.names()) {
    const lifecycle::PluginInfo* owner = nullptr;
    for (const auto& p : rt.plugins)
      if (name == p.name || starts_with(name, p.name + "-")) owner = &p;
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return owner && x.first == owner; });
    if (g == groups.end())
      groups.push_back({owner, {name}});
    else
      g->second.push_back(name);
  }
  for (const auto& [p, names] : groups)
    runs.push_back(!p ? names.front()
                      : (names == std::vector<std::string>{p->name} ? p->name : join(names, ", ")) + " (" + p->summary + ")");
  std::string notes = "Controllers built into emco: " + join(runs, "; ") + ".";
  if (!stored.empty()) notes += "\nIntents emco stores but does not run yet: " + join(stored, "; ") + ".";
  return notes;
}

}  // namespace

std::vector<CommandSpec> controller_commands() {
  std::vector<CommandSpec> v;
  auto controller_flags = std::vector<FlagSpec>{
      {.name = "type", .value = "TYPE", .help = "controller type", .choices = {"placement", "action"}},
      {.name = "priority", .value = "N", .help = "run order among controllers of the same type (0 first; 0-100)"},
      {.name = "host", .value = "HOST", .help = "recorded for emcoctl compatibility; controllers run in process"},
      {.name = "port", .value = "PORT", .help = "recorded for emcoctl compatibility"}};
  auto controller_build = [](const Invocation& inv, json& spec, manifest::Document&) {
    if (inv.has("type")) spec["type"] = inv.get("type");
    if (inv.has("priority")) spec["priority"] = inv.get_int("priority");
    if (inv.has("host")) spec["host"] = inv.get("host");
    if (inv.has("port")) spec["port"] = inv.get_int("port");
  };
  add_verbs(v, {.words = {"controller"}, .kind = "controller", .address = "CONTROLLER", .create_verb = "register",
                .flags = controller_flags, .build = controller_build,
                .examples = {"emco controller register gac --type action --priority 1"}, .notes = builtin_notes()});
  add_verbs(v, {.words = {"controller", "dtc"}, .kind = "dtcController", .address = "CONTROLLER", .create_verb = "register",
                .flags = controller_flags, .build = controller_build,
                .examples = {"emco controller dtc register nps --type action --priority 1"}});
  return v;
}

}  // namespace emco::cli
