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
// paths ("" for the top-level verbs) and, for a noun's sub-nouns and its
// most used commands, the second ("dig hook", "dig status"), in display
// order. A command runs after only the sections its words name were built
// (commands_for): building the whole table (hundreds of commands, their
// flags, help and examples) was a third of `emco --version`'s time, and the
// rest of the dig section (its generated verbs and lifecycle operations)
// was 9% of `emco dig status`'s instructions.
struct Section {
  const char* word;
  const char* second;  // nullptr: every command of `word` not filed deeper
  std::vector<CommandSpec> (*make)();
};
constexpr Section k_sections[] = {
    {"", nullptr, verb_commands},
    {"cluster", nullptr, cluster_commands},
    {"project", nullptr, project_commands},
    {"app", nullptr, app_commands},
    {"dig", nullptr, dig_commands},
    {"dig", "status", dig_status_commands},
    {"dig", "intent", dig_intent_commands},
    {"dig", "placement", dig_placement_commands},
    {"dig", "app-intent", dig_app_intent_commands},
    {"dig", "hook", hook_commands},
    {"dig", "workflow", workflow_commands},
    {"dig", "emco-hook", emco_hook_commands},
    {"dig", "rollout", rollout_commands},
    {"dig", "rollout-strategy", rollout_strategy_commands},
    {"lc", nullptr, lc_commands},
    {"cert", nullptr, cert_commands},
    {"controller", nullptr, controller_commands},
    {"sim", nullptr, sim_commands},
    {"ctl", nullptr, ctl_commands},
    {"workspace", nullptr, workspace_commands},
    {"serve", nullptr, serve_commands},
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

std::vector<const CommandSpec*> commands_for(const std::vector<std::string>& words) {
  std::vector<const CommandSpec*> out;
  const std::string first = words.empty() ? std::string() : words[0];
  bool filed = false, filed_deeper = false;
  for (const auto& s : k_sections) {
    filed = filed || first == s.word;
    filed_deeper = filed_deeper || (first == s.word && s.second && words.size() >= 2 && words[1] == s.second);
  }
  for (size_t i = 0; i < k_section_count; ++i) {
    const Section& s = k_sections[i];
    if (s.word != (filed ? first : std::string())) continue;
    // Words filed deeper ("dig hook ...") need only their own sections.
    if (filed_deeper ? !s.second || words[1] != s.second : s.second != nullptr) continue;
    for (const auto& c : section(i)) out.push_back(&c);
  }
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
