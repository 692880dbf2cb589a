// The top-level verbs: the workspace (init), batch files and anchors (apply,
// update, get, delete), the deployments in the workspace (status, sync),
// Helm in process (template), version and the hidden docs generator.

#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli/batch_output.hpp"
#include "cli/context.hpp"
#include "cli/docs.hpp"
#include "cli/interrupt.hpp"
#include "cli/operations.hpp"
#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "cli/values_renderer.hpp"
#include "core/helm/helm.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/sync/worker.hpp"
#include "core/manifest/batch.hpp"
#include "core/status/status.hpp"
#include "core/store/archive.hpp"
#include "core/store/vault.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::cli {

using nlohmann::json;

namespace {

// Marks a workspace whose creator chose to keep its secrets unencrypted, so
// that a later `emco init --store URL` on another machine joins it as it is
// (an encrypted one says so with meta "vault.key").
constexpr const char* k_plain_meta = "vault.plain";

int run_init(Context& ctx, const Invocation& inv) {
  std::string dir = inv.args.empty() ? "." : inv.args[0];
  bool created = false;
  std::string url = inv.get("store", "");
  if (url.empty())
    if (const char* env = std::getenv("EMCO_STORE")) url = env;
  // Secrets at rest: on by default in a shared database, opt-in for a file.
  if (inv.has("encrypt") && inv.has("no-encrypt")) fail(ErrorKind::usage, "give --encrypt or --no-encrypt, not both");
  const bool encrypt = inv.has("encrypt") || (!url.empty() && !inv.has("no-encrypt"));
  const bool fresh = !std::filesystem::exists(std::filesystem::path(dir) / ".emco");
  const bool dir_existed = std::filesystem::exists(dir);
  const std::optional<store::VaultKey> key = encrypt && fresh ? store::key_from_environment() : std::nullopt;
  const std::string key_hint = "create one with 'emco workspace key generate FILE' and set EMCO_KEY_FILE=FILE (or EMCO_KEY)" +
                               std::string(url.empty() ? "" : ", or pass --no-encrypt");
  // A SQLite workspace is new exactly when its directory is: refuse before
  // creating anything.
  if (encrypt && fresh && !key && url.empty()) fail(ErrorKind::usage, "--encrypt needs the workspace key", key_hint);
  auto ws = store::init_workspace(dir, created, url);
  bool joined = false;
  if (created) {
    auto st = store::Store::open(ws);
    // A database may already hold a workspace another machine created: this
    // one joins it, keeping the encryption its creator chose.
    joined = st->encrypted() || st->meta(k_plain_meta).has_value();
    if (joined) {
      if (inv.has("encrypt") || inv.has("no-encrypt"))
        ctx.note(std::string("the workspace on the store was created ") +
                 (st->encrypted() ? "with encrypted secrets" : "without encryption") + "; " +
                 (inv.has("encrypt") ? "--encrypt" : "--no-encrypt") +
                 " does not change that (see 'emco workspace rotate-key')");
    } else if (encrypt && !key) {
      std::error_code ec;
      std::filesystem::remove_all(dir_existed ? ws.dir() : ws.root, ec);  // nothing of this init stays behind
      fail(ErrorKind::usage, "a PostgreSQL workspace keeps its secrets encrypted, and no key is set", key_hint);
    } else if (key) {
      store::rotate_key(*st, *key);
      ctx.note("secrets are encrypted with key " + key->id + " (EMCO_KEY_FILE / EMCO_KEY)");
    } else if (!url.empty()) {
      st->set_meta(k_plain_meta, "1");
    }
  }
  const std::string where = url.empty() ? "" : " (store " + url + ")";
  if (joined) ctx.out << "Initialized emco workspace in " << ws.dir().string() << where << ", joining the workspace there\n";
  else if (created) ctx.out << "Initialized empty emco workspace in " << ws.dir().string() << where << "\n";
  else ctx.out << "Reinitialized existing emco workspace in " << ws.dir().string() << where << "\n";
  return 0;
}

manifest::ReadOptions read_options(const Invocation& inv, bool strict = true) {
  manifest::ReadOptions o;
  o.strict_top_level = strict;
  if (inv.has("values")) o.render = make_values_renderer(inv.get("values"));
  return o;
}

int run_batch_command(Context& ctx, const Invocation& inv, manifest::Verb verb) {
  Format format = parse_format(inv.get("output", "table"));
  manifest::BatchOptions opts;
  opts.continue_on_error = inv.has("continue-on-error");
  opts.ignore_not_found = inv.has("ignore-not-found");
  opts.show_secrets = verb == manifest::Verb::get && inv.has("show-secrets");
  if (!inv.has("filename")) {
    // Bare anchors: `emco get projects/p1/composite-apps`, `emco apply .../approve`.
    if (inv.args.empty())
      fail(ErrorKind::usage, "give -f FILE or an anchor", "e.g. 'emco get projects' or 'emco apply -f flow.yaml'");
    int code = 0;
    for (size_t i = 0; i < inv.args.size(); ++i) {
      // -o yaml over several anchors: one document each, as a YAML stream.
      if (i > 0 && format == Format::yaml) ctx.out << "---\n";
      code = std::max(code, run_anchor(ctx, verb, inv.args[i], format, opts));
    }
    return code;
  }
  if (!inv.args.empty())
    fail(ErrorKind::usage, "give either -f FILE or anchors, not both");
  std::vector<manifest::File> files;
  for (const auto& f : inv.all("filename")) {
    auto more = manifest::read_files(f, read_options(inv));
    for (auto& m : more) files.push_back(std::move(m));
  }
  return run_and_print(ctx, verb, files, opts, format);
}

int run_version(Context& ctx, const Invocation&) {
  ctx.out << "emco version " << EMCO_VERSION << " (workspace schema " << store::Store::schema_version() << ")\n";
  return 0;
}

const std::vector<FlagSpec> batch_flags(bool with_values, bool with_continue, bool with_ignore) {
  std::vector<FlagSpec> f = {
      {.name = "filename", .short_name = 'f', .value = "FILE",
       .help = "emcoctl YAML file, directory of .yaml files, or - for stdin", .repeatable = true, .complete = Complete::file},
  };
  if (with_values)
    f.push_back({.name = "values", .short_name = 'v', .value = "FILE",
                 .help = "values for the Go template in the files (emcoctl -v)", .complete = Complete::file});
  if (with_continue)
    f.push_back({.name = "continue-on-error", .help = "keep going after a failing document (each commits on its own)"});
  if (with_ignore) f.push_back({.name = "ignore-not-found", .help = "treat resources that are already gone as deleted"});
  f.push_back(output_flag());
  return f;
}

int run_template(Context& ctx, const Invocation& inv) {
  helm::TemplateArgs a;
  a.chart = inv.args.at(0);
  a.value_files = inv.all("values");
  a.set = inv.all("set");
  a.set_string = inv.all("set-string");
  a.namespace_name = inv.get("namespace", "default");
  a.release_name = inv.get("release-name", "release-name");
  a.include_crds = inv.has("include-crds");
  a.skip_tests = inv.has("skip-tests");
  a.leave_to_exit = true;  // the command is the process's last work
  return helm::template_main(a, ctx.out, ctx.err);
}

std::string counts_text(const json& counts) {
  std::string s;
  for (const auto& [name, n] : counts.items()) s += (s.empty() ? "" : " ") + name + "=" + std::to_string(n.get<int64_t>());
  return s;
}

int workspace_status_cmd(Context& ctx, const Invocation& inv) {
  Format f = parse_format(inv.get("output", "table"));
  auto& st = ctx.store();
  return watchable(ctx, inv, [&](std::ostream& os) {
    json s = status::workspace_status(st);
    if (f == Format::json) return print_json(os, s);
    if (f == Format::yaml) return print_yaml(os, s);
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : s["resources"])
      rows.push_back({r["kind"], r["anchor"], r.value("state", ""), std::to_string(r.value("revision", 0)),
                      r.value("deployedStatus", ""), counts_text(r.value("deployedCounts", json::object()))});
    print_table(os, {"KIND", "ANCHOR", "STATE", "REVISION", "DEPLOYED", "RESOURCES"}, rows);
    if (!s["queued"].empty()) {
      os << "\nqueued work:\n";
      std::vector<std::vector<std::string>> q;
      for (const auto& r : s["queued"])
        q.push_back({r["context"], r["status"], r["running"].get<bool>() ? "being delivered" : "waiting for 'emco sync'"});
      print_table(os, {"CONTEXT", "STATUS", "STATE"}, q);
    }
    std::vector<std::vector<std::string>> owed;
    for (const auto& r : s["resources"])
      if (r.value("childContextsPending", false))
        owed.push_back({r["anchor"], r["context"], r.contains("childContextsError")
                                                       ? "failed: " + r["childContextsError"].get<std::string>()
                                                       : "waiting for 'emco sync'"});
    if (!owed.empty()) {
      os << "\nchild contexts to make:\n";
      print_table(os, {"ANCHOR", "CONTEXT", "STATE"}, owed);
    }
  });
}

