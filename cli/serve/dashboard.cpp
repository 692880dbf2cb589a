#include "cli/serve/dashboard.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "cli/batch_output.hpp"
#include "cli/serve/dashboard_assets.hpp"
#include "cli/table.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/status/status.hpp"
#include "core/util/error.hpp"
#include "core/util/sha256.hpp"
#include "core/util/strings.hpp"

namespace emco::cli::serve {

using nlohmann::json;

namespace {

http::Response text(int status, const std::string& message) {
  return {.status = status, .content_type = "text/plain; charset=utf-8", .body = message + "\n",
          .headers = {{"X-Content-Type-Options", "nosniff"}}};
}

http::Response json_reply(const json& j) { return {.status = 200, .body = j.dump() + "\n"}; }

std::string content_type(std::string_view path) {
  if (path.ends_with(".html")) return "text/html; charset=utf-8";
  if (path.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (path.ends_with(".css")) return "text/css; charset=utf-8";
  if (path.ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

// The files with their ETags, computed once.
struct Served {
  std::string path, type, etag;
  std::string_view data;
};
const std::vector<Served>& served() {
  static const std::vector<Served> files = [] {
    std::vector<Served> out;
    for (const auto& a : dashboard_assets())
      out.push_back({std::string(a.path), content_type(a.path), "\"" + sha256_hex(a.data).substr(0, 16) + "\"", a.data});
    return out;
  }();
  return files;
}

// The query's parameters, percent-decoded ('+' is a space only in forms,
// and cluster names use it: "edge+c1" stays).
std::map<std::string, std::string> parameters(const std::string& query) {
  auto decode = [](const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
          std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
        out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        out += s[i];
      }
    }
    return out;
  };
  std::map<std::string, std::string> out;
  for (const auto& pair : split(query, '&')) {
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    out[decode(pair.substr(0, eq))] = eq == std::string::npos ? "" : decode(pair.substr(eq + 1));
  }
  return out;
}

// Worse first: the cell of an app on a cluster shows its worst resource.
int badness(const std::string& status) {
  static const std::vector<std::string> order = {"Failed",  "Retrying", "NotPresent", "NotReady", "Unknown", "Pending",
                                                 "Skipped", "Deleted",  "Committed",  "Applied",  "Ready"};
  auto it = std::find(order.begin(), order.end(), status);
  return it == order.end() ? 4 : static_cast<int>(it - order.begin());  // an unlisted status counts as Unknown
}

json matrix(Context& ctx, const std::map<std::string, std::string>& p) {
  auto param = [&](const std::string& k, const std::string& dflt) {
    auto it = p.find(k);
    return it == p.end() || it->second.empty() ? dflt : it->second;
  };
  const std::string dig = param("dig", "");
  if (dig.empty()) fail(ErrorKind::invalid, "the matrix needs ?dig=<the DIG's anchor>");
  const std::string status = param("status", "deployed");
  if (status != "deployed" && status != "ready") fail(ErrorKind::invalid, "status must be deployed or ready, not '" + status + "'");
  const std::string by = param("by", "provider");
  if (by != "provider" && by != "label" && by != "cluster")
    fail(ErrorKind::invalid, "by must be provider, label or cluster, not '" + by + "'");
  const bool grouped = p.count("group") > 0;
  const std::string group = grouped ? p.at("group") : "";
  const long offset = std::stol(param("offset", "0"));
  const long limit = std::clamp(std::stol(param("limit", "100")), 1L, 500L);

  const resource::Anchor anchor = resource::parse_anchor(dig + "/status?status=" + status + "&output=all");
  if (!anchor.kind || anchor.kind->id != "deploymentIntentGroup")
    fail(ErrorKind::invalid, "'" + dig + "' is not a deployment intent group's anchor");
  json st = lifecycle::anchor_status(ctx.store(), ctx.runtime(), anchor);
  const char* field = status == "ready" ? "readyStatus" : "deployedStatus";

  // The groups of each cluster ("provider+cluster").
  std::map<std::string, std::vector<std::string>> labels;
  if (by == "label")
    for (const auto& l : ctx.store().list(resource::kind("clusterLabel")))
      labels[l.key.get("clusterProvider").value_or("") + "+" + l.key.get("cluster").value_or("")].push_back(
          l.key.parts.back().second);
  auto groups_of = [&](const std::string& provider, const std::string& cluster) -> std::vector<std::string> {
    if (by == "provider") return {provider};
    if (by == "cluster") return {provider + "+" + cluster};
    auto it = labels.find(provider + "+" + cluster);
    return it == labels.end() || it->second.empty() ? std::vector<std::string>{"(none)"} : it->second;
  };

  // app -> column -> status -> count, and every column's clusters.
  std::map<std::string, std::map<std::string, std::map<std::string, int>>> counts;
  std::map<std::string, std::set<std::string>> column_clusters;
  std::map<std::pair<std::string, std::string>, std::string> cells;  // (app, cluster) -> status, drill-down
  std::vector<std::string> apps;
  for (const auto& a : st.value("apps", json::array())) {
    const std::string app = a.value("name", "");
    apps.push_back(app);
    for (const auto& c : a.value("clusters", json::array())) {
      const std::string provider = c.value("clusterProvider", ""), name = c.value("cluster", "");
      std::string worst;
      for (const auto& r : c.value("resources", json::array())) {
        const std::string s = r.value(field, "Unknown");
        if (worst.empty() || badness(s) < badness(worst)) worst = s;
      }
      if (worst.empty()) continue;
      for (const auto& g : groups_of(provider, name)) {
        if (grouped) {
          if (g != group) continue;
          column_clusters[provider + "+" + name];
          cells[{app, provider + "+" + name}] = worst;
        } else {
          ++counts[app][g][worst];
          column_clusters[g].insert(provider + "+" + name);
        }
      }
    }
  }
  json out = {{"dig", dig}, {"status", status}, {"by", by}, {"apps", apps}};
  for (const char* k : {"deployedStatus", "readyStatus", "states"})
    if (st.contains(k)) out[k] = st[k];
  // One page of columns, `limit` from `offset`, in either form: by cluster
  // (or by label, with many labels) there may be thousands of them.
  std::vector<std::string> page;
  long i = 0;
  for (const auto& [c, unused] : column_clusters) {
    if (i++ < offset) continue;
    if (static_cast<long>(page.size()) >= limit) break;
    page.push_back(c);
  }
  out["total"] = column_clusters.size();
  out["offset"] = offset;
  if (grouped) out["group"] = group;
  json columns = json::array(), rows = json::array();
  for (const auto& c : page) {
    if (grouped) columns.push_back({{"name", c}});
    else columns.push_back({{"name", c}, {"clusters", column_clusters[c].size()}});
  }
  for (const auto& app : apps) {
    json row = {{"app", app}, {"cells", json::array()}};
    for (const auto& c : page) {
      if (!grouped) {
        row["cells"].push_back(json(counts[app][c]));
        continue;
      }
      auto it = cells.find({app, c});
      row["cells"].push_back(it == cells.end() ? json(nullptr) : json(it->second));
    }
    rows.push_back(std::move(row));
  }
  out["columns"] = columns;
  out["rows"] = rows;
  return out;
}

// What the command `argv` (with -o json) prints, run through the command
// table: the command's own code, not a copy of it. Its exit status is not an
// error (dig plan: 2 when there are changes; cluster check: 1 when a check
// failed): the JSON says so.
json command_json(Context& ctx, std::vector<std::string> argv) {
  argv.insert(argv.end(), {"-o", "json"});
  std::ostringstream out, err;
  Context c(out, err, ctx);
  c.quiet = true;
  auto inv = parse(argv, out);
  if (!inv || !inv->command) fail(ErrorKind::invalid, "'" + join(argv, " ") + "' is not a command");
  inv->command->handler(c, *inv);
  return json::parse(out.str());
}

std::string required(const std::map<std::string, std::string>& p, const std::string& key, const std::string& what) {
  auto it = p.find(key);
  if (it == p.end() || it->second.empty()) fail(ErrorKind::invalid, "this needs ?" + key + "=<" + what + ">");
  return it->second;
}

// `emco cluster check` of one provider's clusters.
json check(Context& ctx, const std::map<std::string, std::string>& p) {
  const std::string provider = required(p, "provider", "a cluster provider");
  std::vector<std::string> argv = {"cluster", "check"};
  for (const auto& c : ctx.store().list(resource::kind("cluster")))
    if (c.key.get("clusterProvider") == provider) argv.push_back(provider + "/" + c.key.parts.back().second);
  if (argv.size() == 2) fail(ErrorKind::not_found, "cluster provider '" + provider + "' has no clusters");
  return command_json(ctx, argv);
}

bool from_browser(const http::Request& req) {
  return !req.header("origin").empty() || !req.header("sec-fetch-site").empty() || !req.header("x-emco-client").empty();
}

}  // namespace

std::optional<http::Response> dashboard_public(const http::Request& req, const DashboardOptions& options) {
  if (req.method != "GET" && req.method != "HEAD") return std::nullopt;
  if (req.path == "/dashboard/config")
    return http::Response{.status = 200,
                          .body = json{{"actions", options.allow_actions}, {"token", options.token}}.dump() + "\n",
                          .headers = {{"Cache-Control", "no-store"}}};
  const std::string path = req.path == "/" ? "/index.html" : req.path;
  for (const auto& f : served()) {
    if (f.path != path) continue;
    http::Response r{.status = 200, .content_type = f.type, .body = std::string(f.data),
                     .headers = {{"ETag", f.etag}, {"Cache-Control", "no-cache"}, {"X-Content-Type-Options", "nosniff"},
                                 {"Content-Security-Policy", "default-src 'self'; img-src 'self' data:"}}};
    if (req.header("if-none-match") == f.etag) {
      r.status = 304;
      r.body.clear();
    }
    return r;
  }
  return std::nullopt;
}

std::optional<http::Response> refuse_browser_write(const http::Request& req, const DashboardOptions& options) {
  if (req.method == "GET" || req.method == "HEAD" || req.method == "OPTIONS" || !from_browser(req)) return std::nullopt;
  if (!options.allow_actions)
    return text(403, "the dashboard is read-only: start the server with 'emco serve --allow-actions' to allow " +
                         req.method + " from a browser");
  const std::string origin = req.header("origin");
  if (!origin.empty()) {
    const auto scheme = origin.find("://");
    const std::string host = scheme == std::string::npos ? origin : origin.substr(scheme + 3);
    if (host != req.header("host"))
      return text(403, "a " + req.method + " from the page of another site (Origin " + origin + ") is refused");
  }
  return std::nullopt;
}

std::optional<http::Response> dashboard_api(Context& ctx, const http::Request& req) {
  if (!starts_with(req.path, "/dashboard/")) return std::nullopt;
  if (req.method != "GET" && req.method != "HEAD") return text(405, req.method + " is not allowed on '" + req.path + "'");
  try {
    if (req.path == "/dashboard/overview") return json_reply(status::workspace_status(ctx.store()));
    if (req.path == "/dashboard/matrix") return json_reply(matrix(ctx, parameters(req.query)));
    if (req.path == "/dashboard/plan")
      return json_reply(command_json(ctx, {"dig", "plan", required(parameters(req.query), "dig", "the DIG's anchor")}));
    if (req.path == "/dashboard/check") return json_reply(check(ctx, parameters(req.query)));
  } catch (const Error& e) {
    return text(http_status(e.kind()), e.message());
  } catch (const std::logic_error&) {  // std::stol
    return text(400, "offset and limit are numbers");
  }
  return text(404, "404 page not found");
}

}  // namespace emco::cli::serve
