// Deployment commands: the DIG lifecycle with waiting and progress
// (instantiate, terminate, stop, update, rollback), status and history,
// `emco status` for the whole workspace, `emco sync` to resume queued work,
// and the logical-cloud update/stop operations.

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iomanip>
#include <sstream>
#include <thread>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/address.hpp"
#include "cli/context.hpp"
#include "cli/output.hpp"
#include "cli/table.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/status/status.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::cli {

using nlohmann::json;
using namespace std::chrono;
using resource::Key;

namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_interrupt(int) { g_interrupted = true; }

// Ctrl-C while waiting: stop waiting, keep the work queued (restored after).
class InterruptGuard {
public:
  InterruptGuard() {
    g_interrupted = false;
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &m_old_int);
    sigaction(SIGTERM, &sa, &m_old_term);
  }
  ~InterruptGuard() {
    sigaction(SIGINT, &m_old_int, nullptr);
    sigaction(SIGTERM, &m_old_term, nullptr);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

private:
  struct sigaction m_old_int {};
  struct sigaction m_old_term {};
};

const std::string k_dig_address = "PROJECT/COMPOSITE-APP/VERSION/DIG";

Key dig_key(const std::string& text) {
  return resolve_address(resource::kind("deploymentIntentGroup"), text, k_dig_address);
}

Key lc_key(const std::string& text) { return resolve_address(resource::kind("logicalCloud"), text, "PROJECT/LOGICAL-CLOUD"); }

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

std::string clock_text(milliseconds d) {
  auto s = duration_cast<seconds>(d).count();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  return buf;
}

// Live progress on stderr: redrawn in place on a terminal, plain lines
// (when something changed, at most every few seconds) otherwise.
class ProgressView {
public:
  ProgressView(Context& ctx, bool enabled) : m_ctx(ctx), m_enabled(enabled && !ctx.quiet), m_tty(::isatty(2) == 1) {}

  void update(const std::string& event, const sync::Progress& p) {
    if (!m_enabled) return;
    std::string verb = event == "Terminate" ? "terminating" : event == "UpdateDelete" ? "removing" :
                       event == "Update" ? "updating" : "instantiating";
    std::ostringstream line;
    line << verb << " ";
    if (m_tty) {
      const int width = 24;
      int filled = p.jobs ? static_cast<int>((p.done + p.failed) * width / p.jobs) : width;
      line << "[" << std::string(static_cast<size_t>(filled), '#') << std::string(static_cast<size_t>(width - filled), '.') << "] ";
    }
    line << (p.done + p.failed) << "/" << p.jobs << " app clusters";
    if (p.failed) line << ", " << p.failed << " failed";
    if (p.retrying) line << ", " << p.retrying << " retrying";
    line << "  " << p.steps_done << "/" << p.steps << " resources  " << clock_text(p.elapsed);
    std::string text = line.str();
    if (m_tty) {
      m_ctx.err << "\r\033[K" << text << std::flush;
      m_drawn = true;
      return;
    }
    std::string key = verb + std::to_string(p.done) + "/" + std::to_string(p.failed) + "/" + std::to_string(p.retrying);
    auto now = steady_clock::now();
    if (key == m_last_key && now - m_last_print < seconds(10)) return;
    if (now - m_last_print < seconds(2) && p.done + p.failed < p.jobs) return;
    m_last_key = key;
    m_last_print = now;
    m_ctx.err << "emco: " << text << "\n";
  }
  void finish() {
    if (m_drawn) m_ctx.err << "\n";
    m_drawn = false;
  }

private:
  Context& m_ctx;
  bool m_enabled;
  bool m_tty;
  bool m_drawn = false;
  std::string m_last_key;
  steady_clock::time_point m_last_print{};
};

std::vector<FlagSpec> wait_flags() {
  return {{.name = "timeout", .value = "DURATION", .help = "how long to wait for the delivery (e.g. 30s, 5m, 1h)",
           .default_value = "5m"},
          {.name = "no-wait", .help = "return once the work is queued; 'emco sync' or, in the background, the next emco command delivers it"},
          {.name = "parallel", .value = "N", .help = "clusters worked on at once", .default_value = "16"},
          output_flag({Format::table, Format::json, Format::yaml})};
}

