// Workspace and batch commands: init, apply, update, get, delete, version.

#include <filesystem>

#include <nlohmann/json.hpp>

#include "cli/batch_output.hpp"
#include "cli/context.hpp"
#include "cli/docs.hpp"
#include "cli/render.hpp"
#include "cli/table.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/manifest/batch.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::cli {

using nlohmann::json;

namespace {

int run_init(Context& ctx, const Invocation& inv) {
  std::string dir = inv.args.empty() ? "." : inv.args[0];
  bool created = false;
  auto ws = store::init_workspace(dir, created);
  if (created) ctx.out << "Initialized empty emco workspace in " << ws.dir().string() << "\n";
  else ctx.out << "Reinitialized existing emco workspace in " << ws.dir().string() << "\n";
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
  for (const auto& f : files)
    for (const auto& d : f.documents)
      for (const auto& w : d.warnings) ctx.warn(w);
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

}  // namespace

std::vector<CommandSpec> core_commands() {
  std::vector<CommandSpec> v;
  v.push_back({.path = {"init"},
               .summary = "create an empty workspace",
               .description = "Creates DIR/.emco/ (mode 0700) holding the SQLite workspace database (mode 0600).\n"
                              "Running it again on an existing workspace is harmless.",
               .args = {{.name = "DIR", .help = "directory to create the workspace in (default: the current directory)",
                         .optional = true, .complete = Complete::directory}},
               .needs_workspace = false,
               .examples = {"emco init", "emco init ~/fleet"},
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
               .handler = run_version});
  v.push_back({.path = {"__docs"},
               .summary = "generate man pages and shell completions from the command table",
               .args = {{.name = "WHAT", .help = "man|bash|zsh|fish"}, {.name = "DIR", .help = "output directory"}},
               .needs_workspace = false,
               .hidden = true,
               .handler = run_docs});
  return v;
}

}  // namespace emco::cli