// `emco sync --worker`: a delivery worker until interrupted (or idle).
int sync_worker(Context& ctx, const Invocation& inv, lifecycle::OperationOptions& o) {
  Format f = parse_format(inv.get("output", "table"));
  o.progress = nullptr;  // a worker's jobs belong to many operations: no progress line
  auto report = lifecycle::work(ctx.store(), o, inv.has("until-idle"));
  json driven = json::array();
  for (const auto& r : report.driven)
    driven.push_back({{"context", r.context}, {"delivery", delivery_name(r.delivery)}, {"deployedStatus", r.status},
                      {"failures", r.failures}});
  json out = {{"worker", sync::worker_id()},        {"jobs", report.jobs.jobs},
              {"failed", report.jobs.failed},       {"released", report.jobs.lost},
              {"roundTrips", report.round_trips},   {"driven", driven}};
  if (f == Format::json) print_json(ctx.out, out);
  else if (f == Format::yaml) print_yaml(ctx.out, out);
  else
    ctx.out << "worker " << sync::worker_id() << ": " << report.jobs.jobs << " jobs (" << report.jobs.failed
            << " failed, " << report.jobs.lost << " released unfinished), drove " << report.driven.size()
            << " contexts, " << report.round_trips << " database round trips\n";
  return 0;
}

