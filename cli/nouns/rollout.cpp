// `emco dig rollout status|resume|abort`: a DIG's rollout in waves
// (core/lifecycle/rollout.hpp); `emco dig rollout-strategy ...`: the strategy
// resources (plugins/rollout).

#include <nlohmann/json.hpp>

#include "cli/address.hpp"
#include "cli/context.hpp"
#include "cli/interrupt.hpp"
#include "cli/operations.hpp"
#include "cli/output.hpp"
#include "cli/progress.hpp"
#include "cli/resource_verbs.hpp"
#include "cli/table.hpp"
#include "core/lifecycle/rollout.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "plugins/builtin.hpp"

namespace emco::cli {

using nlohmann::json;
using resource::Key;

namespace {

constexpr char k_dig_address[] = "PROJECT/COMPOSITE-APP/VERSION/DIG";

Key dig_of(const Invocation& inv) {
  return resolve_address(resource::kind("deploymentIntentGroup"), inv.args[0], k_dig_address);
}

int status_cmd(Context& ctx, const Invocation& inv) {
  const Key key = dig_of(inv);
  json r = lifecycle::rollout::of_dig(ctx.store(), key, true);
  if (r.is_null())
    fail(ErrorKind::not_found,
         store::describe(resource::kind("deploymentIntentGroup"), key) + "'s current deployment has no rollout",
         "a rollout starts with instantiate or update when the DIG has an emco-rollout-strategies resource");
  Format f = parse_format(inv.get("output", "table"));
  if (f == Format::json) {
    print_json(ctx.out, r);
    return 0;
  }
  if (f == Format::yaml) {
    print_yaml(ctx.out, r);
    return 0;
  }
  ctx.out << "rollout " << r.value("strategy", "") << " (" << r.value("operation", "") << "): " << r.value("state", "")
          << " at wave " << r.value("wave", 0) << " of " << r.value("waveCount", 0) << "; " << r.value("failures", 0)
          << " failed cluster(s), " << r.value("maxFailures", 0) << " tolerated\n";
  if (!r.value("message", "").empty()) ctx.out << r.value("message", "") << "\n";
  std::vector<std::vector<std::string>> rows;
  int i = 0;
  for (const auto& w : r["waves"]) {
    std::string failed;
    for (const auto& c : w["failed"]) failed += (failed.empty() ? "" : ",") + c.get<std::string>();
    rows.push_back({std::to_string(++i), w.value("name", ""), std::to_string(w.value("clusterCount", 0)),
                    w.value("state", ""), w.value("started", ""), w.value("ended", ""), failed.empty() ? "-" : failed});
  }
  print_table(ctx.out, {"#", "WAVE", "CLUSTERS", "STATE", "STARTED", "ENDED", "FAILED"}, rows);
  return 0;
}

int move_cmd(Context& ctx, const Invocation& inv, bool abort) {
  InterruptGuard guard;
  ctx.delivers = true;
  ProgressView view(ctx, true);
  auto o = options_of(ctx, inv, view);
  const Key key = dig_of(inv);
  auto r = abort ? lifecycle::rollout::abort(ctx.store(), key, inv.has("rollback"), ctx.clock(), o)
                 : lifecycle::rollout::resume(ctx.store(), key, ctx.clock(), o);
  view.finish();
  return report_op(ctx, inv, resource::kind("deploymentIntentGroup"), key, abort ? "rollout abort" : "rollout resume", r, o);
}

ArgSpec dig_arg() {
  return {.name = k_dig_address, .help = "the deployment intent group (or its anchor)", .complete = Complete::anchor};
}

}  // namespace

std::vector<CommandSpec> rollout_commands() {
  std::vector<CommandSpec> v;
  v.push_back({.path = {"dig", "rollout", "status"},
               .summary = "show where a deployment intent group's rollout in waves stands",
               .description =
                   "The rollout of the current deployment (instantiate or update with a rollout strategy): its state\n"
                   "  running   a wave is being delivered or gated (a killed process left it: 'emco dig rollout\n"
                   "            resume' or 'emco sync' continues it)\n"
                   "  waiting   a wave passed its gate under --wait-wave; 'emco dig rollout resume' starts the next\n"
                   "  paused    more clusters failed than maxFailures tolerates; resume runs the failed wave again\n"
                   "  done      every wave ended; aborted: 'emco dig rollout abort' ended it; ended: a terminate or\n"
                   "            stop ended the operation first\n"
                   "and per wave its clusters, state (pending, applying, gating, passed, failed), times and the\n"
                   "clusters that failed (apply refused, or not ready by progressDeadline).",
               .args = {dig_arg()},
               .flags = {output_flag({Format::table, Format::json, Format::yaml})},
               .examples = {"emco dig rollout status proj1/collection/v1/dig1 -o json"},
               .handler = status_cmd});
  auto resume_flags = wait_flags();
  resume_flags.push_back(wait_wave_flag());
  v.push_back({.path = {"dig", "rollout", "resume"},
               .summary = "continue a deployment intent group's rollout in waves",
               .description =
                   "Continues the rollout of the current deployment: a waiting one with its next wave, a paused one\n"
                   "with its failed wave again (its failures no longer count), a running one that a killed process\n"
                   "left where it stood (a wave that passed is never delivered again). Delivers up to --timeout;\n"
                   "--wait-wave returns after the current wave's gate. Exit status as for instantiate: 0 when the\n"
                   "rollout is done or (with --wait-wave) its wave passed, 1 when it paused or failed, 8 when still\n"
                   "in progress.",
               .args = {dig_arg()},
               .flags = resume_flags,
               .examples = {"emco dig rollout resume proj1/collection/v1/dig1 --wait-wave"},
               .handler = [](Context& ctx, const Invocation& inv) { return move_cmd(ctx, inv, false); }});
  auto abort_flags = wait_flags();
  abort_flags.push_back({.name = "rollback",
                         .help = "also undo the waves that started (the strategy's rollbackOnFailure does this too)"});
  v.push_back({.path = {"dig", "rollout", "abort"},
               .summary = "end a deployment intent group's rollout in waves, optionally rolling back",
               .description =
                   "Ends the rollout's operation (its event is recorded failed, the context InstantiateFailed).\n"
                   "Without rollback the waves that ran keep what they got and the others are never delivered;\n"
                   "until 'emco dig rollback --revision N' (N: the revision an update replaced) or, for an\n"
                   "instantiate, a terminate brings the clusters together again, an update, a migrate and a\n"
                   "rollback to another revision are refused (each delivers a difference from one revision).\n"
                   "With --rollback (or the strategy's rollbackOnFailure) the waves that started are undone and that\n"
                   "is delivered: an instantiate's objects are deleted from their clusters (the DIG becomes\n"
                   "Terminated), an update's clusters get the previous revision back (recorded as a new revision,\n"
                   "as 'emco dig rollback' does).",
               .args = {dig_arg()},
               .flags = abort_flags,
               .examples = {"emco dig rollout abort proj1/collection/v1/dig1 --rollback"},
               .handler = [](Context& ctx, const Invocation& inv) { return move_cmd(ctx, inv, true); }});
  return v;
}

std::vector<CommandSpec> rollout_strategy_commands() {
  plugins::builtin_runtime();  // the kind is the rollout plugin's (see hook_commands)
  std::vector<CommandSpec> v;
  add_verbs(v, {.words = {"dig", "rollout-strategy"}, .kind = "rolloutStrategy",
                .address = "PROJECT/COMPOSITE-APP/VERSION/DIG/STRATEGY",
                .flags = {{.name = "waves", .value = "N", .help = "N waves of equal size (spec.waves)"},
                          {.name = "wave-size", .value = "N|P%", .help = "waves of this many clusters (spec.waveSize)"},
                          {.name = "group", .value = "LABEL", .help = "a wave of the clusters with this label, in order (spec.groups)",
                           .repeatable = true},
                          {.name = "max-concurrency", .value = "N|P%", .help = "no wave holds more clusters (spec.maxConcurrency)"},
                          {.name = "max-unavailable", .value = "N|P%", .help = "clusters not ready at once (spec.maxUnavailable)"},
                          {.name = "max-failures", .value = "N|P%", .help = "failed clusters tolerated before the rollout pauses (spec.maxFailures)"},
                          {.name = "min-success-time", .value = "DURATION", .help = "a wave's workloads ready this long (spec.minSuccessTime)"},
                          {.name = "progress-deadline", .value = "DURATION", .help = "... within this long of its start (spec.progressDeadline; default 10m)"},
                          {.name = "rollback-on-failure", .help = "roll back instead of pausing (spec.rollbackOnFailure)"}},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (inv.has("waves")) spec["waves"] = inv.get_int32("waves", 1);
                  if (inv.has("wave-size")) spec["waveSize"] = inv.get("wave-size");
                  if (inv.has("group")) spec["groups"] = inv.all("group");
                  if (inv.has("max-concurrency")) spec["maxConcurrency"] = inv.get("max-concurrency");
                  if (inv.has("max-unavailable")) spec["maxUnavailable"] = inv.get("max-unavailable");
                  if (inv.has("max-failures")) spec["maxFailures"] = inv.get("max-failures");
                  if (inv.has("min-success-time")) spec["minSuccessTime"] = inv.get("min-success-time");
                  if (inv.has("progress-deadline")) spec["progressDeadline"] = inv.get("progress-deadline");
                  if (inv.has("rollback-on-failure")) spec["rollbackOnFailure"] = true;
                },
                .examples = {"emco dig rollout-strategy create proj1/collection/v1/dig1/waves --waves 10 "
                             "--max-failures 1 --min-success-time 30s --progress-deadline 5m",
                             "emco dig rollout-strategy create proj1/collection/v1/dig1/canary --group canary --group eu"},
                .notes = "An emco extension (upstream has none; emcoctl gets 404 for it): a DIG with one is\n"
                         "instantiated and updated in waves -- by count (waves), size (waveSize) or cluster label\n"
                         "(groups, in order; the clusters with none of them last) -- each gated on every workload\n"
                         "of the wave being ready for minSuccessTime within progressDeadline. See 'emco dig rollout'."});
  return v;
}

}  // namespace emco::cli
