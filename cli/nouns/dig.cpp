// `emco dig`: deployment intent groups and their intents (create, modify,
// get, list, delete, approve), the lifecycle with waiting and progress
// (instantiate, terminate, stop, update, rollback, migrate, clone), what was deployed
// (status, history), and the planner offline (plan, render, explain: nothing
// is stored, no cluster is contacted but to read the Nodes hpa intents need).

#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/address.hpp"
#include "cli/context.hpp"
#include "cli/operations.hpp"
#include "cli/output.hpp"
#include "cli/progress.hpp"
#include "cli/resource_verbs.hpp"
#include "cli/status_view.hpp"
#include "cli/table.hpp"
#include "core/appcontext/appcontext.hpp"
#include "core/lifecycle/drift.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/lifecycle/rollout.hpp"
#include "core/plan/plan.hpp"
#include "core/plan/unified_diff.hpp"
#include "core/status/status.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::cli {

namespace {

using nlohmann::json;
using resource::Key;

constexpr char k_dig_address[] = "PROJECT/COMPOSITE-APP/VERSION/DIG";

Key dig_key(const std::string& text) {
  return resolve_address(resource::kind("deploymentIntentGroup"), text, k_dig_address);
}

json placement_elements(const std::vector<std::string>& items, const std::string& flag) {
  json out = json::array();
  for (const auto& item : items) {
    auto v = split_address(item, flag, 2);
    if (starts_with(v[1], "label="))
      out.push_back({{"clusterProvider", v[0]}, {"clusterLabel", v[1].substr(6)}});
    else
      out.push_back({{"clusterProvider", v[0]}, {"cluster", v[1]}});
  }
  return out;
}

lifecycle::drift::Options drift_options(const Invocation& inv);

// `dig status --drift`: "driftStatus" (InSync, Drifted, Unknown when a
// cluster could not be read) and "driftCounts", per cluster "drift" (InSync,
// Drifted, or the read error's Unreachable/Unknown) and per resource "drift"
// (InSync, changed, deleted; with "driftFields"), extra objects under their
// cluster's "extra".
void add_drift(json& s, const lifecycle::drift::Report& r) {
  std::map<std::pair<std::string, std::string>, std::vector<const lifecycle::drift::Object*>> by_app_cluster;
  json counts = json::object();
  for (const auto& o : r.objects) {
    by_app_cluster[{o.app, o.cluster}].push_back(&o);
    counts[lifecycle::drift::kind_name(o.kind)] = counts.value(lifecycle::drift::kind_name(o.kind), 0) + 1;
  }
  std::map<std::string, const lifecycle::drift::ClusterResult*> clusters;
  for (const auto& c : r.clusters) clusters[c.cluster] = &c;
  s["driftStatus"] = r.drift() ? "Drifted" : r.unreachable() ? "Unknown" : "InSync";
  s["driftCounts"] = counts;
  json jr = lifecycle::drift::to_json(r);
  std::map<std::tuple<std::string, std::string, std::string>, json> fields;
  for (const auto& o : jr["objects"]) fields[{o["app"], o["cluster"], o["resource"]}] = o;
  if (!s.contains("apps") || !s["apps"].is_array()) return;
  for (auto& a : s["apps"]) {
    if (!a.is_object()) continue;
    for (auto& c : a["clusters"]) {
      std::string cluster = c.value("clusterProvider", "") + "+" + c.value("cluster", "");
      auto cr = clusters.find(cluster);
      if (cr == clusters.end()) continue;
      const auto& drifted = by_app_cluster[{a["name"], cluster}];
      if (!cr->second->reachable) {
        c["drift"] = cr->second->unreachable ? "Unreachable" : "Unknown";
        c["driftError"] = cr->second->error;
      } else {
        c["drift"] = drifted.empty() ? "InSync" : "Drifted";
      }
      for (auto& res : c["resources"]) {
        std::string name = res.value("name", "") + "+" + res["GVK"].value("Kind", "");
        if (!cr->second->reachable) {
          res["drift"] = "Unknown";
          continue;
        }
        auto f = fields.find({a["name"], cluster, name});
        res["drift"] = f == fields.end() ? "InSync" : f->second["drift"];
        if (f != fields.end() && f->second.contains("fields")) res["driftFields"] = f->second["fields"];
      }
      for (const auto* o : drifted)
        if (o->kind == lifecycle::drift::Kind::extra) c["extra"].push_back(o->resource);
    }
  }
}

// The DIG's stateInfo ({} before its first action); Error(not_found) when
// the DIG does not exist.
json state_info_of(store::Store& st, const Key& key) {
  auto r = st.get(key);
  if (!r) fail(ErrorKind::not_found, store::describe(resource::kind("deploymentIntentGroup"), key) + " does not exist");
  return r->state_info.empty() ? json::object() : json::parse(r->state_info);
}

int dig_status_cmd(Context& ctx, const Invocation& inv) {
  Key key = dig_key(inv.args[0]);
  Format f;
  auto q = query_of(inv, f);
  auto& st = ctx.store();
  sync::TargetFactory live;
  if (q.ready() || q.output == "detail") live = lifecycle::live_targets(st, &ctx.runtime());
  return watchable(ctx, inv, [&](std::ostream& os) {
    json s = status::dig_status(st, key, q, live);
    if (inv.has("drift")) add_drift(s, lifecycle::drift::check(st, ctx.runtime(), key, drift_options(inv)));
    // Before the first instantiation there is no deployment: show the
    // lifecycle state in its place.
    if (!q.deprecated_names() && !s.contains("deployedStatus") && s.contains("states")) {
      auto actions = s["states"].value("actions", json::array());
      if (!actions.empty()) s["deployedStatus"] = actions.back().value("state", "");
    }
    // The DIG's stateInfo as the status read it (list queries leave it out):
    // the additions below find their contexts in it instead of reading and
    // parsing the DIG again each (a tenth of a small workspace's command).
    // (A reference: s is an object, whose members stay where they are as others are added.)
    json si_read;
    const json& si = s.contains("states") ? s["states"] : (si_read = state_info_of(st, key));
    const std::string current = lifecycle::last_instance(si);
    // The hooks of the current deployment's operations (emco's addition):
    // a non-blocking hook that failed shows here.
    if (json hooks = lifecycle::hook_log(st, current); !hooks.empty()) s["hooks"] = hooks;
    if (json repairs = lifecycle::drift::repair_log(st, plan::running_context(st, si)); !repairs.empty())
      s["driftRepairs"] = repairs;
    // The rollout of the current deployment (emco's addition): where it stands.
    if (json ro = lifecycle::rollout::of_current(st, current); !ro.is_null()) s["rollout"] = ro;
    if (f == Format::json) print_json(os, s);
    else if (f == Format::yaml) print_yaml(os, s);
    else {
      print_status_heading(os, "DIG " + s.value("project", "") + "/" + s.value("compositeApp", "") + "/" +
                                   s.value("compositeAppVersion", "") + "/" + s.value("name", ""), s);
      print_status_table(os, s, q);
      if (s.contains("rollout"))
        os << "rollout " << s["rollout"].value("strategy", "") << ": " << s["rollout"].value("state", "") << " at wave "
           << s["rollout"].value("wave", 0) << " of " << s["rollout"].value("waveCount", 0) << " ("
           << s["rollout"]["waves"][s["rollout"].value("wave", 1) - 1].value("name", "") << ", "
           << s["rollout"].value("failures", 0) << " failed cluster(s))\n";
      for (const auto& op : s.value("hooks", json::array()))
        for (const auto& step : op.value("steps", json::array()))
          if (step.value("state", "") != "done")
            os << "hook " << step.value("point", "") << " " << step.value("name", "") << " (" << op.value("operation", "")
               << "): " << step.value("state", "")
               << (step.value("message", "").empty() ? "" : ": " + step.value("message", "")) << "\n";
    }
  });
}

int history_cmd(Context& ctx, const Invocation& inv) {
  Key key = dig_key(inv.args[0]);
  json si = state_info_of(ctx.store(), key);
  // The hooks of the current deployment's operations (tac, exec hooks).
  json hooks = lifecycle::hook_log(ctx.store(), lifecycle::last_instance(si));
  if (!hooks.empty()) si["hooks"] = hooks;
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
  for (const auto& op : hooks) {
    ctx.out << "hooks of " << op.value("operation", "") << ":\n";
    for (const auto& s : op.value("steps", json::array()))
      ctx.out << "  " << s.value("point", "") << " " << s.value("name", "") << ": " << s.value("state", "")
              << (s.value("message", "").empty() ? "" : " (" + s.value("message", "") + ")") << "\n";
  }
  return 0;
}


// Plans with the labels of the running deployment, so that unchanged objects compare equal.
plan::Plan plan_for(Context& ctx, const Key& dig, std::optional<std::string>& running, bool explain_only = false) {
  store::Store& st = ctx.store();
  running = plan::running_context(st, dig);
  plan::Options o;
  o.registry = &ctx.runtime().controllers;
  o.live = lifecycle::live_targets(st, &ctx.runtime());  // hpa placement reads Nodes
  o.explain_only = explain_only;
  if (running) {
    o.status_context_id = plan::status_context(st, dig);
    if (o.status_context_id.empty()) o.status_context_id = *running;
    o.update_from = *running;
  }
  return plan::make(st, dig, o);
}

// ---- dig plan -------------------------------------------------------------------------------

struct Change {
  std::string app;
  std::vector<std::string> clusters;
  std::vector<std::string> create, remove;
  std::vector<std::pair<std::string, std::string>> change;  // resource, unified diff
};

std::vector<Change> changes_of(const appcontext::AppContext* old_ctx, const appcontext::AppContext& new_ctx) {
  appcontext::AppContext empty;
  auto diffs = appcontext::diff(old_ctx ? *old_ctx : empty, new_ctx);
  // Fold clusters whose change is identical (same resources, same contents before and after).
  std::map<std::pair<std::string, std::string>, size_t> by_signature;  // (app, signature) -> index
  std::vector<Change> out;
  std::map<std::string, std::string> diff_cache;  // "old hash:new hash" -> diff
  for (const auto& d : diffs) {
    if (d.empty()) continue;
    // The diff's own cluster pointers: looking clusters up by name made this
    // loop quadratic in the clusters (8 s of a 10,000-cluster plan).
    std::string sig;
    for (const auto& r : d.added) sig += "+" + r + ":" + d.new_cluster->find(r)->hash() + "\n";
    for (const auto& r : d.removed) sig += "-" + r + ":" + d.old_cluster->find(r)->hash() + "\n";
    for (const auto& r : d.changed)
      sig += "~" + r + ":" + d.old_cluster->find(r)->hash() + ":" + d.new_cluster->find(r)->hash() + "\n";
    auto [it, inserted] = by_signature.emplace(std::make_pair(d.app, sig), out.size());
    if (!inserted) {
      out[it->second].clusters.push_back(d.cluster);
      continue;
    }
    Change c;
    c.app = d.app;
    c.clusters.push_back(d.cluster);
    c.create = d.added;
    c.remove = d.removed;
    for (const auto& r : d.changed) {
      const auto* o = d.old_cluster->find(r);
      const auto* n = d.new_cluster->find(r);
      std::string key = o->hash() + ":" + n->hash();
      auto cached = diff_cache.find(key);
      if (cached == diff_cache.end()) cached = diff_cache.emplace(key, plan::unified_diff(o->text(), n->text())).first;
      c.change.emplace_back(r, cached->second);
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::string cluster_list(const std::vector<std::string>& clusters, const std::string& what = "change") {
  if (clusters.size() == 1) return "on " + clusters[0];
  std::string s = "same " + what + " on " + std::to_string(clusters.size()) + " clusters: ";
  size_t shown = std::min<size_t>(clusters.size(), 3);
  for (size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + clusters[i];
  if (clusters.size() > shown) s += ", and " + std::to_string(clusters.size() - shown) + " more";
  return s;
}

// Intents under the DIG of features emco stores but cannot run, said before
// planning: the plan itself fails on them (exit 9) only where a group intent
// names their controller.
void warn_stored_only(Context& ctx, const Key& dig) {
  std::set<std::string> said;
  for (const resource::Kind* k : resource::children_of("deploymentIntentGroup")) {
    const lifecycle::PluginInfo* p = lifecycle::stored_only_plugin(ctx.runtime(), *k);
    if (!p || said.count(p->name) || ctx.store().list(*k, dig).empty()) continue;
    said.insert(p->name);
    ctx.warn(lifecycle::stored_only_warning(*p, *k) + " (this deployment intent group has " + k->display + "s)");
  }
}

int plan_cmd(Context& ctx, const Invocation& inv) {
  auto& st = ctx.store();
  Key dig = dig_key(inv.args.at(0));
  warn_stored_only(ctx, dig);
  std::optional<std::string> running;
  plan::Plan p = plan_for(ctx, dig, running);
  std::optional<appcontext::AppContext> old_ctx;
  if (running) old_ctx = appcontext::load(st, *running);
  auto changes = changes_of(old_ctx ? &*old_ctx : nullptr, p.context);
  size_t creates = 0, updates = 0, deletes = 0;
  for (const auto& c : changes) {
    creates += c.create.size() * c.clusters.size();
    updates += c.change.size() * c.clusters.size();
    deletes += c.remove.size() * c.clusters.size();
  }
  std::string format = inv.get("output", "text");
  if (format == "json") {
    json j = {{"deploymentIntentGroup", resource::resource_anchor(resource::kind("deploymentIntentGroup"), dig)},
              {"running", running ? json(*running) : json(nullptr)},
              {"changes", json::array()},
              {"summary", {{"create", creates}, {"change", updates}, {"delete", deletes}}}};
    for (const auto& c : changes) {
      json e = {{"app", c.app}, {"clusters", c.clusters}, {"create", c.create}, {"delete", c.remove}, {"change", json::array()}};
      for (const auto& [r, d] : c.change) e["change"].push_back({{"resource", r}, {"diff", d}});
      j["changes"].push_back(std::move(e));
    }
    print_json(ctx.out, j);
  } else {
    if (!running) ctx.out << "No running deployment: everything is created.\n";
    std::string last_app;
    for (const auto& c : changes) {
      if (c.app != last_app) ctx.out << "app " << c.app << "\n";
      last_app = c.app;
      ctx.out << "  " << cluster_list(c.clusters) << "\n";
      for (const auto& r : c.create) ctx.out << "    + create " << r << "\n";
      for (const auto& [r, d] : c.change) {
        ctx.out << "    ~ change " << r << "\n";
        ctx.out << "      --- " << c.app << "/" << r << " (running)\n      +++ " << c.app << "/" << r << " (planned)\n";
        std::istringstream lines(d);
        for (std::string line; std::getline(lines, line);) ctx.out << "      " << line << "\n";
      }
      for (const auto& r : c.remove) ctx.out << "    - delete " << r << "\n";
    }
    if (changes.empty())
      ctx.out << "No changes: the running deployment matches the intents.\n";
    else
      ctx.out << "Plan: " << creates << " to create, " << updates << " to change, " << deletes << " to delete.\n";
  }
  return static_cast<int>(changes.empty() ? ExitCode::ok : ExitCode::changes);
}

// ---- dig diff --live, dig sync --repair ------------------------------------------------------

lifecycle::drift::Options drift_options(const Invocation& inv) {
  lifecycle::drift::Options o;
  o.extra = inv.has("extra") || inv.has("prune-extra");
  o.apps = inv.all("app");
  o.clusters = inv.all("cluster");
  for (auto& c : o.clusters)
    if (std::count(c.begin(), c.end(), '/') == 1 && c.find('+') == std::string::npos) c[c.find('/')] = '+';
  try {
    o.parallel = std::stoi(inv.get("parallel", "16"));
  } catch (const std::exception&) {
    o.parallel = 0;
  }
  if (o.parallel < 1) fail(ErrorKind::usage, "'--parallel " + inv.get("parallel") + "' must be a positive number");
  return o;
}

// One line per drifted field: ".spec.replicas: planned 2, live 5 (kubectl-edit)".
std::string field_line(const lifecycle::drift::Field& f) {
  std::string who = f.manager.empty() ? "removed; no manager owns it now" : f.manager;
  return f.path + ": planned " + f.planned + ", live " + (f.live.empty() ? "absent" : f.live) + " (" + who + ")";
}

// The table form: per app, the clusters with the same drift folded as
// `dig plan` folds the same change; then the clusters that could not be read.
void print_drift(std::ostream& out, const lifecycle::drift::Report& r) {
  using lifecycle::drift::Kind;
  struct Group {
    std::string app;
    std::vector<std::string> clusters;
    std::vector<const lifecycle::drift::Object*> objects;
  };
  std::vector<Group> groups;
  std::map<std::pair<std::string, std::string>, size_t> by_signature;  // (app, signature) -> group
  size_t i = 0;
  while (i < r.objects.size()) {
    size_t j = i;
    std::string sig;
    std::vector<const lifecycle::drift::Object*> objects;
    for (; j < r.objects.size() && r.objects[j].app == r.objects[i].app && r.objects[j].cluster == r.objects[i].cluster; ++j) {
      const auto& o = r.objects[j];
      sig += std::string(lifecycle::drift::kind_name(o.kind)) + " " + o.resource + " " + o.where + "\n";
      for (const auto& f : o.fields) sig += "  " + field_line(f) + "\n";
      objects.push_back(&o);
    }
    auto [it, fresh] = by_signature.emplace(std::make_pair(r.objects[i].app, sig), groups.size());
    if (fresh) groups.push_back({r.objects[i].app, {}, std::move(objects)});
    groups[it->second].clusters.push_back(r.objects[i].cluster);
    i = j;
  }
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) { return a.app < b.app; });
  std::string last_app;
  size_t counts[3] = {0, 0, 0};
  std::set<std::string> drifted_clusters;
  for (const auto& g : groups) {
    if (g.app != last_app) out << "app " << g.app << "\n";
    last_app = g.app;
    out << "  " << cluster_list(g.clusters, "drift") << "\n";
    for (const auto* o : g.objects) {
      counts[static_cast<int>(o->kind)] += g.clusters.size();
      const char* mark = o->kind == Kind::changed ? "~ changed" : o->kind == Kind::deleted ? "- deleted" : "+ extra  ";
      out << "    " << mark << " " << o->resource << "\n";
      for (const auto& f : o->fields) out << "        " << field_line(f) << "\n";
      if (!o->where.empty())
        out << "        " << (o->kind == Kind::deleted ? "removed from" : "edited in") << " the repository: " << o->where
            << "\n";
    }
    drifted_clusters.insert(g.clusters.begin(), g.clusters.end());
  }
  size_t objects = 0, unreadable = 0;
  for (const auto& c : r.clusters) {
    objects += c.objects;
    if (c.reachable) continue;
    ++unreadable;
    out << "not read: " << c.cluster << ": " << c.error << "\n";
  }
  auto n_of = [](size_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); };
  if (!r.drift())
    out << "No drift: " << n_of(objects, "object") << " on " << n_of(r.clusters.size() - unreadable, "cluster")
        << (objects == 1 ? " matches" : " match") << " the plan"
        << (unreadable ? " (" + n_of(unreadable, "cluster") + " not read)" : "") << ".\n";
  else
    out << "Drift: " << counts[0] << " changed, " << counts[1] << " deleted, " << counts[2] << " extra on "
        << drifted_clusters.size() << " of " << n_of(r.clusters.size(), "cluster") << ".\n";
}

// Clusters that could not be read: 1 when one refused the reads (403, a
// kind it does not serve), else 7 when one could not be reached, else 0.
int unread_exit(const lifecycle::drift::Report& r) {
  bool refused = false, unreachable = false;
  for (const auto& c : r.clusters)
    if (!c.reachable) (c.unreachable ? unreachable : refused) = true;
  if (refused) return static_cast<int>(ExitCode::failed);
  return static_cast<int>(unreachable ? ExitCode::unreachable : ExitCode::ok);
}

// The CI contract: 2 when there is drift, else as unread_exit.
int drift_exit(const lifecycle::drift::Report& r) {
  return r.drift() ? static_cast<int>(ExitCode::changes) : unread_exit(r);
}

int diff_cmd(Context& ctx, const Invocation& inv) {
  Key dig = dig_key(inv.args.at(0));
  auto report = lifecycle::drift::check(ctx.store(), ctx.runtime(), dig, drift_options(inv));
  if (inv.get("output", "text") == "json") print_json(ctx.out, lifecycle::drift::to_json(report));
  else if (report.context.empty()) ctx.out << "Nothing deployed: no running revision to compare.\n";
  else print_drift(ctx.out, report);
  return drift_exit(report);
}

int dig_sync_cmd(Context& ctx, const Invocation& inv) {
  if (!inv.has("repair"))
    fail(ErrorKind::usage, "'emco dig sync' needs --repair",
         "'emco dig sync DIG --repair' re-applies what drifted; 'emco sync' resumes queued deliveries");
  Key dig = dig_key(inv.args.at(0));
  auto& st = ctx.store();
  auto options = drift_options(inv);
  auto report = lifecycle::drift::check(st, ctx.runtime(), dig, options);
  auto result = lifecycle::drift::repair(st, ctx.runtime(), report, options, inv.has("prune-extra"), ctx.clock());
  if (inv.get("output", "text") == "json") {
    json j = lifecycle::drift::to_json(report);
    j["repair"] = {{"reapplied", result.reapplied}, {"recreated", result.recreated}, {"pruned", result.pruned},
                   {"failures", result.failures}};
    print_json(ctx.out, j);
  } else {
    if (report.context.empty()) ctx.out << "Nothing deployed: no running revision to repair.\n";
    else print_drift(ctx.out, report);
    if (report.drift())
      ctx.out << "Repaired: " << result.reapplied << " re-applied, " << result.recreated << " recreated, " << result.pruned
              << " extra deleted" << (result.failures.empty() ? "" : ", " + std::to_string(result.failures.size()) + " failed")
              << ".\n";
    for (const auto& f : result.failures) ctx.err << "emco: error: " << f << "\n";
  }
  // 0 once every drifted object was repaired, 1 when one failed; clusters
  // that could not be read keep the diff's codes.
  return result.failures.empty() ? unread_exit(report) : static_cast<int>(ExitCode::failed);
}

// ---- dig render -------------------------------------------------------------------------------

int render_cmd(Context& ctx, const Invocation& inv) {
  Key dig = dig_key(inv.args.at(0));
  std::optional<std::string> running;
  plan::Plan p = plan_for(ctx, dig, running);
  std::string want_app = inv.get("app"), want_cluster = inv.get("cluster");
  if (!want_app.empty() && !p.context.find_app(want_app))
    fail(ErrorKind::not_found, "app '" + want_app + "' is not part of the plan");
  bool cluster_seen = want_cluster.empty();
  for (const auto& app : p.context.apps) {
    if (!want_app.empty() && app.name != want_app) continue;
    for (const auto& c : app.clusters) {
      if (!want_cluster.empty() && c.name != want_cluster) continue;
      cluster_seen = true;
      auto print = [&](const appcontext::Resource& r, const std::string& group) {
        ctx.out << "---\n# Source: " << app.name << "/" << c.name << "/" << r.name;
        if (!group.empty()) ctx.out << " (" << group << ")";
        ctx.out << "\n" << r.text();
      };
      // Deploy order: CRDs and pre-install hooks, resources, then the remaining hooks.
      for (const auto& g : c.hooks)
        if (g.event == "crd-install" || g.event == "pre-install")
          for (const auto& r : g.resources) print(r, g.event);
      for (const auto& r : c.resources) print(r, "");
      for (const auto& g : c.hooks)
        if (g.event != "crd-install" && g.event != "pre-install")
          for (const auto& r : g.resources) print(r, g.event);
    }
  }
  if (!cluster_seen)
    fail(ErrorKind::not_found, "cluster '" + want_cluster + "' gets nothing in this plan",
         "clusters are named PROVIDER+CLUSTER; 'emco dig explain' shows where each app goes");
  return 0;
}

// ---- dig explain -------------------------------------------------------------------------------

int explain_cmd(Context& ctx, const Invocation& inv) {
  Key dig = dig_key(inv.args.at(0));
  std::optional<std::string> running;
  plan::Plan p = plan_for(ctx, dig, running, true);
  std::string want_app = inv.get("app");
  if (!want_app.empty() && !p.context.find_app(want_app))
    fail(ErrorKind::not_found, "app '" + want_app + "' is not part of the composite app");
  std::string format = inv.get("output", "table");
  json j = json::array();
  std::vector<std::vector<std::string>> rows;
  for (const auto& ex : p.explanation) {
    if (!want_app.empty() && ex.app != want_app) continue;
    json e = {{"app", ex.app}, {"intent", ex.intent}, {"candidates", json::array()}};
    for (const auto& c : ex.candidates) {
      e["candidates"].push_back({{"cluster", c.cluster}, {"chosen", c.chosen}, {"reason", c.reason}});
      rows.push_back({ex.app, c.cluster, c.chosen ? "yes" : "no", c.reason});
    }
    j.push_back(std::move(e));
  }
  if (format == "json")
    print_json(ctx.out, j);
  else
    print_table(ctx.out, {"APP", "CLUSTER", "CHOSEN", "REASON"}, rows);
  return 0;
}

}  // namespace

std::vector<CommandSpec> dig_commands() {
  std::vector<CommandSpec> v;
  Noun dig_noun{.words = {"dig"}, .kind = "deploymentIntentGroup", .address = "PROJECT/COMPOSITE-APP/VERSION/DIG",
           .update_verb = "modify",
           .flags = {{.name = "composite-profile", .value = "NAME", .help = "composite profile of the composite app"},
                     {.name = "release", .value = "NAME", .help = "Helm release name (spec.version)"},
                     {.name = "logical-cloud", .value = "NAME", .help = "logical cloud to deploy into"},
                     {.name = "override", .value = "APP:KEY=VALUE", .help = "Helm --set value for one app", .repeatable = true}},
           .build = [](const Invocation& inv, json& spec, manifest::Document&) {
             if (inv.has("composite-profile")) spec["compositeProfile"] = inv.get("composite-profile");
             if (inv.has("release")) spec["version"] = inv.get("release");
             if (inv.has("logical-cloud")) spec["logicalCloud"] = inv.get("logical-cloud");
             for (const auto& o : inv.all("override")) {
               auto colon = o.find(':');
               auto eq = o.find('=');
               if (colon == std::string::npos || eq == std::string::npos || eq < colon)
                 fail(ErrorKind::usage, "'--override " + o + "' is not APP:KEY=VALUE");
               std::string app = o.substr(0, colon);
               if (!spec.contains("overrideValues")) spec["overrideValues"] = json::array();
               json* entry = nullptr;
               for (auto& e : spec["overrideValues"])
                 if (e.value("app", "") == app) entry = &e;
               if (!entry) {
                 spec["overrideValues"].push_back({{"app", app}, {"values", json::object()}});
                 entry = &spec["overrideValues"].back();
               }
               (*entry)["values"][o.substr(colon + 1, eq - colon - 1)] = o.substr(eq + 1);
             }
           },
           .examples = {"emco dig create proj1/collection/v1/dig1 --composite-profile default --release r1 --logical-cloud lc0"}};
  add_verbs(v, dig_noun);
  add_operations(v, dig_noun, {{"approve", "approve a deployment intent group for instantiation"}});

  add_lifecycle_operations(v, {"dig"}, resource::kind("deploymentIntentGroup"), k_dig_address, "the deployment intent group",
                           "proj1/collection/v1/dig1", {
      {"instantiate", "deploy a deployment intent group to its clusters",
       "Plans the DIG from its current intents (an AppContext), records the Instantiated state and delivers the\n"
       "resources to every cluster, waiting up to --timeout. Exit status 0 when delivered, 1 when a resource\n"
       "failed, 8 when the delivery is still in progress (it continues with 'emco sync'). Once it is delivered,\n"
       "by this command or, after --no-wait, a timeout or a kill, by 'emco sync' or 'emco serve', its\n"
       "child contexts are made and delivered: dtc's service discovery (sds) waits for the server app to be\n"
       "ready (EMCO_SDS_SERVER_TIMEOUT, default 300 s), reads its Service (a LoadBalancer's ingress IP within\n"
       "EMCO_SDS_LB_TIMEOUT, default 120 s; polling every EMCO_SDS_POLL_MS, default 5000) and gives every\n"
       "client cluster a Service and Endpoints; 'emco dig status' lists them (ChildContextIDs, nested), or\n"
       "says they are still to make (childContextsPending; a planner's failure in childContextsError).\n"
       "With a rollout strategy (emco-rollout-strategies, see 'emco dig rollout') the clusters are delivered\n"
       "in waves, each gated on its workloads' readiness; --wait-wave returns once the first wave's gate\n"
       "passed (exit 0; 'emco dig rollout resume' goes on) or failed (exit 1).",
       {wait_wave_flag()}},
      {"terminate", "delete a deployment intent group's resources from its clusters",
       "Deletes in reverse order (dependent apps first, the last-applied resource first); child contexts first."},
      {"stop", "stop an instantiate or terminate in progress",
       "Sets the stop flag: a process delivering the DIG ends its waits within a second and records the event failed."},
      {"update", "roll out intent changes to an instantiated deployment intent group",
       "Plans a new revision from the current intents and delivers only the difference: new and changed\n"
       "resources are applied, then resources that are gone are deleted. Apps whose inputs (chart, profile,\n"
       "placement intent, DIG, logical cloud, cluster labels) did not change keep their plan without being\n"
       "rendered again, unless controllers are named in the group intents. GitOps repositories get one\n"
       "commit per update with the changed and deleted files. Child contexts of the running revision are\n"
       "terminated and made again for the new one. With a rollout strategy the update is delivered in\n"
       "waves, as instantiate is (--wait-wave likewise).",
       {wait_wave_flag()}},
      {"rollback", "redeploy an earlier revision of a deployment intent group",
       "Delivers the difference between the current revision and --revision N (as an update does).",
       {{.name = "revision", .value = "N", .help = "the revision to return to (see 'emco dig history')"}},
       " --revision 1",
       [](const Invocation& inv) {
         if (!inv.has("revision")) fail(ErrorKind::usage, "'emco dig rollback' needs --revision N");
         return json{{"spec", {{"revision", inv.get("revision")}}}};
       }},
      {"migrate", "move a running deployment to another deployment intent group (a new app version)",
       "Plans the target DIG (usually under a newer composite app version; it must be Approved) and delivers only\n"
       "the difference from the source's running revision, as update does. The source becomes Updated; its\n"
       "revisions and contexts move to the target, which can be rolled back past the migrate\n"
       "('emco dig rollback TARGET --revision N').",
       {{.name = "target-version", .value = "VERSION", .help = "the target's composite app version (spec.targetCompositeAppVersion)"},
        {.name = "target-dig", .value = "DIG", .help = "the target deployment intent group (spec.targetDeploymentIntentGroup)"}},
       " --target-version v2 --target-dig dig2",
       [](const Invocation& inv) {
         if (!inv.has("target-version") || !inv.has("target-dig"))
           fail(ErrorKind::usage, "'emco dig migrate' needs --target-version VERSION and --target-dig DIG");
         return json{{"spec", {{"targetCompositeAppVersion", inv.get("target-version")},
                               {"targetDeploymentIntentGroup", inv.get("target-dig")}}}};
       }},
      {"clone", "copy a deployment intent group with all its intents under new names",
       "Creates --count copies named PREFIX-N (N from --start), each with every intent below the DIG (group,\n"
       "placement, app and controller intents); the copies start Created. spec.version gets the copy's ordinal\n"
       "appended, as upstream does. All copies are made in one transaction: a name in use changes nothing.",
       {{.name = "prefix", .value = "PREFIX", .help = "the copies' name prefix (spec.cloneDigNamePrefix)"},
        {.name = "count", .value = "N", .help = "how many copies (spec.numberOfClones; default 1)"},
        {.name = "start", .value = "N", .help = "the first copy's number (spec.startNumber; default 0)"}},
       " --prefix dig --count 2 --start 1",
       [](const Invocation& inv) {
         if (!inv.has("prefix")) fail(ErrorKind::usage, "'emco dig clone' needs --prefix PREFIX");
         json spec = {{"cloneDigNamePrefix", inv.get("prefix")},
                      {"numberOfClones", inv.get_int32("count", 1)},
                      {"startNumber", inv.get_int32("start", 0)}};
         return json{{"spec", spec}};
       }},
  });
  v.push_back({.path = {"dig", "history"},
               .summary = "show a deployment intent group's state history and revisions",
               .args = {{.name = k_dig_address, .help = "the deployment intent group (or its anchor)", .complete = Complete::anchor}},
               .flags = {output_flag({Format::table, Format::json, Format::yaml})},
               .handler = history_cmd});
  ArgSpec dig_arg{.name = k_dig_address, .help = "the deployment intent group (or its anchor)", .complete = Complete::anchor};
  v.push_back({.path = {"dig", "plan"},
               .summary = "show what instantiating or updating a deployment intent group would change",
               .description =
                   "Renders every app and places it as instantiate/update would, stores nothing and contacts no\n"
                   "cluster (hpa placement reads the candidate clusters' Nodes), then compares with the running\n"
                   "revision (the DIG's current instantiated AppContext): per app and cluster the objects to\n"
                   "create, change (with a unified diff of the YAML) or delete.\n"
                   "Clusters with the same change are folded (\"same change on 842 clusters\"). Without a running\n"
                   "revision everything is created. Exit status 2 when something would change, 0 when nothing\n"
                   "would (for CI).",
               .args = {dig_arg},
               .flags = {output_flag({Format::table, Format::json}, "text")},
               .examples = {"emco dig plan proj1/collection/v1/dig1", "emco dig plan proj1/collection/v1/dig1 -o json"},
               .handler = plan_cmd});
  std::vector<FlagSpec> drift_flags = {
      {.name = "extra", .help = "also report live objects with this DIG's emco/deployment-id label that the plan lacks"},
      {.name = "app", .value = "APP", .help = "only this app", .repeatable = true},
      {.name = "cluster", .value = "PROVIDER+CLUSTER", .help = "only this cluster", .repeatable = true},
      {.name = "parallel", .value = "N", .help = "clusters read at once", .default_value = "16"},
      output_flag({Format::table, Format::json}, "text")};
  v.push_back({.path = {"dig", "diff"},
               .summary = "show what changed on the clusters behind emco's back (drift)",
               .description =
                   "Reads every object of the running revision live from its cluster (through the delivery's\n"
                   "credentials, TLS and timeouts; --parallel clusters at once) and compares it with the plan. Only\n"
                   "fields the plan sets count: status, defaults the server added and fields other managers own\n"
                   "that emco never set are not drift. Per app, cluster and object:\n"
                   "  changed  a field of the plan has another live value; the manager that owns it now\n"
                   "           (metadata.managedFields: kubectl-edit, kubectl-patch, a controller) changed it\n"
                   "  deleted  the object is not on the cluster\n"
                   "  extra    (--extra) a live object of a kind the plan deploys there, labelled\n"
                   "           emco/deployment-id for an app of this DIG, that the plan does not contain\n"
                   "Clusters with the same drift are folded (\"same drift on 842 clusters\"). For clusters delivered by\n"
                   "GitOps the repository is compared instead (its branch fetched now): an object's file edited by\n"
                   "hand is changed, a removed file deleted. --live is the only mode (the plan's own changes are\n"
                   "'emco dig plan'). Exit status 2 when there is drift (for CI); otherwise 1 when a cluster refused\n"
                   "the reads, 7 when one could not be reached, 0 when everything matches.\n"
                   "'emco dig sync DIG --repair' re-applies what drifted.",
               .args = {dig_arg},
               .flags = [&] {
                 auto f = drift_flags;
                 f.insert(f.begin(), {.name = "live", .help = "compare with the live clusters (the only mode)"});
                 return f;
               }(),
               .examples = {"emco dig diff --live proj1/collection/v1/dig1",
                            "emco dig diff --live proj1/collection/v1/dig1 --extra -o json"},
               .handler = diff_cmd});
  v.push_back({.path = {"dig", "sync"},
               .summary = "repair drift: re-apply only the objects that changed or were deleted on the clusters",
               .description =
                   "Finds the drift as 'emco dig diff --live' does, then re-applies each changed object (server-side\n"
                   "apply with force: emco's fields return to the plan, fields others own alone stay) and recreates\n"
                   "each deleted one, through the clusters' delivery targets; on GitOps clusters the planned files\n"
                   "are committed back (one commit per repository). --prune-extra also deletes the extra\n"
                   "objects (implies --extra). The repair is recorded with the running revision ('emco dig status\n"
                   "-o json' shows it under \"driftRepairs\"). Exit status 0 when everything that drifted was\n"
                   "repaired, 1 when an object could not be, 7 when a cluster could not be reached. A following\n"
                   "'emco dig diff --live' exits 0.",
               .args = {dig_arg},
               .flags = [&] {
                 auto f = drift_flags;
                 f.insert(f.begin(), {.name = "prune-extra", .help = "delete extra objects too"});
                 f.insert(f.begin(), {.name = "repair", .help = "re-apply what drifted (required)"});
                 return f;
               }(),
               .examples = {"emco dig sync --repair proj1/collection/v1/dig1",
                            "emco dig sync --repair --prune-extra proj1/collection/v1/dig1"},
               .handler = dig_sync_cmd});
  v.push_back({.path = {"dig", "render"},
               .summary = "print the manifests a deployment intent group would deploy",
               .description =
                   "The planned objects as multi-document YAML in deploy order (CRDs and pre-install hooks,\n"
                   "resources, other hooks), each preceded by '# Source: APP/PROVIDER+CLUSTER/NAME+KIND'.\n"
                   "Generic action controller customizations are applied. Note that a GAC customization with\n"
                   "'mode: deny' applies to no cluster at all, as upstream EMCO's code does (its documentation\n"
                   "says \"all clusters but these\"). Patch values '$(http...)$' are rejected: emco plans offline.",
               .args = {dig_arg},
               .flags = {{.name = "cluster", .value = "PROVIDER+CLUSTER", .help = "only this cluster"},
                         {.name = "app", .value = "APP", .help = "only this app"}},
               .examples = {"emco dig render proj1/collection/v1/dig1 --cluster provider1+cluster1 --app collectd"},
               .handler = render_cmd});
  v.push_back({.path = {"dig", "explain"},
               .summary = "show per app every candidate cluster and why it was chosen or not",
               .description = "Every cluster of the DIG's logical cloud (and clusters outside it that match a label of\n"
                              "the intent), with the placement reason: named or labelled by allOf/anyOf, pruned by the\n"
                              "anyOf rule (the lexicographically first PROVIDER+CLUSTER is kept), removed by a placement\n"
                              "controller (hpa placement: which requirement the cluster's Nodes failed and by how\n"
                              "much, read live from the cluster), or selected by no element. Labels are resolved now.\n"
                              "An app no cluster is left for is shown, not an error.",
               .args = {dig_arg},
               .flags = {{.name = "app", .value = "APP", .help = "only this app"},
                         output_flag({Format::table, Format::json})},
               .examples = {"emco dig explain proj1/collection/v1/dig1 --app collectd"},
               .handler = explain_cmd});
  return v;
}

// The intents' sub-nouns, each its own section of the table: a command of
// another (`emco dig status`) does not build them.
// `dig status` in a section of its own: the most run read builds no other dig command.
std::vector<CommandSpec> dig_status_commands() {
  std::vector<CommandSpec> v;
  v.push_back({.path = {"dig", "status"},
               .summary = "show what a deployment intent group deployed and whether it is ready",
               .description = "EMCO's status query: --status deployed (the default: what emco applied, from the workspace)\n"
                              "or ready (reads the live objects); --output summary|all|detail; filters --app, --cluster,\n"
                              "--resource; --apps/--clusters/--resources list instead. --type rsync|cluster gives\n"
                              "upstream's deprecated field names. Before the first instantiation deployedStatus is the\n"
                              "lifecycle state.\n"
                              "Each resource's deployed status means one thing:\n"
                              "  Pending     queued: not attempted yet, work is queued for it ('emco sync' continues it)\n"
                              "  NotCreated  never created and nothing is queued: the operation was stopped before it\n"
                              "              reached the resource, or while its cluster could not be reached\n"
                              "  Applied     the cluster accepted it\n"
                              "  Committed   written to the cluster's git repository (GitOps; the commit is shown)\n"
                              "  Failed      attempted and refused: the message is the cluster's answer\n"
                              "  Retrying    attempted, the cluster could not be reached; tried again with backoff\n"
                              "  Skipped     not attempted: an earlier resource of its app on that cluster, or an app\n"
                              "              it depends on, failed (the message says which)\n"
                              "  Deleted     a terminate or update removed it from the cluster\n"
                              "  Absent      a terminate or update found it not on the cluster: nothing to delete",
               .args = {{.name = k_dig_address, .help = "the deployment intent group (or its anchor)", .complete = Complete::anchor}},
               .flags = [] {
                 auto f = status_flags();
                 f.push_back({.name = "drift",
                              .help = "also read every object live and show its drift (as 'emco dig diff --live')"});
                 f.push_back({.name = "parallel", .value = "N", .help = "with --drift: clusters read at once",
                              .default_value = "16"});
                 return f;
               }(),
               .examples = {"emco dig status proj1/collection/v1/dig1 --status ready",
                            "emco dig status proj1/collection/v1/dig1 --drift",
                            "emco dig status proj1/collection/v1/dig1 --status deployed -o json -o summary"},
               .handler = dig_status_cmd});
  return v;
}

std::vector<CommandSpec> dig_intent_commands() {
  std::vector<CommandSpec> v;
  add_verbs(v, {.words = {"dig", "intent"}, .kind = "groupIntent", .address = "PROJECT/COMPOSITE-APP/VERSION/DIG/INTENT",
                .flags = {{.name = "placement", .value = "NAME", .help = "the generic placement intent"},
                          {.name = "controller", .value = "CONTROLLER=INTENT", .help = "a controller's intent", .repeatable = true}},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (!spec.contains("intent")) spec["intent"] = json::object();
                  if (inv.has("placement")) spec["intent"]["genericPlacementIntent"] = inv.get("placement");
                  for (const auto& [k, val] : key_values(inv.all("controller"), "controller")) spec["intent"][k] = val;
                }});
  return v;
}

