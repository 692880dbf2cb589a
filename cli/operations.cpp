#include "cli/operations.hpp"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

#include "cli/address.hpp"
#include "cli/interrupt.hpp"
#include "cli/output.hpp"
#include "core/lifecycle/rollout.hpp"
#include "core/status/status.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::cli {

using nlohmann::json;
using namespace std::chrono;
using resource::Key;

namespace {

milliseconds parse_duration(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) fail(ErrorKind::usage, "invalid duration '" + text + "'", "e.g. 30s, 5m, 1h or 500ms");
  double n = std::stod(text.substr(0, i));
  std::string unit = text.substr(i);
  double ms = unit == "ms" ? n : unit == "s" || unit.empty() ? n * 1e3 : unit == "m" ? n * 60e3 : unit == "h" ? n * 3600e3 : -1;
  if (ms < 0) fail(ErrorKind::usage, "invalid duration '" + text + "'", "e.g. 30s, 5m, 1h or 500ms");
  return milliseconds(static_cast<int64_t>(ms));
}

// Work an earlier emco process left queued is resumed first.
int resume_first(Context& ctx, lifecycle::OperationOptions o) {
  o.retry_children = false;  // a planner that failed is retried by 'emco sync', not before every operation
  auto done = lifecycle::resume(ctx.store(), o);
  int code = 0;
  for (const auto& r : done) {
    if (r.delivery == lifecycle::Delivery::pending) code = std::max(code, 8);
    ctx.note("resumed queued work on context " + r.context + ": " + r.status);
  }
  return code;
}

}  // namespace

std::vector<FlagSpec> wait_flags() {
  return {{.name = "timeout", .value = "DURATION", .help = "how long to wait for the delivery (e.g. 30s, 5m, 1h)",
           .default_value = "5m"},
          {.name = "no-wait", .help = "return once the work is queued; 'emco sync' or, in the background, the next emco command delivers it"},
          {.name = "parallel", .value = "N", .help = "clusters worked on at once", .default_value = "16"},
          output_flag({Format::table, Format::json, Format::yaml})};
}

FlagSpec wait_wave_flag() {
  return {.name = "wait-wave",
          .help = "with a rollout strategy: return once the current wave's gate passed (exit 0; 'emco dig rollout "
                  "resume' starts the next) or failed (exit 1)"};
}

lifecycle::OperationOptions options_of(Context& ctx, const Invocation& inv, ProgressView& view) {
  lifecycle::OperationOptions o;
  o.runtime = &ctx.runtime();
  o.timeout = parse_duration(inv.get("timeout", "5m"));
  o.wait = !inv.has("no-wait");
  int parallel = 16;
  try {
    parallel = std::stoi(inv.get("parallel", "16"));
  } catch (const std::exception&) {
    parallel = 0;
  }
  if (parallel < 1) fail(ErrorKind::usage, "'--parallel " + inv.get("parallel") + "' must be a positive number");
  o.parallel = parallel;
  o.interrupt = &g_interrupted;
  o.wait_wave = inv.has("wait-wave");
  o.progress = [&view](const std::string&, const std::string& event, const sync::Progress& p) { view.update(event, p); };
  (void)ctx;
  return o;
}

int exit_of(lifecycle::Delivery d) {
  switch (d) {
    case lifecycle::Delivery::none:
    case lifecycle::Delivery::done: return static_cast<int>(ExitCode::ok);
    case lifecycle::Delivery::failed: return static_cast<int>(ExitCode::failed);
    case lifecycle::Delivery::pending: return static_cast<int>(ExitCode::pending);
  }
  return 1;
}

const char* delivery_name(lifecycle::Delivery d) {
  switch (d) {
    case lifecycle::Delivery::none: return "none";
    case lifecycle::Delivery::done: return "done";
    case lifecycle::Delivery::failed: return "failed";
    case lifecycle::Delivery::pending: return "pending";
  }
  return "none";
}

void explain_pending(Context& ctx, const std::string& what, const lifecycle::OperationOptions& o) {
  if (g_interrupted)
    ctx.note("interrupted; the work stays queued: run 'emco sync' to resume it (" + what + ")");
  else if (!o.wait)
    ctx.note("queued; run 'emco sync' to deliver it (" + what + ")");
  else
    ctx.note("still in progress after " + clock_text(o.timeout) + "; run 'emco sync' to continue (" + what + ")");
}

int run_op(Context& ctx, const Invocation& inv, const resource::Kind& k, const Key& key, const std::string& op,
           const json& body) {
  InterruptGuard guard;
  ctx.delivers = true;
  ProgressView view(ctx, true);
  auto o = options_of(ctx, inv, view);
  // stop and clone deliver nothing: they must not first wait for queued
  // work (stopping it is what `stop` is for).
  const bool delivers = op != "stop" && op != "clone";
  if (delivers && o.wait && resume_first(ctx, o) == 8) {
    view.finish();
    explain_pending(ctx, "earlier queued work", o);
    return static_cast<int>(ExitCode::pending);
  }
  auto r = lifecycle::run(ctx.store(), k, key, op, body, ctx.clock(), o);
  view.finish();
  return report_op(ctx, inv, k, key, op, r, o);
}

