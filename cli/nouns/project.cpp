// `emco project`: create, update, get, list, delete.

#include "cli/resource_verbs.hpp"
#include "cli/table.hpp"

namespace emco::cli {

std::vector<CommandSpec> project_commands() {
  std::vector<CommandSpec> v;
  add_verbs(v, {.words = {"project"}, .kind = "project", .address = "PROJECT", .examples = {"emco project create proj1"}});
  return v;
}

}  // namespace emco::cli