int sync_cmd(Context& ctx, const Invocation& inv) {
  InterruptGuard guard;
  ctx.delivers = true;
  if (inv.has("until-idle") && !inv.has("worker"))
    fail(ErrorKind::usage, "--until-idle needs --worker", "run 'emco sync --worker --until-idle'");
  ProgressView view(ctx, !inv.has("worker"));
  auto o = options_of(ctx, inv, view);
  o.wait = true;
  if (inv.has("worker")) return sync_worker(ctx, inv, o);
  auto results = lifecycle::resume(ctx.store(), o);
  view.finish();
  Format f = parse_format(inv.get("output", "table"));
  int code = 0;
  json out = json::array();
  for (const auto& r : results) {
    code = std::max(code, exit_of(r.delivery));
    out.push_back({{"context", r.context}, {"delivery", delivery_name(r.delivery)}, {"deployedStatus", r.status},
                   {"failures", r.failures}});
    if (f == Format::table) {
      ctx.out << "context " << r.context << " " << r.status << "\n";
      for (const auto& fl : r.failures) ctx.err << "emco: failed: " << fl << "\n";
    }
  }
  if (f == Format::json) print_json(ctx.out, out);
  else if (f == Format::yaml) print_yaml(ctx.out, out);
  else if (results.empty()) ctx.out << "nothing queued\n";
  if (code == 8) explain_pending(ctx, "emco sync", o);
  return code;
}


}  // namespace

