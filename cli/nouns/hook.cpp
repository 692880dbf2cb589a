// `emco dig hook ...` and `emco dig workflow ...`: tac intents (workflow
// hooks around a DIG's instantiate, update and terminate), their worker
// DIGs, and workflow intents with start, status and cancel (plugins/tac);
// `emco dig emco-hook ...`: emco's own hooks (plugins/hooks).

#include <nlohmann/json.hpp>

#include "cli/address.hpp"
#include "cli/context.hpp"
#include "cli/operations.hpp"
#include "cli/output.hpp"
#include "cli/resource_verbs.hpp"
#include "cli/table.hpp"
#include "core/util/error.hpp"
#include "core/util/file_io.hpp"
#include "plugins/builtin.hpp"
#include "plugins/tac/plugin.hpp"

namespace emco::cli {

using nlohmann::json;

namespace {

constexpr char k_hook_address[] = "PROJECT/COMPOSITE-APP/VERSION/DIG/HOOK";
constexpr char k_workflow_address[] = "PROJECT/COMPOSITE-APP/VERSION/DIG/WORKFLOW";

// The flags of a workflow client call, shared by hooks and workflow intents.
std::vector<FlagSpec> workflow_flags() {
  return {{.name = "client", .value = "HOST:PORT", .help = "the workflow client (spec.workflowClient)"},
          {.name = "workflow-client", .value = "NAME", .help = "the client's workflow to invoke (spec.temporal.workflowClientName)"},
          {.name = "task-queue", .value = "QUEUE", .help = "spec.temporal.workflowStartOptions.TaskQueue"},
          {.name = "workflow-id", .value = "ID", .help = "spec.temporal.workflowStartOptions.ID"}};
}

void build_workflow(const Invocation& inv, json& spec) {
  if (inv.has("client")) {
    const std::string c = inv.get("client");
    const auto colon = c.rfind(':');
    const std::string port = colon == std::string::npos ? "" : c.substr(colon + 1);
    if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5)
      fail(ErrorKind::usage, "'--client " + c + "' is not HOST:PORT");
    spec["workflowClient"] = {{"clientEndpointName", c.substr(0, colon)}, {"clientEndpointPort", std::stoi(port)}};
  }
  if (!spec.contains("temporal")) spec["temporal"] = json::object();
  if (inv.has("workflow-client")) spec["temporal"]["workflowClientName"] = inv.get("workflow-client");
  if (inv.has("task-queue")) spec["temporal"]["workflowStartOptions"]["TaskQueue"] = inv.get("task-queue");
  if (inv.has("workflow-id")) spec["temporal"]["workflowStartOptions"]["ID"] = inv.get("workflow-id");
}

std::vector<FlagSpec> temporal_flags() {
  return {{.name = "temporal-server", .value = "HOST:PORT|URL", .help = "the Temporal frontend's HTTP API (port 7243 by default; https:// for TLS)"},
          {.name = "namespace", .value = "NAMESPACE", .help = "the Temporal namespace", .default_value = "default"},
          {.name = "run-id", .value = "ID", .help = "the workflow run (default: the open or latest run)"},
          {.name = "id", .value = "ID", .help = "the workflow id (default: the intent's workflowStartOptions.ID)"},
          {.name = "ca-file", .value = "FILE", .help = "CA certificate (PEM) the frontend's certificate must chain to", .complete = Complete::file},
          {.name = "cert-file", .value = "FILE", .help = "client certificate (PEM) for mutual TLS", .complete = Complete::file},
          {.name = "key-file", .value = "FILE", .help = "the client certificate's key (PEM)", .complete = Complete::file},
          {.name = "tls-server-name", .value = "NAME", .help = "verify the frontend's certificate for this name"},
          {.name = "insecure-skip-tls-verify", .help = "do not verify the frontend's certificate"}};
}

plugins::tac::TemporalAccess access_of(const Invocation& inv) {
  plugins::tac::TemporalAccess a;
  a.server = inv.get("temporal-server");
  a.ns = inv.get("namespace", "default");
  auto pem = [&](const char* flag) {
    return inv.has(flag) ? read_input_file(inv.get(flag), {.what = std::string("--") + flag + " file"}) : std::string();
  };
  a.ca_pem = pem("ca-file");
  a.cert_pem = pem("cert-file");
  a.key_pem = pem("key-file");
  a.server_name = inv.get("tls-server-name");
  a.insecure_skip_verify = inv.has("insecure-skip-tls-verify");
  return a;
}

resource::Key intent_key(const Invocation& inv, const char* kind, const std::string& address) {
  return resolve_address(resource::kind(kind), inv.args[0], address);
}

int status_cmd(Context& ctx, const Invocation& inv, const char* kind, const std::string& address) {
  plugins::tac::StatusQuery q;
  q.workflow_id = inv.get("id");
  q.run_id = inv.get("run-id");
  q.describe = inv.has("describe") || (!inv.has("history") && !inv.has("query"));
  q.history = inv.has("history");
  q.query_type = inv.get("query");
  q.query_args = inv.get("query-args");
  json out = plugins::tac::workflow_status(ctx.store(), intent_key(inv, kind, address), access_of(inv), q);
  if (parse_format(inv.get("output", "json")) == Format::yaml) print_yaml(ctx.out, out);
  else print_json(ctx.out, out);
  return 0;
}

int cancel_cmd(Context& ctx, const Invocation& inv, const char* kind, const std::string& address) {
  bool terminate = inv.has("terminate");
  plugins::tac::workflow_cancel(ctx.store(), intent_key(inv, kind, address), access_of(inv), inv.get("id"),
                                inv.get("run-id"), terminate, inv.get("reason"));
  ctx.out << (terminate ? "workflow terminated\n" : "workflow cancel requested\n");
  return 0;
}

std::vector<FlagSpec> status_flags_of() {
  auto f = temporal_flags();
  f.push_back({.name = "describe", .help = "describe the workflow execution (the default when nothing else is asked)"});
  f.push_back({.name = "history", .help = "the workflow's history events so far"});
  f.push_back({.name = "query", .value = "TYPE", .help = "run this query on the workflow"});
  f.push_back({.name = "query-args", .value = "JSON", .help = "the query's arguments, a JSON array"});
  f.push_back(output_flag({Format::json, Format::yaml}, "json"));
  return f;
}

std::vector<FlagSpec> cancel_flags_of() {
  auto f = temporal_flags();
  f.push_back({.name = "terminate", .help = "terminate the workflow instead of asking it to cancel"});
  f.push_back({.name = "reason", .value = "TEXT", .help = "why (recorded by Temporal)"});
  return f;
}

void add_workflow_calls(std::vector<CommandSpec>& v, const std::string& noun, const char* kind, const std::string& what,
                        const std::string& address, const std::string& example) {
  v.push_back({.path = {"dig", noun, "status"},
               .summary = "query the workflow of a " + what + " on a Temporal server",
               .description = "Upstream's status call against the Temporal frontend's HTTP API: --describe\n"
                              "(DescribeWorkflowExecution, the default), --history (the events so far), --query TYPE\n"
                              "with --query-args (QueryWorkflow; the first result payload, decoded). The workflow is\n"
                              "the intent's spec.temporal.workflowStartOptions.ID unless --id is given.",
               .args = {{.name = address, .help = "the intent (or its anchor)", .complete = Complete::anchor}},
               .flags = status_flags_of(),
               .examples = {"emco dig " + noun + " status " + example + " --temporal-server temporal:7243 --query progress"},
               .handler = [kind, address](Context& c, const Invocation& i) { return status_cmd(c, i, kind, address); }});
  v.push_back({.path = {"dig", noun, "cancel"},
               .summary = "cancel or terminate the workflow of a " + what,
               .description = "RequestCancelWorkflowExecution (or, with --terminate, TerminateWorkflowExecution)\n"
                              "through the Temporal frontend's HTTP API, as upstream's cancel anchor does with its\n"
                              "spec (temporalServer, workflowID, runID, terminate, reason).",
               .args = {{.name = address, .help = "the intent (or its anchor)", .complete = Complete::anchor}},
               .flags = cancel_flags_of(),
               .examples = {"emco dig " + noun + " cancel " + example + " --temporal-server temporal:7243 --terminate"},
               .handler = [kind, address](Context& c, const Invocation& i) { return cancel_cmd(c, i, kind, address); }});
}

}  // namespace

