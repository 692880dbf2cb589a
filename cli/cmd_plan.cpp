// `emco dig plan|render|explain`: the deployment planner offline. Nothing is
// stored; no cluster is contacted.

#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/context.hpp"
#include "cli/output.hpp"
#include "cli/table.hpp"
#include "core/appcontext/appcontext.hpp"
#include "core/plan/plan.hpp"
#include "core/plan/unified_diff.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::cli {

std::vector<CommandSpec> plan_commands();  // appended to the table in cli/parse.cpp

namespace {

using nlohmann::json;
using resource::Key;

const std::string k_address = "PROJECT/COMPOSITE-APP/VERSION/DIG";

Key dig_of(const std::string& text) {
  const auto& k = resource::kind("deploymentIntentGroup");
  if (starts_with(text, "projects/")) {
    auto a = resource::parse_anchor(text);
    if (a.kind != &k || a.target != resource::AnchorTarget::resource)
      fail(ErrorKind::usage, "anchor '" + text + "' does not name a deployment intent group");
    return a.key;
  }
  auto v = split(text, '/');
  if (v.size() != 4)
    fail(ErrorKind::usage, "'" + text + "' does not name a deployment intent group",
         "expected " + k_address + " or the DIG's anchor");
  Key key;
  key.parts = {{"project", v[0]}, {"compositeApp", v[1]}, {"compositeAppVersion", v[2]}, {"deploymentIntentGroup", v[3]}};
  return key;
}

// Plans with the labels of the running deployment, so that unchanged objects compare equal.
plan::Plan plan_for(store::Store& st, const Key& dig, std::optional<std::string>& running) {
  running = plan::running_context(st, dig);
  plan::Options o;
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

const appcontext::Resource* find_in(const appcontext::AppContext& ctx, const std::string& app, const std::string& cluster,
                                    const std::string& res) {
  const auto* a = ctx.find_app(app);
  const auto* c = a ? a->find_cluster(cluster) : nullptr;
  return c ? c->find(res) : nullptr;
}

std::vector<Change> changes_of(const appcontext::AppContext* old_ctx, const appcontext::AppContext& new_ctx) {
  appcontext::AppContext empty;
  auto diffs = appcontext::diff(old_ctx ? *old_ctx : empty, new_ctx);
  // Fold clusters whose change is identical (same resources, same contents before and after).
  std::map<std::pair<std::string, std::string>, size_t> by_signature;  // (app, signature) -> index
  std::vector<Change> out;
  std::map<std::string, std::string> diff_cache;  // "old hash:new hash" -> diff
  for (const auto& d : diffs) {
    if (d.empty()) continue;
    std::string sig;
    for (const auto& r : d.added) sig += "+" + r + ":" + find_in(new_ctx, d.app, d.cluster, r)->hash() + "\n";
    for (const auto& r : d.removed) sig += "-" + r + ":" + find_in(*old_ctx, d.app, d.cluster, r)->hash() + "\n";
    for (const auto& r : d.changed)
      sig += "~" + r + ":" + find_in(*old_ctx, d.app, d.cluster, r)->hash() + ":" +
             find_in(new_ctx, d.app, d.cluster, r)->hash() + "\n";
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
      const auto* o = find_in(*old_ctx, d.app, d.cluster, r);
      const auto* n = find_in(new_ctx, d.app, d.cluster, r);
      std::string key = o->hash() + ":" + n->hash();
      auto cached = diff_cache.find(key);
      if (cached == diff_cache.end()) cached = diff_cache.emplace(key, plan::unified_diff(o->text(), n->text())).first;
      c.change.emplace_back(r, cached->second);
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::string cluster_list(const std::vector<std::string>& clusters) {
  if (clusters.size() == 1) return "on " + clusters[0];
  std::string s = "same change on " + std::to_string(clusters.size()) + " clusters: ";
  size_t shown = std::min<size_t>(clusters.size(), 3);
  for (size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + clusters[i];
  if (clusters.size() > shown) s += ", and " + std::to_string(clusters.size() - shown) + " more";
  return s;
}

int plan_cmd(Context& ctx, const Invocation& inv) {
  auto& st = ctx.store();
  Key dig = dig_of(inv.args.at(0));
  std::optional<std::string> running;
  plan::Plan p = plan_for(st, dig, running);
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

// ---- dig render -------------------------------------------------------------------------------

int render_cmd(Context& ctx, const Invocation& inv) {
  auto& st = ctx.store();
  Key dig = dig_of(inv.args.at(0));
  std::optional<std::string> running;
  plan::Plan p = plan_for(st, dig, running);
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
  auto& st = ctx.store();
  Key dig = dig_of(inv.args.at(0));
  std::optional<std::string> running;
  plan::Plan p = plan_for(st, dig, running);
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

std::vector<CommandSpec> plan_commands() {
  std::vector<CommandSpec> v;
  ArgSpec dig{.name = k_address, .help = "the deployment intent group (or its anchor)", .complete = Complete::anchor};
  v.push_back({.path = {"dig", "plan"},
               .summary = "show what instantiating or updating a deployment intent group would change",
               .description =
                   "Renders every app and places it as instantiate/update would, stores nothing and contacts no\n"
                   "cluster, then compares with the running revision (the DIG's current instantiated AppContext):\n"
                   "per app and cluster the objects to create, change (with a unified diff of the YAML) or delete.\n"
                   "Clusters with the same change are folded (\"same change on 842 clusters\"). Without a running\n"
                   "revision everything is created. Exit status 2 when something would change, 0 when nothing\n"
                   "would (for CI).",
               .args = {dig},
               .flags = {output_flag({Format::table, Format::json}, "text")},
               .examples = {"emco dig plan proj1/collection/v1/dig1", "emco dig plan proj1/collection/v1/dig1 -o json"},
               .handler = plan_cmd});
  v.push_back({.path = {"dig", "render"},
               .summary = "print the manifests a deployment intent group would deploy",
               .description =
                   "The planned objects as multi-document YAML in deploy order (CRDs and pre-install hooks,\n"
                   "resources, other hooks), each preceded by '# Source: APP/PROVIDER+CLUSTER/NAME+KIND'.\n"
                   "Generic action controller customizations are applied. Note that a GAC customization with\n"
                   "'mode: deny' applies to no cluster at all, as upstream EMCO's code does (its documentation\n"
                   "says \"all clusters but these\"). Patch values '$(http...)$' are rejected: emco plans offline.",
               .args = {dig},
               .flags = {{.name = "cluster", .value = "PROVIDER+CLUSTER", .help = "only this cluster"},
                         {.name = "app", .value = "APP", .help = "only this app"}},
               .examples = {"emco dig render proj1/collection/v1/dig1 --cluster provider1+cluster1 --app collectd"},
               .handler = render_cmd});
  v.push_back({.path = {"dig", "explain"},
               .summary = "show per app every candidate cluster and why it was chosen or not",
               .description = "Every cluster of the DIG's logical cloud (and clusters outside it that match a label of\n"
                              "the intent), with the placement reason: named or labelled by allOf/anyOf, pruned by the\n"
                              "anyOf rule (the lexicographically first PROVIDER+CLUSTER is kept), removed by a placement\n"
                              "controller, or selected by no element. Labels are resolved now.",
               .args = {dig},
               .flags = {{.name = "app", .value = "APP", .help = "only this app"},
                         output_flag({Format::table, Format::json})},
               .examples = {"emco dig explain proj1/collection/v1/dig1 --app collectd"},
               .handler = explain_cmd});
  return v;
}

}  // namespace emco::cli