lifecycle::OperationOptions options_of(Context& ctx, const Invocation& inv, ProgressView& view) {
  lifecycle::OperationOptions o;
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

// Work an earlier emco process left queued is resumed first.
int resume_first(Context& ctx, const lifecycle::OperationOptions& o) {
  auto done = lifecycle::resume(ctx.store(), o);
  int code = 0;
  for (const auto& r : done) {
    if (r.delivery == lifecycle::Delivery::pending) code = std::max(code, 8);
    ctx.note("resumed queued work on context " + r.context + ": " + r.status);
  }
  return code;
}

int run_op(Context& ctx, const Invocation& inv, const resource::Kind& k, const Key& key, const std::string& op,
           const json& body) {
  InterruptGuard guard;
  ctx.delivers = true;
  ProgressView view(ctx, true);
  auto o = options_of(ctx, inv, view);
  Format f = parse_format(inv.get("output", "table"));
  if (o.wait && resume_first(ctx, o) == 8) {
    view.finish();
    explain_pending(ctx, "earlier queued work", o);
    return static_cast<int>(ExitCode::pending);
  }
  auto r = lifecycle::run(ctx.store(), k, key, op, body, ctx.clock(), o);
  view.finish();
  std::string anchor = resource::resource_anchor(k, key);
  if (f == Format::json || f == Format::yaml) {
    json out = {{"anchor", anchor}, {"operation", op}, {"message", r.message}, {"delivery", delivery_name(r.delivery)}};
    if (!r.context.empty()) out["context"] = r.context;
    if (!r.status.empty()) out["deployedStatus"] = r.status;
    if (r.revision) out["revision"] = r.revision;
    if (!r.failures.empty()) out["failures"] = r.failures;
    if (f == Format::json) print_json(ctx.out, out);
    else print_yaml(ctx.out, out);
  } else {
    std::string line = anchor + " " + r.message;
    if (!r.status.empty()) line += " (" + r.status + ")";
    ctx.out << line << "\n";
    for (const auto& fl : r.failures) ctx.err << "emco: failed: " << fl << "\n";
  }
  if (r.delivery == lifecycle::Delivery::pending) explain_pending(ctx, anchor, o);
  if (r.delivery == lifecycle::Delivery::failed)
    ctx.note("see 'emco dig status " + anchor + " --output detail' for each resource");
  return exit_of(r.delivery);
}

// ---- status ----

status::Query query_of(const Invocation& inv, Format& format) {
  status::Query q;
  format = Format::table;
  for (const auto& v : inv.all("output")) {
    for (const auto& part : split(v, ',')) {
      if (part == "summary" || part == "all" || part == "detail") q.output = part;
      else format = parse_format(part);
    }
  }
  q.status = inv.get("status");
  q.type = inv.get("type");
  // The command line defaults to EMCO's current vocabulary (status=deployed);
  // `emco get .../status` anchors keep upstream's deprecated default.
  if (q.status.empty() && q.type.empty()) q.status = "deployed";
  if (inv.has("instance")) {
    q.has_instance = true;
    q.instance = inv.get("instance");
  }
  q.apps = inv.all("app");
  q.clusters = inv.all("cluster");
  for (auto& c : q.clusters)
    if (std::count(c.begin(), c.end(), '/') == 1 && c.find('+') == std::string::npos) c[c.find('/')] = '+';
  q.resources = inv.all("resource");
  q.list_apps = inv.has("apps");
  q.list_clusters = inv.has("clusters");
  q.list_resources = inv.has("resources");
  status::validate(q);
  return q;
}

void print_dig_status_table(std::ostream& out, const json& s, const status::Query& q) {
  const bool dep = q.deprecated_names();
  auto states = s.value("states", json::object());
  auto actions = states.value("actions", json::array());
  std::string state = actions.empty() ? "" : actions.back().value("state", "");
  out << "DIG " << s.value("project", "") << "/" << s.value("compositeApp", "") << "/" << s.value("compositeAppVersion", "")
      << "/" << s.value("name", "") << "  state " << state;
  int rev = 0;
  for (const auto& a : actions)
    if (a.value("state", "") == "Instantiated") rev = a.value("revision", 0);
  if (rev) out << "  revision " << rev;
  out << "\n";
  if (s.contains("apps") && s["apps"].is_array() && !s["apps"].empty() && s["apps"][0].is_string()) {
    for (const auto& a : s["apps"]) out << a.get<std::string>() << "\n";
    return;
  }
  const char* k_status = dep ? "status" : "deployedStatus";
  if (s.contains(k_status)) out << "deployed: " << s[k_status].get<std::string>();
  const char* k_counts = dep ? "rsyncStatus" : "deployedCounts";
  if (s.contains(k_counts))
    for (const auto& [name, n] : s[k_counts].items()) out << "  " << name << " " << n.get<int64_t>();
  if (s.contains(k_status)) out << "\n";
  const char* k_ready_counts = dep ? "clusterStatus" : "readyCounts";
  if (s.contains(k_ready_counts)) {
    out << "ready: " << s.value("readyStatus", "");
    for (const auto& [name, n] : s[k_ready_counts].items()) out << "  " << name << " " << n.get<int64_t>();
    out << "\n";
  }
  if (s.contains("clustersByApp")) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& a : s["clustersByApp"])
      for (const auto& c : a["clusters"]) rows.push_back({a["app"], c["clusterProvider"], c["cluster"]});
    print_table(out, {"APP", "PROVIDER", "CLUSTER"}, rows);
    return;
  }
  if (s.contains("resourcesByApp")) {
    std::vector<std::vector<std::string>> rows;
    for (const auto& a : s["resourcesByApp"])
      for (const auto& r : a["resources"])
        rows.push_back({a["app"], a.value("clusterProvider", "") + "+" + a.value("cluster", ""), r["GVK"].value("Kind", ""),
                        r["name"]});
    print_table(out, {"APP", "CLUSTER", "KIND", "NAME"}, rows);
    return;
  }
  if (!s.contains("apps")) return;
  const char* k_conn = dep ? "readyStatus" : "connectivity";
  const char* k_dep = dep ? "rsyncStatus" : "deployedStatus";
  const char* k_ready = dep ? "clusterStatus" : "readyStatus";
  bool with_ready = q.ready();
  std::vector<std::vector<std::string>> rows;
  for (const auto& a : s["apps"])
    for (const auto& c : a["clusters"])
      for (const auto& r : c["resources"]) {
        std::vector<std::string> row = {a["name"], c.value("clusterProvider", "") + "+" + c.value("cluster", ""),
                                        c.value(k_conn, ""), r["GVK"].value("Kind", ""), r["name"], r.value(k_dep, "")};
        if (with_ready) row.push_back(r.value(k_ready, ""));
        rows.push_back(row);
      }
  std::vector<std::string> header = {"APP", "CLUSTER", "CONNECTIVITY", "KIND", "NAME", "DEPLOYED"};
  if (with_ready) header.push_back("READY");
  print_table(out, header, rows);
}

