#pragma once
// The verbs of a resource noun (`emco cluster create|update|get|list|delete`,
// ...), made from a description of the noun. Each builds an emcoctl
// document and runs it through manifest::run_batch, over the same store and
// validation as batch files, so a resource made here is exactly the
// resource a YAML file would make.

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cli/table.hpp"
#include "core/manifest/manifest.hpp"

namespace emco::cli {

// Fills the document's spec (and files, e.g. a chart) from the noun's flags.
using SpecBuilder = std::function<void(const Invocation&, nlohmann::json& spec, manifest::Document& doc)>;

struct Noun {
  std::vector<std::string> words;     // {"cluster", "label"}
  std::string kind;                   // kind id
  std::string address;                // "PROVIDER/CLUSTER/LABEL"
  std::string create_verb = "create";
  std::string update_verb = "update";  // "modify" where "update" is a lifecycle operation
  std::vector<FlagSpec> flags;        // create/update flags mapped to spec
  SpecBuilder build;                  // fills spec from those flags
  std::vector<std::string> examples;
  bool updatable = true;
  std::string notes;  // a paragraph for the create and update help (what the spec holds)
};

// Appends the noun's create (or n.create_verb), update (or n.update_verb,
// unless !n.updatable), get, list and delete commands to `out`.
void add_verbs(std::vector<CommandSpec>& out, const Noun& n);
// Appends one command per (operation, summary) that runs a lifecycle
// operation without waiting (`emco dig approve`).
void add_operations(std::vector<CommandSpec>& out, const Noun& n, const std::vector<std::pair<std::string, std::string>>& ops);

// KEY=VALUE items of a repeatable flag, split at the first '='; Error(usage)
// naming the flag for an item without one.
std::vector<std::pair<std::string, std::string>> key_values(const std::vector<std::string>& items, const std::string& flag);
// The '/'-separated parts of a flag's value; Error(usage) unless there are `parts`.
std::vector<std::string> split_address(const std::string& text, const std::string& flag, size_t parts);
// --kv items as the spec's kv list ([{KEY: VALUE}, ...]), and that flag.
nlohmann::json kv_list(const std::vector<std::string>& items, const std::string& flag);
FlagSpec kv_flag();

}  // namespace emco::cli
