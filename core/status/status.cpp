#include "core/status/status.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "core/appcontext/appcontext.hpp"
#include "core/helm/manifests.hpp"
#include "core/sync/queue.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::status {

using nlohmann::json;
namespace ac = emco::appcontext;

namespace {

// Name and GVK of a manifest, parsed once per content hash.
struct ObjectId {
  std::string group, version, kind, name;
  json gvk;  // gvk_json(*this), made once
};

json gvk_json(const ObjectId& id) { return {{"Group", id.group}, {"Version", id.version}, {"Kind", id.kind}}; }

class IdCache {
public:
  const ObjectId& of(const ac::Resource& r) {
    auto it = m_ids.find(r.hash());
    if (it != m_ids.end()) return it->second;
    ObjectId id;
    // The key is "<name>+<Kind>"; the manifest has the authoritative values.
    auto plus = r.name.rfind('+');
    id.name = r.name.substr(0, plus);
    if (plus != std::string::npos) id.kind = r.name.substr(plus + 1);
    // Helm's head reader: a line scan of the block YAML emco stores, the full
    // parser only for what it is not sure of (a YAML parse of every manifest
    // was 7% of a small `emco dig status` and most of a large one's).
    try {
      helm::ManifestHead head = helm::parse_manifest_head(r.text());
      auto slash = head.api_version.find('/');
      if (slash == std::string::npos) id.version = head.api_version;
      else {
        id.group = head.api_version.substr(0, slash);
        id.version = head.api_version.substr(slash + 1);
      }
      if (!head.kind.empty()) id.kind = head.kind;
      if (!head.name.empty()) id.name = head.name;
    } catch (const Error&) {
      // Keep the names from the key: status must not fail on one odd manifest.
    }
    id.gvk = gvk_json(id);
    return m_ids.emplace(r.hash(), std::move(id)).first->second;
  }

private:
  std::map<std::string, ObjectId> m_ids;
};


std::pair<std::string, std::string> split_cluster(const std::string& c) {
  auto plus = c.find('+');
  return {c.substr(0, plus), plus == std::string::npos ? "" : c.substr(plus + 1)};
}

// emco's own: childContextsPending when `ctx` (of status `status`) is
// delivered but its children are still to make (the operation did not wait,
// was killed, or a planner failed: childContextsError), which `emco sync` does.
void add_owed_children(store::Store& st, const std::string& ctx, const std::string& status, json& out) {
  if (status != ac::status::instantiated) return;
  if (auto owed = ac::owed_children(st, ctx)) {
    out["childContextsPending"] = true;
    if (!owed->error.empty()) out["childContextsError"] = owed->error;
  }
}

// Child contexts (lifecycle.md §7) of `ctx`: upstream's ChildContextIDs,
// and seed 002's `nested` with each child's state (query one with
// instance=<id>), and those still to make (add_owed_children).
void add_children(store::Store& st, const std::string& ctx, const std::string& ctx_status,
                  const std::vector<std::string>& children, json& out) {
  for (const auto& child : children) {
    out["ChildContextIDs"].push_back(child);
    json n = {{"instance", child}};
    if (ac::exists(st, child)) n["status"] = ac::header(st, child).status;
    out["nested"].push_back(std::move(n));
  }
  add_owed_children(st, ctx, ctx_status, out);
}

// lifecycle.md §1: the status context for ?instance=<id> is the most recent
// Instantiated/Applied action at or before the first action with that instance.
std::string status_context_for(const json& actions, const std::string& instance) {
  std::string found;
  for (const auto& a : actions) {
    std::string st = a.value("state", "");
    if (st == "Instantiated" || st == "Applied") found = a.value("instance", "");
    if (a.value("instance", "") == instance) return found.empty() ? instance : found;
  }
  return "";
}

}  // namespace

void validate(const Query& q) {
  if (!q.status.empty() && q.status != "deployed" && q.status != "ready")
    fail(ErrorKind::invalid, "invalid status '" + q.status + "'", "use deployed or ready");
  if (!q.type.empty() && q.type != "rsync" && q.type != "cluster")
    fail(ErrorKind::invalid, "invalid type '" + q.type + "'", "use rsync or cluster (deprecated; prefer status=)");
  if (q.output != "summary" && q.output != "all" && q.output != "detail")
    fail(ErrorKind::invalid, "invalid output '" + q.output + "'", "use summary, all or detail");
  if (q.has_instance && q.instance.empty()) fail(ErrorKind::invalid, "instance must not be empty");
  for (const auto& c : q.clusters)
    if (std::count(c.begin(), c.end(), '+') != 1)
      fail(ErrorKind::invalid, "invalid cluster '" + c + "'", "write it as <provider>+<cluster>");
}