std::vector<CommandSpec> verb_commands() {
  std::vector<CommandSpec> v;
  v.push_back({.path = {"init"},
               .summary = "create an empty workspace",
               .description =
                   "Creates DIR/.emco/ (mode 0700) holding the SQLite workspace database (mode 0600), or, with\n"
                   "--store (or EMCO_STORE), a team workspace kept in PostgreSQL: .emco/store then holds only\n"
                   "the URL. Credentials come from libpq's environment and files (PGPASSWORD, ~/.pgpass,\n"
                   "PGSERVICE; PGSSLMODE or sslmode=verify-full for TLS), never from the URL. The schema is\n"
                   "the URL's search_path (options=-csearch_path%3Dteam1), created when absent.\n"
                   "Secrets (credentials, cluster kubeconfigs, sync objects' kv) are encrypted at rest with the\n"
                   "key in EMCO_KEY_FILE (or EMCO_KEY): by default on PostgreSQL (init refuses without a key\n"
                   "unless --no-encrypt), with --encrypt on SQLite (see 'emco workspace key generate').\n"
                   "With --store naming a database that already holds a workspace (made on another machine),\n"
                   "init joins it as it is: its encryption stays what its creator chose.\n"
                   "Running it again on an existing workspace is harmless.",
               .args = {{.name = "DIR", .help = "directory to create the workspace in (default: the current directory)",
                         .optional = true, .complete = Complete::directory}},
               .flags = {{.name = "store", .value = "URL",
                          .help = "keep the workspace in this PostgreSQL database (postgresql://[user@]host[:port]/db"
                                  "[?options=-csearch_path%3DSCHEMA]); default: $EMCO_STORE, else a SQLite file"},
                         {.name = "encrypt", .help = "encrypt the workspace's secrets with the key in EMCO_KEY_FILE or EMCO_KEY "
                                                     "(the default with --store)"},
                         {.name = "no-encrypt", .help = "keep a PostgreSQL workspace's secrets unencrypted"}},
               .needs_workspace = false,
               .examples = {"emco init", "emco init ~/fleet",
                            "emco init --store 'postgresql://emco@db.example.com/fleet?sslmode=verify-full"
                            "&options=-csearch_path%3Dteam1'"},
               .handler = run_init});
  v.push_back({.path = {"apply"},
               .summary = "create or update resources from emcoctl files, or run a lifecycle anchor",
               .description =
                   "Applies every document of the files in order. A new resource is 'created', a changed one\n"
                   "'configured', an identical one 'unchanged'. All declarative documents apply in one\n"
                   "transaction: any error changes nothing. Lifecycle anchors (.../approve, .../instantiate)\n"
                   "run after the commit, in file order. file:/files: paths are read relative to the YAML file.",
               .args = {{.name = "ANCHOR", .help = "anchor to apply with an empty body (e.g. a lifecycle anchor)",
                         .optional = true, .variadic = true, .complete = Complete::anchor}},
               .flags = batch_flags(true, true, false),
               .examples = {"emco apply -f prerequisites.yaml -v values.yaml",
                            "emco apply projects/p1/composite-apps/ca/v1/deployment-intent-groups/d1/approve"},
               .handler = [](Context& c, const Invocation& i) { return run_batch_command(c, i, manifest::Verb::apply); }});
  v.push_back({.path = {"update"},
               .summary = "update existing resources from emcoctl files",
               .description = "Like apply, but every resource must already exist (emcoctl update).",
               .flags = batch_flags(true, true, false),
               .examples = {"emco update -f intents.yaml -v values.yaml"},
               .handler = [](Context& c, const Invocation& i) { return run_batch_command(c, i, manifest::Verb::update); }});
  v.push_back({.path = {"get"},
               .summary = "show resources named by emcoctl files or anchors",
               .description = "With an anchor of a collection, lists it; of a resource, shows it.",
               .args = {{.name = "ANCHOR", .help = "resource or collection anchor", .optional = true, .variadic = true,
                         .complete = Complete::anchor}},
               .flags = [] {
                 auto f = batch_flags(true, false, false);
                 f.push_back({.name = "show-secrets", .help = "show credential values instead of <redacted>"});
                 return f;
               }(),
               .examples = {"emco get projects", "emco get cluster-providers/p1/clusters -o json", "emco get -f apps.yaml"},
               .handler = [](Context& c, const Invocation& i) { return run_batch_command(c, i, manifest::Verb::get); }});
  v.push_back({.path = {"delete"},
               .summary = "delete resources named by emcoctl files (in reverse order) or anchors",
               .description = "Deletes the documents of the files in reverse order; .../instantiate documents become\n"
                              "terminate, approve documents are skipped. A resource with children or referrers is\n"
                              "not deleted and the error names them.",
               .args = {{.name = "ANCHOR", .help = "resource anchor", .optional = true, .variadic = true,
                         .complete = Complete::anchor}},
               .flags = batch_flags(true, true, true),
               .examples = {"emco delete -f prerequisites.yaml -v values.yaml", "emco delete projects/p1"},
               .handler = [](Context& c, const Invocation& i) { return run_batch_command(c, i, manifest::Verb::remove); }});
  v.push_back({.path = {"version"},
               .summary = "print the emco version",
               .needs_workspace = false,
               .needs_plugins = false,
               .handler = run_version});
  v.push_back({.path = {"__docs"},
               .summary = "generate man pages and shell completions from the command table",
               .args = {{.name = "WHAT", .help = "man|bash|zsh|fish"}, {.name = "DIR", .help = "output directory"}},
               .needs_workspace = false,
               .hidden = true,
               .handler = run_docs});
  v.push_back({.path = {"status"},
               .summary = "summarize every deployment in the workspace",
               .description = "One line per logical cloud and deployment intent group (state, revision, deploy status,\n"
                              "resource counts), the work queued for 'emco sync', and the deployments delivered whose\n"
                              "child contexts are still to make (after a kill, or a planner's failure; 'emco sync' makes them).",
               .flags = {output_flag({Format::table, Format::json, Format::yaml}),
                         {.name = "watch", .short_name = 'w', .help = "refresh every 2 seconds until Ctrl-C"}},
               .handler = workspace_status_cmd});
  v.push_back({.path = {"sync"},
               .summary = "resume deliveries left queued (interrupted, timed out or --no-wait)",
               .description = "Delivers every AppContext with queued events that no running emco process is working on.\n"
                              "Work an interrupted emco left queued (Ctrl-C, kill -9, power loss, --no-wait) is also resumed\n"
                              "by any later emco command that opens the workspace: it starts 'emco sync' in the background\n"
                              "(one per workspace, messages in .emco/sync.log) and returns at once. EMCO_AUTO_RESUME=0 turns\n"
                              "that off.\n"
                              "A deployment intent group delivered this way gets its child contexts (dtc's service\n"
                              "discovery) here, as it would have in the command that started it; those a killed process or a\n"
                              "failed planner left still to make are made too (once, however many processes sync at once).\n"
                              "\n"
                              "With --worker (team workspaces on PostgreSQL only; a SQLite workspace is delivered by one\n"
                              "process), runs as a delivery worker until interrupted: on any number of machines, workers\n"
                              "claim the (app, cluster) jobs of every operation (FOR UPDATE SKIP LOCKED, a lease by the\n"
                              "database's clock), deliver them and record their status, and drive contexts whose process\n"
                              "died. A killed worker's jobs are claimed again once its lease (10s) expires; 'emco dig stop'\n"
                              "reaches every worker within a second. The emco that starts an operation is a worker for it\n"
                              "too, so one machine alone still finishes. --parallel is the jobs one worker runs at once;\n"
                              "--timeout does not apply. Prints the jobs it ran and its database round trips at the end.",
               .flags = [] {
                 auto f = wait_flags();
                 f.push_back({.name = "worker",
                              .help = "run as a delivery worker until interrupted (PostgreSQL workspaces)"});
                 f.push_back({.name = "until-idle",
                              .help = "with --worker: exit once no job is claimable and no context has queued work"});
                 return f;
               }(),
               .examples = {"emco sync", "emco sync --worker", "emco sync --worker --until-idle --parallel 32"},
               .handler = sync_cmd});
  v.push_back({.path = {"template"},
               .summary = "render a Helm chart locally, exactly as 'helm template' prints it",
               .description = "In-process Helm: no helm binary is needed. Output is byte-identical to helm 3.17.3's, and a "
                              "rendered document helm refuses (bad YAML, a merge of a non-map, a list or null as a key, "
                              ".inf, an explicit tag its text does not fit, a list where metadata belongs) is refused "
                              "with helm's message: 'YAML parse error on PATH: ...' (exit 1).",
               .args = {{.name = "CHART", .help = "chart directory or .tgz package", .complete = Complete::file}},
               .flags = {{.name = "values", .short_name = 'f', .value = "FILE", .help = "values file", .repeatable = true,
                          .complete = Complete::file},
                         {.name = "set", .value = "KEY=VALUE", .help = "set a value (helm --set syntax)", .repeatable = true},
                         {.name = "set-string", .value = "KEY=VALUE", .help = "set a string value", .repeatable = true},
                         {.name = "namespace", .short_name = 'n', .value = "NS", .help = "release namespace", .default_value = "default"},
                         {.name = "release-name", .value = "NAME", .help = "release name", .default_value = "release-name"},
                         {.name = "include-crds", .help = "include the chart's crds/ files"},
                         {.name = "skip-tests", .help = "leave out test hooks"}},
               .needs_workspace = false,
               .examples = {"emco template ./mychart -f prod.yaml --set image.tag=1.2.3 --namespace web"},
               .handler = run_template});
  return v;
}

}  // namespace emco::cli
