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
      {"cert", "enroll and distribute CA certificates (ca-certs) and show their status"},
      {"controller", "register placement and action controllers"},
      {"sim", "run simulated Kubernetes clusters on this machine"},
      {"ctl", "run emcoctl commands (compatibility mode; also as 'emcoctl')"},
      {"workspace", "move a workspace between backends and manage the key of its secrets"},
  };
  return n;
}

const std::vector<CommandSpec>& commands() {
  static const std::vector<CommandSpec> all = [] {
    std::vector<CommandSpec> v;
    for (auto section : {verb_commands, cluster_commands, project_commands, app_commands, dig_commands, hook_commands, lc_commands,
                         cert_commands, controller_commands, sim_commands, ctl_commands, workspace_commands})
      for (auto& c : section()) v.push_back(std::move(c));
    return v;
  }();
  return all;
}

}  // namespace emco::cli