Query parse_query(const std::string& query_string) {
  Query q;
  for (const auto& [name, value] : query_parameters(query_string)) {
    if (name == "status") q.status = value;
    else if (name == "type") q.type = value;
    else if (name == "output") q.output = value;
    else if (name == "instance") {
      q.has_instance = true;
      q.instance = value;
    } else if (name == "app") q.apps.push_back(value);
    else if (name == "cluster") q.clusters.push_back(value);
    else if (name == "resource") q.resources.push_back(value);
    else if (name == "apps") q.list_apps = value != "false";
    else if (name == "clusters") q.list_clusters = value != "false";
    else if (name == "resources") q.list_resources = value != "false";
    else fail(ErrorKind::invalid, "unknown status parameter '" + name + "'",
              "status, type, output, instance, app, cluster, resource, apps, clusters, resources");
  }
  validate(q);
  return q;
}

// The deploy status of a resource nothing was recorded for: Pending while
// work on its context is queued (or in progress), NotCreated once none is
// (the operation was stopped before it reached the resource).
std::string unrecorded_status(store::Store& st, const std::string& ctx) {
  return ac::has_pending(st, ctx) ? ac::resource_status::pending : ac::resource_status::not_created;
}

json deployed_counts(store::Store& st, const std::string& ctx, const std::string& status_ctx) {
  // One app at a time: its plan's resource names in (cluster, resource)
  // order, merged with its recorded states, which come in that order (the
  // table's key). The plan lists its clusters sorted by name (plan::build),
  // each with its resources together, so only each cluster's few resources
  // need sorting; a plan in another order is sorted whole. No table of names:
  // at 100,000 clusters a hash table of an app's 300,000 names missed the
  // CPU's caches at every lookup, and counting grew 25x from 10,000.
  // The names are views into the plan and the rows: nothing is copied.
  std::vector<std::string> statuses;  // the distinct states seen, by first appearance
  std::vector<int64_t> tally;         // per state in `statuses`
  int64_t unrecorded_count = 0;
  std::vector<uint32_t> order;  // positions of the app's names, sorted
  ac::for_each_app_resource_names(st, ctx, [&](std::string_view app, const std::vector<ac::ResourceName>& names) {
    auto less = [&](uint32_t a, uint32_t b) {
      const int c = names[a].cluster.compare(names[b].cluster);
      return c != 0 ? c < 0 : names[a].resource < names[b].resource;
    };
    order.resize(names.size());
    std::iota(order.begin(), order.end(), 0u);
    const bool clusters_sorted = std::is_sorted(names.begin(), names.end(), [](const auto& a, const auto& b) {
      return a.cluster < b.cluster;
    });
    if (clusters_sorted) {
      for (size_t begin = 0, end = 0; begin < order.size(); begin = end) {
        for (end = begin + 1; end < order.size() && names[order[end]].cluster == names[order[begin]].cluster;) ++end;
        std::sort(order.begin() + static_cast<long>(begin), order.begin() + static_cast<long>(end), less);
      }
    } else {
      std::sort(order.begin(), order.end(), less);
    }
    size_t next = 0, matched = 0;
    ac::for_each_resource_status(st, status_ctx, std::string(app),
                                 [&](std::string_view c, std::string_view r, std::string_view status) {
                                   auto before = [&](const ac::ResourceName& n) {
                                     const int k = n.cluster.compare(c);
                                     return k != 0 ? k < 0 : n.resource < r;
                                   };
                                   while (next < order.size() && before(names[order[next]])) ++next;
                                   size_t same = 0;  // a name the plan lists twice counts twice
                                   while (next + same < order.size() && names[order[next + same]].cluster == c &&
                                          names[order[next + same]].resource == r)
                                     ++same;
                                   if (same == 0) return;  // a state of a resource this plan does not have
                                   auto known = std::find(statuses.begin(), statuses.end(), status);
                                   if (known == statuses.end()) {
                                     statuses.emplace_back(status);
                                     tally.push_back(0);
                                     known = statuses.end() - 1;
                                   }
                                   tally[static_cast<size_t>(known - statuses.begin())] += static_cast<int64_t>(same);
                                   matched += same;
                                   next += same;
                                 });
    unrecorded_count += static_cast<int64_t>(order.size() - matched);
  });
  json out = json::object();
  for (size_t i = 0; i < statuses.size(); ++i) out[statuses[i]] = tally[i];  // distinct, each counted once at least
  if (unrecorded_count > 0) {
    const std::string unrecorded = unrecorded_status(st, ctx);  // asked only when a resource has no state
    out[unrecorded] = out.value(unrecorded, int64_t{0}) + unrecorded_count;
  }
  return out;
}