std::vector<CommandSpec> hook_commands() {
  // The nouns' kinds are tac's: installed with the runtime, which a table
  // built before it (the docs generator, tests) must bring up first.
  plugins::builtin_runtime();
  std::vector<CommandSpec> v;
  auto hook_flags = workflow_flags();
  hook_flags.push_back({.name = "hook-type", .value = "TYPE", .help = "when it runs (spec.hookType; migrate runs the target's -update hooks, rollback post-update)",
                        .choices = {"pre-install", "post-install", "pre-update", "post-update", "pre-termination",
                                    "post-termination"}});
  hook_flags.push_back({.name = "non-blocking", .help = "a failure is reported, not fatal (spec.hookBlocking: false)"});
  add_verbs(v, {.words = {"dig", "hook"}, .kind = "workflowHookIntent", .address = k_hook_address,
                .flags = hook_flags,
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  build_workflow(inv, spec);
                  if (inv.has("hook-type")) spec["hookType"] = inv.get("hook-type");
                  if (inv.has("non-blocking")) spec["hookBlocking"] = false;
                },
                .examples = {"emco dig hook create proj1/collection/v1/dig1/smoke --hook-type post-install "
                             "--client wfclient.demo:9090 --workflow-client smoke_test --task-queue SMOKE --workflow-id smoke-1"},
                .notes = "When the DIG is instantiated, updated or terminated, its pre-hooks run before delivery and\n"
                         "its post-hooks after: emco POSTs spec.temporal to http://HOST:PORT/invoke/WORKFLOW-CLIENT\n"
                         "(204 = started), as upstream's tac does. Worker DIGs ('emco dig hook worker') of a pre-hook\n"
                         "are instantiated before it (when Approved or Terminated) and terminated at the post point.\n"
                         "A failing blocking hook fails the operation (before delivery: nothing is recorded)."});
  add_verbs(v, {.words = {"dig", "hook", "worker"}, .kind = "workerIntent", .address = std::string(k_hook_address) + "/WORKER",
                .flags = {{.name = "worker-dig", .value = "COMPOSITE-APP/VERSION/DIG", .help = "the worker DIG (same project)"},
                          {.name = "start-to-close-timeout", .value = "MS", .help = "how long it may take to deploy (milliseconds)"}},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (inv.has("worker-dig")) {
                    auto p = split_address(inv.get("worker-dig"), "worker-dig", 3);
                    spec["compositeApp"] = p[0];
                    spec["compositeAppVersion"] = p[1];
                    spec["deploymentIntentGroup"] = p[2];
                  }
                  if (inv.has("start-to-close-timeout")) spec["startToCloseTimeout"] = inv.get_int("start-to-close-timeout");
                },
                .examples = {"emco dig hook worker create proj1/collection/v1/dig1/smoke/w1 --worker-dig workers/v1/worker-dig "
                             "--start-to-close-timeout 60000"}});
  add_workflow_calls(v, "hook", "workflowHookIntent", "tac intent", k_hook_address, "proj1/collection/v1/dig1/smoke");
  return v;
}