int report_op(Context& ctx, const Invocation& inv, const resource::Kind& k, const Key& key, const std::string& op,
              lifecycle::OperationResult& r, const lifecycle::OperationOptions& o) {
  Format f = parse_format(inv.get("output", "table"));
  const bool delivers = op != "stop" && op != "clone";
  std::string anchor = resource::resource_anchor(k, key);
  // A DIG operation says what became of its resources ("Terminated: 57
  // Deleted, 73 Absent"): after a partly failed instantiate, what a terminate
  // deleted and what was never there.
  json counts = json::object();
  json rollout;
  int code = exit_of(r.delivery);
  if (k.id == "deploymentIntentGroup" && delivers && !r.context.empty()) {
    status::Query summary;
    summary.status = "deployed";
    summary.output = "summary";
    counts = status::dig_status(ctx.store(), key, summary).value("deployedCounts", json::object());
    // A rollout in waves: where it stands; one waiting for 'emco dig rollout
    // resume' after a wave passed (--wait-wave) is a success.
    if (op == "instantiate" || op == "update" || op.rfind("rollout ", 0) == 0)
      rollout = lifecycle::rollout::of_dig(ctx.store(), key);
    if (!rollout.is_null() && rollout.value("state", "") == "waiting") {
      code = 0;
      r.failures.clear();
    }
  }
  if (f == Format::json || f == Format::yaml) {
    json out = {{"anchor", anchor}, {"operation", op}, {"message", r.message}, {"delivery", delivery_name(r.delivery)}};
    if (!r.context.empty()) out["context"] = r.context;
    if (!r.status.empty()) out["deployedStatus"] = r.status;
    if (!counts.empty()) out["deployedCounts"] = counts;
    if (r.revision) out["revision"] = r.revision;
    if (!rollout.is_null())
      out["rollout"] = {{"state", rollout["state"]}, {"wave", rollout["wave"]}, {"waveCount", rollout["waveCount"]},
                        {"failures", rollout["failures"]}, {"message", rollout["message"]}};
    if (!r.failures.empty()) out["failures"] = r.failures;
    if (f == Format::json) print_json(ctx.out, out);
    else print_yaml(ctx.out, out);
  } else {
    std::string line = anchor + " " + r.message;
    std::string tally;
    for (const auto& [state, n] : counts.items()) tally += (tally.empty() ? ": " : ", ") + n.dump() + " " + state;
    if (!r.status.empty()) line += " (" + r.status + tally + ")";
    ctx.out << line << "\n";
    if (!rollout.is_null())
      ctx.out << "rollout " << rollout.value("state", "") << " at wave " << rollout.value("wave", 0) << " of "
              << rollout.value("waveCount", 0)
              << (rollout.value("message", "").empty() ? "" : ": " + rollout.value("message", "")) << "\n";
    for (const auto& fl : r.failures) ctx.err << "emco: failed: " << fl << "\n";
  }
  if (r.delivery == lifecycle::Delivery::pending && code != 0) explain_pending(ctx, anchor, o);
  if (!rollout.is_null() && rollout.value("state", "") == "paused")
    ctx.note("see 'emco dig rollout status'; fix what failed and run 'emco dig rollout resume', or 'emco dig rollout "
             "abort [--rollback]'");
  else if (r.delivery == lifecycle::Delivery::failed)
    ctx.note("see 'emco dig status " + anchor + " --output detail' for each resource");
  return code;
}

void add_lifecycle_operations(std::vector<CommandSpec>& out, const std::vector<std::string>& noun, const resource::Kind& k,
                              const std::string& address, const std::string& what, const std::string& example_address,
                              const std::vector<LifecycleOperation>& ops) {
  for (const auto& op : ops) {
    auto flags = wait_flags();
    for (const auto& f : op.flags) flags.push_back(f);
    // stop and clone deliver nothing, so they do not wait.
    if (op.name == "stop" || op.name == "clone") {
      flags = {output_flag({Format::table, Format::json, Format::yaml})};
      for (const auto& f : op.flags) flags.push_back(f);
    }
    std::vector<std::string> path = noun;
    path.push_back(op.name);
    out.push_back({.path = path,
                   .summary = op.summary,
                   .description = op.description,
                   .args = {{.name = address, .help = what + " (or its anchor)", .complete = Complete::anchor}},
                   .flags = flags,
                   .examples = {"emco " + join(path, " ") + " " + example_address + op.example_flags},
                   .handler = [&k, address, name = op.name, body = op.body](Context& ctx, const Invocation& inv) {
                     Key key = resolve_address(k, inv.args[0], address);
                     return run_op(ctx, inv, k, key, name, body ? body(inv) : json::object());
                   }});
  }
}

}  // namespace emco::cli
