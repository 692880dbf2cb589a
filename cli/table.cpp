// The table's shared parts: global flags, the nouns, and the whole table
// assembled from the sections each command file contributes.

#include "cli/table.hpp"

namespace emco::cli {

const std::vector<FlagSpec>& global_flags() {
  static const std::vector<FlagSpec> g = {
      {.name = "workspace", .value = "DIR", .help = "use the workspace in DIR instead of searching upwards (also EMCO_WORKSPACE)",
       .complete = Complete::directory},
      {.name = "help", .short_name = 'h', .help = "show help for the command"},
      {.name = "quiet", .short_name = 'q', .help = "print only errors and requested data"},
  };
  return g;
}

const std::vector<NounSpec>& nouns() {
  static const std::vector<NounSpec> n = {
      {"cluster", "register cluster providers, clusters, labels, kv pairs and sync objects"},
      {"project", "manage projects"},
      {"app", "manage composite apps, apps (Helm charts), composite profiles and app profiles"},
      {"dig", "manage deployment intent groups, their intents and lifecycle"},
      {"lc", "manage logical clouds, cluster references, quotas and permissions"},
      {"controller", "register placement and action controllers"},
      {"sim", "run simulated Kubernetes clusters on this machine"},
      {"ctl", "run emcoctl commands (compatibility mode; also as 'emcoctl')"},
  };
  return n;
}

std::vector<CommandSpec> plan_commands();  // dig plan|render|explain (cli/cmd_plan.cpp)

const std::vector<CommandSpec>& commands() {
  static const std::vector<CommandSpec> all = [] {
    std::vector<CommandSpec> v = core_commands();
    for (auto& c : resource_commands()) v.push_back(std::move(c));
    for (auto& c : deploy_commands()) v.push_back(std::move(c));
    for (auto& c : lc_commands()) v.push_back(std::move(c));
    for (auto& c : plan_commands()) v.push_back(std::move(c));  // cli/cmd_plan.cpp
    for (auto& c : tool_commands()) v.push_back(std::move(c));
    for (auto& c : ctl_commands()) v.push_back(std::move(c));
    return v;
  }();
  return all;
}

}  // namespace emco::cli