std::vector<FlagSpec> status_flags() {
  return {{.name = "output", .short_name = 'o', .value = "OUTPUT",
           .help = "detail level summary|all|detail and/or format table|json|yaml (repeatable, or comma-separated)",
           .repeatable = true},
          {.name = "status", .value = "KIND", .help = "deployed (what emco applied) or ready (read the live objects)",
           .choices = {"deployed", "ready"}},
          {.name = "type", .value = "TYPE", .help = "deprecated: rsync or cluster (upstream field names)",
           .choices = {"rsync", "cluster"}},
          {.name = "app", .value = "APP", .help = "only this app", .repeatable = true},
          {.name = "cluster", .value = "PROVIDER+CLUSTER", .help = "only this cluster", .repeatable = true},
          {.name = "resource", .value = "NAME", .help = "only resources with this metadata.name", .repeatable = true},
          {.name = "instance", .value = "CONTEXT", .help = "an earlier instantiation or a child context"},
          {.name = "apps", .help = "list the apps"},
          {.name = "clusters", .help = "list the clusters of each app"},
          {.name = "resources", .help = "list the resources of each app and cluster"},
          {.name = "watch", .short_name = 'w', .help = "refresh every 2 seconds until Ctrl-C"}};
}

// Runs `show` once, or with --watch repeatedly, redrawing in place.
int watchable(Context& ctx, const Invocation& inv, const std::function<void(std::ostream&)>& show) {
  if (!inv.has("watch")) {
    show(ctx.out);
    return 0;
  }
  InterruptGuard guard;
  bool tty = ::isatty(1) == 1;
  while (!g_interrupted) {
    std::ostringstream frame;
    show(frame);
    if (tty) ctx.out << "\033[H\033[J";
    ctx.out << frame.str() << std::flush;
    for (int i = 0; i < 20 && !g_interrupted; ++i) std::this_thread::sleep_for(milliseconds(100));
    if (!tty) ctx.out << "\n";
  }
  return 0;
}