std::vector<CommandSpec> dig_placement_commands() {
  std::vector<CommandSpec> v;
  add_verbs(v, {.words = {"dig", "placement"}, .kind = "genericPlacementIntent",
                .address = "PROJECT/COMPOSITE-APP/VERSION/DIG/PLACEMENT"});
  return v;
}

std::vector<CommandSpec> dig_app_intent_commands() {
  std::vector<CommandSpec> v;
  add_verbs(v, {.words = {"dig", "app-intent"}, .kind = "genericAppPlacementIntent",
                .address = "PROJECT/COMPOSITE-APP/VERSION/DIG/PLACEMENT/APP-INTENT",
                .flags = {{.name = "app", .value = "APP", .help = "the app placed by this intent"},
                          {.name = "all-of", .value = "PROVIDER/CLUSTER", .help = "deploy on this cluster (PROVIDER/label=L: every cluster with label L)", .repeatable = true},
                          {.name = "any-of", .value = "PROVIDER/CLUSTER", .help = "deploy on one of these clusters", .repeatable = true}},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (inv.has("app")) spec["app"] = inv.get("app");
                  if (inv.has("all-of") || inv.has("any-of")) spec["intent"] = json::object();
                  if (inv.has("all-of")) spec["intent"]["allOf"] = placement_elements(inv.all("all-of"), "all-of");
                  if (inv.has("any-of")) spec["intent"]["anyOf"] = placement_elements(inv.all("any-of"), "any-of");
                },
                .examples = {"emco dig app-intent create proj1/collection/v1/dig1/placement/collectd --app collectd "
                             "--all-of edge-provider/label=edge"}});
  return v;
}

}  // namespace emco::cli