json history_status(store::Store& st, const resource::Kind& k, const resource::Key& dig, const std::string& state_info,
                    const Query& q, const sync::TargetFactory& live, json out, const json& extra) {
  validate(q);
  json si = state_info.empty() ? json::object() : json::parse(state_info);
  json actions = si.value("actions", json::array());
  const bool dep = q.deprecated_names();
  const bool ready = q.ready();

  // Which context to show.
  std::string ctx = actions.empty() ? "" : actions.back().value("instance", "");
  std::string status_ctx = si.value("statusctxid", "");
  if (q.has_instance) {
    status_ctx = status_context_for(actions, q.instance);
    // A child context (lifecycle.md §7) keeps its own status.
    if (status_ctx.empty() && ac::exists(st, q.instance)) {
      std::string parent = ac::header(st, q.instance).parent;
      auto owned = ac::list(st, dig);
      if (!parent.empty() && std::find(owned.begin(), owned.end(), parent) != owned.end()) status_ctx = q.instance;
    }
    if (status_ctx.empty()) fail(ErrorKind::not_found, store::describe(k, dig) + " has no instance '" + q.instance + "'");
    ctx = q.instance;
  }
  if (status_ctx.empty()) status_ctx = ctx;

  ac::AppContext c;
  bool have_ctx = false;
  if (!ctx.empty()) {
    if (!(q.list_apps || q.list_clusters || q.list_resources || q.output != "summary" || ready || !q.apps.empty() ||
          !q.clusters.empty() || !q.resources.empty())) {
      have_ctx = ac::exists(st, ctx);
      if (have_ctx) c.id = ctx;
    } else if (auto loaded = ac::load_if_exists(st, ctx, ac::Sealed::keep)) {
      c = std::move(*loaded);  // names and states: readable without the workspace key
      have_ctx = true;
    }
  }

  for (const auto& a : q.apps)
    if (have_ctx && !c.find_app(a)) fail(ErrorKind::not_found, "app '" + a + "' is not part of " + store::describe(k, dig));

  IdCache ids;
  if (q.list_apps) {
    json apps = json::array();
    for (const auto& a : c.apps) apps.push_back(a.name);
    out["apps"] = std::move(apps);
    return out;
  }
  if (q.list_clusters) {
    json by_app = json::array();
    for (const auto& a : c.apps) {
      if (!selected(q.apps, a.name)) continue;
      json clusters = json::array();
      for (const auto& cl : a.clusters) {
        if (!selected(q.clusters, cl.name)) continue;
        auto [p, n] = split_cluster(cl.name);
        clusters.push_back({{"clusterProvider", p}, {"cluster", n}});
      }
      by_app.push_back({{"app", a.name}, {"clusters", std::move(clusters)}});
    }
    out["clustersByApp"] = std::move(by_app);
    return out;
  }
  if (q.list_resources) {
    json by_app = json::array();
    for (const auto& a : c.apps) {
      if (!selected(q.apps, a.name)) continue;
      for (const auto& cl : a.clusters) {
        if (!selected(q.clusters, cl.name)) continue;
        json res = json::array();
        for (const auto& rs : cl.resources) {
          const auto& id = ids.of(rs);
          if (!selected(q.resources, id.name)) continue;
          res.push_back({{"name", id.name}, {"GVK", id.gvk}});
        }
        auto [p, n] = split_cluster(cl.name);
        by_app.push_back({{"app", a.name}, {"clusterProvider", p}, {"cluster", n}, {"resources", std::move(res)}});
      }
    }
    out["resourcesByApp"] = std::move(by_app);
    return out;
  }

  for (const auto& [field, value] : extra.items()) out[field] = value;
  out["states"] = std::move(si);
  if (!have_ctx) return out;

  const char* k_deployed_status = dep ? "status" : "deployedStatus";
  const char* k_deployed_counts = dep ? "rsyncStatus" : "deployedCounts";
  const char* k_ready_counts = dep ? "clusterStatus" : "readyCounts";
  const char* k_conn = dep ? "readyStatus" : "connectivity";
  const char* k_res_deployed = dep ? "rsyncStatus" : "deployedStatus";
  const char* k_res_ready = dep ? "clusterStatus" : "readyStatus";

  const bool filtered = !q.apps.empty() || !q.clusters.empty() || !q.resources.empty();
  if (q.output == "summary" && !ready && !filtered) {
    const ac::Header h = ac::header(st, ctx);
    out[k_deployed_status] = h.status;
    json counts = deployed_counts(st, ctx, status_ctx);
    if (!counts.empty()) out[k_deployed_counts] = std::move(counts);
    add_children(st, ctx, h.status, h.children, out);
    return out;
  }
  out[k_deployed_status] = c.status;  // loaded: every other query loads the context

  // Recorded statuses, by app/cluster/resource.
  std::map<std::tuple<std::string, std::string, std::string>, std::string> deployed;
  // GitOps resources: the commit that delivered them ("commit <id>").
  std::map<std::tuple<std::string, std::string, std::string>, std::string> commits;
  // Why a resource is Failed, Skipped or Retrying: the cluster's answer, or
  // what failed before it (an extension of EMCO's fields: "message").
  std::map<std::tuple<std::string, std::string, std::string>, std::string> messages;
  ac::States recorded = ac::states(st, status_ctx);
  for (auto& s : recorded.resources) {
    deployed[{s.app, s.cluster, s.resource}] = s.status;
    if (s.status == "Committed" && s.message.rfind("commit ", 0) == 0)
      commits[{s.app, s.cluster, s.resource}] = s.message.substr(7);
    else if (!s.message.empty() && (s.status == "Failed" || s.status == "Skipped" || s.status == "Retrying"))
      messages[{s.app, s.cluster, s.resource}] = s.message;
  }
  std::map<std::pair<std::string, std::string>, std::string> conn;
  for (auto& s : recorded.clusters) conn[{s.app, s.cluster}] = s.connectivity;

  json dcounts = json::object(), rcounts = json::object();
  json apps = json::array();
  std::optional<std::string> unrecorded;  // asked only when a resource has no state
  std::map<std::string, std::shared_ptr<sync::Target>> targets;
  std::string ns = c.meta.count("Namespace") ? c.meta.at("Namespace") : "";
  for (const auto& a : c.apps) {
    if (!selected(q.apps, a.name)) continue;
    json clusters = json::array();
    for (const auto& cl : a.clusters) {
      if (!selected(q.clusters, cl.name)) continue;
      std::shared_ptr<sync::Target> target;
      if ((ready || q.output == "detail") && live) {
        try {
          auto& t = targets[cl.name];
          if (!t) t = live(cl.name, ns);
          target = t;
        } catch (const Error&) {
          // The factory's contract: a cluster it cannot reach (no
          // kubeconfig) is an Error. Its objects count as NotPresent.
        }
      }
      json resources = json::array();
      for (const auto& rs : cl.resources) {
        const auto& id = ids.of(rs);
        if (!selected(q.resources, id.name)) continue;
        json item = {{"GVK", id.gvk}, {"name", id.name}};
        auto it = deployed.find({a.name, cl.name, rs.name});
        if (it == deployed.end() && !unrecorded) unrecorded = unrecorded_status(st, c.id);
        std::string ds = it == deployed.end() ? *unrecorded : it->second;
        item[k_res_deployed] = ds;
        auto commit = commits.find({a.name, cl.name, rs.name});
        if (commit != commits.end()) item["commit"] = commit->second;
        if (auto m = messages.find({a.name, cl.name, rs.name}); m != messages.end()) item["message"] = m->second;
        dcounts[ds] = dcounts.value(ds, 0) + 1;
        if (ready) {
          // A resource committed to a GitOps cluster that has no kubeconfig
          // to read it back: its state on the cluster is unknown.
          std::string rstate = ds == "Committed" && !target ? "Unknown" : "NotPresent";
          if (target) {
            try {
              auto s = target->state(rs.text());
              rstate = !s.present ? "NotPresent" : s.ready ? "Ready" : "NotReady";
            } catch (const sync::TargetError&) {
              rstate = "NotPresent";
            }
          }
          item[k_res_ready] = rstate;
          rcounts[rstate] = rcounts.value(rstate, 0) + 1;
        }
        if (q.output == "detail" && target) {
          try {
            std::string live_text = target->read(rs.text());
            if (!live_text.empty()) item["detail"] = json::parse(live_text);
          } catch (const sync::TargetError&) {
            // The object could not be read now: no detail.
          }
        }
        resources.push_back(std::move(item));
      }
      if (resources.empty()) continue;
      auto [p, n] = split_cluster(cl.name);
      auto ci = conn.find({a.name, cl.name});
      json cj = {{"clusterProvider", p}, {"cluster", n},
                 {k_conn, ci == conn.end() ? "Unknown" : ci->second}, {"resources", std::move(resources)}};
      clusters.push_back(std::move(cj));
    }
    if (clusters.empty()) continue;
    apps.push_back({{"name", a.name}, {"clusters", std::move(clusters)}});
  }
  if (!dcounts.empty()) out[k_deployed_counts] = std::move(dcounts);
  if (ready) {
    if (!rcounts.empty()) out[k_ready_counts] = rcounts;
    int nr = rcounts.value("NotReady", 0), np = rcounts.value("NotPresent", 0), rd = rcounts.value("Ready", 0);
    int unknown = rcounts.value("Unknown", 0);
    if (!dep)
      out["readyStatus"] = (nr == 0 && np == 0 && unknown == 0) ? "Ready"
                           : (nr == 0 && np == 0)               ? "Unknown"
                           : (rd == 0 && nr == 0)               ? "NotPresent"
                                                                : "NotReady";
  }
  if (q.output != "summary" && !apps.empty()) out["apps"] = std::move(apps);
  add_children(st, ctx, c.status, c.children, out);
  return out;
}