int dig_status_cmd(Context& ctx, const Invocation& inv) {
  Key key = dig_key(inv.args[0]);
  Format f;
  auto q = query_of(inv, f);
  auto& st = ctx.store();
  sync::TargetFactory live;
  if (q.ready() || q.output == "detail") live = lifecycle::kube_targets(st);
  return watchable(ctx, inv, [&](std::ostream& os) {
    json s = status::dig_status(st, key, q, live);
    // Before the first instantiation there is no deployment: show the
    // lifecycle state in its place.
    if (!q.deprecated_names() && !s.contains("deployedStatus") && s.contains("states")) {
      auto actions = s["states"].value("actions", json::array());
      if (!actions.empty()) s["deployedStatus"] = actions.back().value("state", "");
    }
    if (f == Format::json) print_json(os, s);
    else if (f == Format::yaml) print_yaml(os, s);
    else print_dig_status_table(os, s, q);
  });
}

int history_cmd(Context& ctx, const Invocation& inv) {
  Key key = dig_key(inv.args[0]);
  const auto& k = resource::kind("deploymentIntentGroup");
  auto r = ctx.store().get(key);
  if (!r) fail(ErrorKind::not_found, store::describe(k, key) + " does not exist");
  json si = r->state_info.empty() ? json::object() : json::parse(r->state_info);
  Format f = parse_format(inv.get("output", "table"));
  if (f == Format::json || f == Format::yaml) {
    if (f == Format::json) print_json(ctx.out, si);
    else print_yaml(ctx.out, si);
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& a : si.value("actions", json::array()))
    rows.push_back({a.value("state", ""), a.value("instance", ""), std::to_string(a.value("revision", 0)), a.value("time", "")});
  print_table(ctx.out, {"STATE", "INSTANCE", "REVISION", "TIME"}, rows);
  if (!si.value("statusctxid", "").empty()) ctx.out << "status context: " << si["statusctxid"].get<std::string>() << "\n";
  return 0;
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
  });
}

