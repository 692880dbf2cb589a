// The table's shared parts: global flags, the nouns, and the whole table
// assembled from the sections each command file contributes.

#include "cli/table.hpp"

#include <mutex>

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

namespace {

// The table's sections, each filed under the first word of its commands'
// paths ("" for the top-level verbs), in display order. A command runs after
// only its word's sections were built (commands_for): building the whole
// table (hundreds of commands, their flags, help and examples) was a third
// of `emco --version`'s time.
struct Section {
  const char* word;
  std::vector<CommandSpec> (*make)();
};
constexpr Section k_sections[] = {
    {"", verb_commands},           {"cluster", cluster_commands}, {"project", project_commands},
    {"app", app_commands},         {"dig", dig_commands},         {"dig", hook_commands},
    {"lc", lc_commands},           {"cert", cert_commands},       {"controller", controller_commands},
    {"sim", sim_commands},         {"ctl", ctl_commands},         {"workspace", workspace_commands},
};
constexpr size_t k_section_count = sizeof k_sections / sizeof k_sections[0];

// Section i, built on first use. Never destroyed, as every table below:
// destroying them was work at every exit.
const std::vector<CommandSpec>& section(size_t i) {
  static std::once_flag once[k_section_count];
  static const std::vector<CommandSpec>* built[k_section_count] = {};
  std::call_once(once[i], [i] { built[i] = new std::vector<CommandSpec>(k_sections[i].make()); });
  return *built[i];
}

}  // namespace

std::vector<const CommandSpec*> commands_for(const std::string& word) {
  std::vector<const CommandSpec*> out;
  bool filed = false;
  for (size_t i = 0; i < k_section_count; ++i) filed = filed || word == k_sections[i].word;
  for (size_t i = 0; i < k_section_count; ++i)
    if (k_sections[i].word == (filed ? word : std::string()))
      for (const auto& c : section(i)) out.push_back(&c);
  return out;
}

const std::vector<CommandSpec>& commands() {
  static const std::vector<CommandSpec>& all = *[] {
    auto* v = new std::vector<CommandSpec>;
    for (size_t i = 0; i < k_section_count; ++i)
      for (const auto& c : section(i)) v->push_back(c);
    return v;
  }();
  return all;
}

}  // namespace emco::cli