json dig_status(store::Store& st, const resource::Key& dig, const Query& q, const sync::TargetFactory& live) {
  const auto& k = resource::kind("deploymentIntentGroup");
  auto r = st.get(dig);
  if (!r) fail(ErrorKind::not_found, store::describe(k, dig) + " does not exist");
  json data = json::parse(r->data);
  json spec = data.value("spec", json::object());
  json out;
  out["project"] = dig.get("project").value_or("");
  out["compositeApp"] = dig.get("compositeApp").value_or("");
  out["compositeAppVersion"] = dig.get("compositeAppVersion").value_or("");
  out["compositeProfile"] = spec.value("compositeProfile", "");
  out["name"] = dig.parts.back().second;
  json extra = {{"digId", spec.value("id", data.value("metadata", json::object()).value("id", ""))}};
  return history_status(st, k, dig, r->state_info, q, live, std::move(out), extra);
}

json owned_status(store::Store& st, const resource::Kind& k, const resource::Key& key, const Query& q,
                  const sync::TargetFactory& live) {
  auto r = st.get(key);
  if (!r) fail(ErrorKind::not_found, store::describe(k, key) + " does not exist");
  std::string name;
  for (const auto& [element, value] : key.parts) name += (name.empty() ? "" : "+") + value;
  return history_status(st, k, key, r->state_info, q, live, {{"name", name}}, json::object());
}