int sync_cmd(Context& ctx, const Invocation& inv) {
  InterruptGuard guard;
  ctx.delivers = true;
  ProgressView view(ctx, true);
  auto o = options_of(ctx, inv, view);
  o.wait = true;
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

std::vector<CommandSpec> deploy_commands() {
  std::vector<CommandSpec> v;
  const auto& dig = resource::kind("deploymentIntentGroup");
  const auto& lc = resource::kind("logicalCloud");
  struct Op {
    std::string name, summary, description;
  };
  const std::vector<Op> ops = {
      {"instantiate", "deploy a deployment intent group to its clusters",
       "Plans the DIG from its current intents (an AppContext), records the Instantiated state and delivers the\n"
       "resources to every cluster, waiting up to --timeout. Exit status 0 when delivered, 1 when a resource\n"
       "failed, 8 when the delivery is still in progress (it continues with 'emco sync')."},
      {"terminate", "delete a deployment intent group's resources from its clusters",
       "Deletes in reverse order (dependent apps first, the last-applied resource first); child contexts first."},
      {"stop", "stop an instantiate or terminate in progress",
       "Sets the stop flag: a process delivering the DIG ends its waits within a second and records the event failed."},
      {"update", "roll out intent changes to an instantiated deployment intent group",
       "Plans a new revision from the current intents and delivers only the difference: new and changed\n"
       "resources are applied, then resources that are gone are deleted. Apps whose inputs (chart, profile,\n"
       "placement intent, DIG, logical cloud, cluster labels) did not change keep their plan without being\n"
       "rendered again, unless controllers are named in the group intents. GitOps repositories get one\n"
       "commit per update with the changed and deleted files."},
      {"rollback", "redeploy an earlier revision of a deployment intent group",
       "Delivers the difference between the current revision and --revision N (as an update does)."},
  };
  for (const auto& op : ops) {
    auto flags = wait_flags();
    if (op.name == "rollback")
      flags.push_back({.name = "revision", .value = "N", .help = "the revision to return to (see 'emco dig history')"});
    if (op.name == "stop") flags = {output_flag({Format::table, Format::json, Format::yaml})};
    v.push_back({.path = {"dig", op.name},
                 .summary = op.summary,
                 .description = op.description,
                 .args = {{.name = k_dig_address, .help = "the deployment intent group (or its anchor)", .complete = Complete::anchor}},
                 .flags = flags,
                 .examples = {"emco dig " + op.name + " proj1/collection/v1/dig1" +
                              (op.name == "rollback" ? " --revision 1" : "")},
                 .handler = [&dig, name = op.name](Context& ctx, const Invocation& inv) {
                   json body = json::object();
                   if (name == "rollback") {
                     if (!inv.has("revision")) fail(ErrorKind::usage, "'emco dig rollback' needs --revision N");
                     body = {{"spec", {{"revision", inv.get("revision")}}}};
                   }
                   return run_op(ctx, inv, dig, dig_key(inv.args[0]), name, body);
                 }});
  }
  v.push_back({.path = {"dig", "status"},
               .summary = "show what a deployment intent group deployed and whether it is ready",
               .description = "EMCO's status query: --status deployed (the default: what emco applied, from the workspace)\n"
                              "or ready (reads the live objects); --output summary|all|detail; filters --app, --cluster,\n"
                              "--resource; --apps/--clusters/--resources list instead. --type rsync|cluster gives\n"
                              "upstream's deprecated field names. Before the first instantiation deployedStatus is the\n"
                              "lifecycle state.",
               .args = {{.name = k_dig_address, .help = "the deployment intent group (or its anchor)", .complete = Complete::anchor}},
               .flags = status_flags(),
               .examples = {"emco dig status proj1/collection/v1/dig1 --status ready",
                            "emco dig status proj1/collection/v1/dig1 --status deployed -o json -o summary"},
               .handler = dig_status_cmd});
  v.push_back({.path = {"dig", "history"},
               .summary = "show a deployment intent group's state history and revisions",
               .args = {{.name = k_dig_address, .help = "the deployment intent group (or its anchor)", .complete = Complete::anchor}},
               .flags = {output_flag({Format::table, Format::json, Format::yaml})},
               .handler = history_cmd});
  v.push_back({.path = {"status"},
               .summary = "summarize every deployment in the workspace",
               .description = "One line per logical cloud and deployment intent group (state, revision, deploy status,\n"
                              "resource counts) and the work queued for 'emco sync'.",
               .flags = {output_flag({Format::table, Format::json, Format::yaml}),
                         {.name = "watch", .short_name = 'w', .help = "refresh every 2 seconds until Ctrl-C"}},
               .handler = workspace_status_cmd});
  v.push_back({.path = {"sync"},
               .summary = "resume deliveries left queued (interrupted, timed out or --no-wait)",
               .description = "Delivers every AppContext with queued events that no running emco process is working on.\n"
                              "Work an interrupted emco left queued (Ctrl-C, kill -9, power loss, --no-wait) is also resumed\n"
                              "by any later emco command that opens the workspace: it starts 'emco sync' in the background\n"
                              "(one per workspace, messages in .emco/sync.log) and returns at once. EMCO_AUTO_RESUME=0 turns\n"
                              "that off.",
               .flags = wait_flags(),
               .handler = sync_cmd});
  const std::vector<Op> lc_ops = {
      {"instantiate", "instantiate a logical cloud on its clusters",
       "Admin (level 0) clouds record the state only. Standard and privileged (level 1) clouds create, in every\n"
       "referenced cluster, the namespace, the user's roles and bindings and the quota, and issue the user's\n"
       "credentials; waits up to --timeout like 'emco dig instantiate'."},
      {"terminate", "remove a logical cloud from its clusters",
       "Deletes what instantiate created, in reverse order. DIGs deployed into the cloud must be terminated first."},
      {"update", "roll out logical-cloud changes (cluster references, quotas, permissions)",
       "Delivers only the difference: clusters added get the cloud, clusters removed lose it."},
      {"stop", "stop a logical cloud's instantiate or terminate in progress",
       "Sets the stop flag: a process delivering the cloud ends its waits within a second."},
  };
  for (const auto& op : lc_ops) {
    auto flags = wait_flags();
    if (op.name == "stop") flags = {output_flag({Format::table, Format::json, Format::yaml})};
    v.push_back({.path = {"lc", op.name},
                 .summary = op.summary,
                 .description = op.description,
                 .args = {{.name = "PROJECT/LOGICAL-CLOUD", .help = "the logical cloud (or its anchor)", .complete = Complete::anchor}},
                 .flags = flags,
                 .examples = {"emco lc " + op.name + " proj1/tenant-a"},
                 .handler = [&lc, name = op.name](Context& ctx, const Invocation& inv) {
                   return run_op(ctx, inv, lc, lc_key(inv.args[0]), name, json::object());
                 }});
  }
  return v;
}

}  // namespace emco::cli
