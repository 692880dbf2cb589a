// The status views of lifecycle resources with a context (DIGs, a cluster's
// network intents): EMCO's query flags and the table form of a status.

#include "cli/status_view.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli/output.hpp"
#include "core/util/strings.hpp"

namespace emco::cli {

using nlohmann::json;


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

namespace {

// j.value(key, fallback) without copying the value found: j's member `key`,
// or `fallback` when the object j has none.
const json& member_or(const json& j, const char* key, const json& fallback) {
  if (!j.is_object()) (void)j.value(key, fallback);  // throws, as value() does for anything but an object
  auto it = j.find(key);
  return it == j.end() ? fallback : *it;
}

}  // namespace

void print_status_heading(std::ostream& out, const std::string& what, const json& s) {
  static const json no_states = json::object(), no_actions = json::array();
  const json& states = member_or(s, "states", no_states);
  const json& actions = member_or(states, "actions", no_actions);
  std::string state = actions.empty() ? "" : actions.back().value("state", "");
  out << what << "  state " << state;
  int rev = 0;
  for (const auto& a : actions)
    if (a.value("state", "") == "Instantiated") rev = a.value("revision", 0);
  if (rev) out << "  revision " << rev;
  out << "\n";
}

void print_status_table(std::ostream& out, const json& s, const status::Query& q) {
  const bool dep = q.deprecated_names();
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
  if (s.contains("driftStatus")) {
    out << "drift: " << s["driftStatus"].get<std::string>();
    const json counts = s.value("driftCounts", json::object());
    for (const auto& [name, n] : counts.items()) out << "  " << name << " " << n.get<int64_t>();
    out << "\n";
  }
  if (s.value("childContextsPending", false))
    out << "child contexts: still to make ("
        << (s.contains("childContextsError") ? "failed: " + s["childContextsError"].get<std::string>() + "; " : "")
        << "'emco sync' makes them)\n";
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
  bool with_drift = s.contains("driftStatus");  // dig status --drift
  std::vector<std::vector<std::string>> rows;
  for (const auto& a : s["apps"])
    for (const auto& c : a["clusters"])
      for (const auto& r : c["resources"]) {
        std::vector<std::string> row = {a["name"], c.value("clusterProvider", "") + "+" + c.value("cluster", ""),
                                        c.value(k_conn, ""), r["GVK"].value("Kind", ""), r["name"], r.value(k_dep, "")};
        if (with_ready) row.push_back(r.value(k_ready, ""));
        if (with_drift) row.push_back(r.value("drift", c.value("drift", "")));
        rows.push_back(row);
      }
  std::vector<std::string> header = {"APP", "CLUSTER", "CONNECTIVITY", "KIND", "NAME", "DEPLOYED"};
  if (with_ready) header.push_back("READY");
  if (with_drift) header.push_back("DRIFT");
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


}  // namespace emco::cli