json workspace_status(store::Store& st) {
  json rows = json::array();
  for (const char* kind_id : {"logicalCloud", "deploymentIntentGroup"}) {
    const auto& k = resource::kind(kind_id);
    for (const auto& r : st.list(k)) {
      json si = r.state_info.empty() ? json::object() : json::parse(r.state_info);
      json actions = si.value("actions", json::array());
      json row = {{"kind", k.display}, {"anchor", resource::resource_anchor(k, r.key)}};
      row["state"] = actions.empty() ? "" : actions.back().value("state", "");
      std::string ctx = actions.empty() ? "" : actions.back().value("instance", "");
      int rev = 0;
      for (const auto& a : actions)
        if (a.value("state", "") == "Instantiated") rev = a.value("revision", 0);
      row["revision"] = rev;
      if (!ctx.empty() && ac::exists(st, ctx)) {
        auto h = ac::header(st, ctx);
        std::string status_ctx = si.value("statusctxid", "");
        row["context"] = ctx;
        row["deployedStatus"] = h.status;
        row["deployedCounts"] = deployed_counts(st, ctx, status_ctx.empty() ? ctx : status_ctx);
        add_owed_children(st, ctx, h.status, row);
      }
      rows.push_back(std::move(row));
    }
  }
  json queued = json::array();
  for (const auto& id : ac::active_contexts(st)) {
    auto h = ac::header(st, id);
    queued.push_back({{"context", id}, {"owner", h.owner_key}, {"status", h.status},
                      {"running", sync::held_by_live_process(st, id)}});
  }
  return {{"resources", rows}, {"queued", queued}};
}

}  // namespace emco::status