std::vector<CommandSpec> workflow_commands() {
  plugins::builtin_runtime();  // the kind is tac's (see hook_commands)
  std::vector<CommandSpec> v;
  add_verbs(v, {.words = {"dig", "workflow"}, .kind = "workflowIntent", .address = k_workflow_address,
                .flags = workflow_flags(),
                .build = [](const Invocation& inv, json& spec, manifest::Document&) { build_workflow(inv, spec); },
                .examples = {"emco dig workflow create proj1/collection/v1/dig1/migrate --client wfclient.demo:9090 "
                             "--workflow-client migrate_workflowclient --task-queue MIGRATION_TASK_Q --workflow-id migrate-1"}});
  v.push_back({.path = {"dig", "workflow", "start"},
               .summary = "start the workflow of a workflow intent through its workflow client",
               .description = "POSTs spec.temporal to http://HOST:PORT/invoke/WORKFLOW-CLIENT; 204 means started (upstream's\n"
                              "start anchor, '.../temporal-workflow-intents/NAME/start').",
               .args = {{.name = k_workflow_address, .help = "the workflow intent (or its anchor)", .complete = Complete::anchor}},
               .examples = {"emco dig workflow start proj1/collection/v1/dig1/migrate"},
               .handler = [](Context& ctx, const Invocation& inv) {
                 ctx.out << plugins::tac::workflow_start(ctx.store(), intent_key(inv, "workflowIntent", k_workflow_address)) << "\n";
                 return 0;
               }});
  add_workflow_calls(v, "workflow", "workflowIntent", "workflow intent", k_workflow_address, "proj1/collection/v1/dig1/migrate");
  return v;
}

