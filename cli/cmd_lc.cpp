// Logical-cloud commands beyond create/get/modify/delete (cli/cmd_resources.cpp)
// and the lifecycle operations (cli/cmd_deploy.cpp): the cloud's status.

#include <nlohmann/json.hpp>

#include "cli/address.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "cli/table.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/util/error.hpp"

namespace emco::cli {

using nlohmann::json;
using resource::Key;

namespace {

const std::string k_lc_address = "PROJECT/LOGICAL-CLOUD";

int status_cmd(Context& ctx, const Invocation& inv) {
  const auto& k = resource::kind("logicalCloud");
  Key key = resolve_address(k, inv.args[0], k_lc_address);
  auto r = ctx.store().get(key);
  if (!r) fail(ErrorKind::not_found, store::describe(k, key) + " does not exist");
  json si = r->state_info.empty() ? json::object() : json::parse(r->state_info);
  Format f = parse_format(inv.get("output", "table"));
  if (f == Format::json || f == Format::yaml) {
    json out = {{"name", key.parts.back().second}, {"states", si}, {"deployedStatus", lifecycle::current_state(r->state_info)}};
    if (f == Format::json) print_json(ctx.out, out);
    else print_yaml(ctx.out, out);
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& a : si.value("actions", json::array()))
    rows.push_back({a.value("state", ""), a.value("instance", ""), std::to_string(a.value("revision", 0)), a.value("time", "")});
  print_table(ctx.out, {"STATE", "INSTANCE", "REVISION", "TIME"}, rows);
  return 0;
}

}  // namespace

std::vector<CommandSpec> lc_commands() {
  std::vector<CommandSpec> v;
  v.push_back({.path = {"lc", "status"},
               .summary = "show the logical cloud's state history",
               .args = {{.name = k_lc_address, .help = "the logical cloud (or its anchor)", .complete = Complete::anchor}},
               .flags = {{.name = "output", .short_name = 'o', .value = "FORMAT", .help = "output format",
                          .choices = {"table", "json", "yaml"}, .default_value = "table"}},
               .examples = {"emco lc status proj1/tenant-a"},
               .handler = status_cmd});
  return v;
}

}  // namespace emco::cli