std::vector<CommandSpec> emco_hook_commands() {
  plugins::builtin_runtime();  // the kind is the hooks plugin's (see hook_commands)
  std::vector<CommandSpec> v;
  add_verbs(v, {.words = {"dig", "emco-hook"}, .kind = "emcoHook", .address = "PROJECT/COMPOSITE-APP/VERSION/DIG/HOOK",
                .flags = {{.name = "hook-type", .value = "TYPE", .help = "when it runs (spec.hookType; migrate runs the target's -update hooks, rollback post-update)",
                           .choices = {"pre-install", "post-install", "pre-update", "post-update", "pre-termination",
                                       "post-termination"}},
                          {.name = "command", .value = "ARG", .help = "run this command (each --command one argv word; spec.exec.command)", .repeatable = true},
                          {.name = "url", .value = "URL", .help = "POST the operation to this URL instead (spec.http.url)"},
                          {.name = "timeout", .value = "DURATION", .help = "how long it may take (spec.timeout; default 60s)"},
                          {.name = "non-blocking", .help = "a failure is reported, not fatal (spec.blocking: false)"}},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (inv.has("hook-type")) spec["hookType"] = inv.get("hook-type");
                  if (inv.has("command")) spec["exec"] = {{"command", inv.all("command")}};
                  if (inv.has("url")) spec["http"] = {{"url", inv.get("url")}};
                  if (inv.has("timeout")) spec["timeout"] = inv.get("timeout");
                  if (inv.has("non-blocking")) spec["blocking"] = false;
                },
                .examples = {"emco dig emco-hook create proj1/collection/v1/dig1/smoke --hook-type post-install "
                             "--command ./smoke-test.sh --command --quick --timeout 5m"},
                .notes = "An emco extension (upstream has none): at its hook point the command runs with EMCO_PROJECT,\n"
                         "EMCO_COMPOSITE_APP, EMCO_COMPOSITE_APP_VERSION, EMCO_DIG, EMCO_OPERATION, EMCO_HOOK_POINT,\n"
                         "EMCO_REVISION, EMCO_CONTEXT_ID and EMCO_CLUSTER_RESULTS (JSON: per cluster, resources by\n"
                         "status) in its environment, or the same facts are POSTed as JSON to the URL (2xx passes).\n"
                         "Its output is kept in the operation's hook log ('emco dig history'). A failing blocking\n"
                         "pre-hook stops the operation before anything is delivered: CI can gate a rollout on it."});
  return v;
}

}  // namespace emco::cli
