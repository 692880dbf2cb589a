#include "plugins/targets/kube/cluster_check.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "core/util/parallel.hpp"
#include "core/util/strings.hpp"
#include "plugins/targets/kube/pem.hpp"

namespace emco::kube {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

const char* const k_check_names[] = {"kubeconfig", "reachable", "tls", "credentials", "permissions"};

CheckItem& item(ClusterCheckResult& r, const char* name) {
  for (auto& c : r.checks)
    if (c.name == name) return c;
  return r.checks.front();
}

void set(ClusterCheckResult& r, const char* name, CheckStatus status, std::string detail) {
  CheckItem& c = item(r, name);
  c.status = status;
  c.detail = std::move(detail);
}

std::string date_of(std::chrono::system_clock::time_point t) { return format_rfc3339(t).substr(0, 10); }

// One SelfSubjectAccessReview; nullopt when the API does not offer it.
std::optional<bool> may(KubeClient& client, const std::string& verb, const std::string& group,
                        const std::string& resource, const std::string& ns, std::chrono::milliseconds timeout,
                        int& http_status) {
  json review = {{"apiVersion", "authorization.k8s.io/v1"},
                 {"kind", "SelfSubjectAccessReview"},
                 {"spec", {{"resourceAttributes", {{"namespace", ns}, {"verb", verb}, {"group", group}, {"resource", resource}}}}}};
  HttpResponse r = client.send("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review.dump(),
                               "application/json", "application/json", timeout);
  http_status = r.status;
  if (r.status == 401) client.raise(r, "selfsubjectaccessreviews");
  if (r.status != 200 && r.status != 201) return std::nullopt;
  json answer = json::parse(r.body, nullptr, false);
  if (!answer.is_object() || !answer.contains("status") || !answer["status"].is_object()) return std::nullopt;
  return answer["status"].value("allowed", false);
}

void check_credentials_and_permissions(ClusterCheckResult& r, KubeClient& client, const std::string& ns,
                                       const ClusterCheckOptions& options) {
  struct Want {
    const char* verb;
    const char* group;
    const char* resource;
  };
  const Want wants[] = {{"create", "", "configmaps"},
                        {"delete", "", "configmaps"},
                        {"create", "apps", "deployments"},
                        {"delete", "apps", "deployments"}};
  std::vector<std::string> denied;
  bool unknown = false;
  int status = 0;
  for (const auto& w : wants) {
    std::optional<bool> allowed = may(client, w.verb, w.group, w.resource, ns, options.timeout, status);
    if (!allowed) {
      unknown = true;
      break;
    }
    if (!*allowed) denied.push_back(std::string(w.verb) + " " + w.resource + (*w.group ? std::string(".") + w.group : ""));
  }
  if (unknown) {
    // Without the review API, an authenticated read still proves the credentials.
    HttpResponse probe = client.send("GET", "/api/v1/namespaces/" + ns, {}, {}, "application/json", options.timeout);
    if (probe.status == 401) client.raise(probe, "namespaces '" + ns + "'");
    set(r, "permissions", CheckStatus::unknown,
        status == 404 ? "the server does not offer SelfSubjectAccessReview"
                      : "SelfSubjectAccessReview answered HTTP " + std::to_string(status));
  } else if (!denied.empty()) {
    set(r, "permissions", CheckStatus::failed, "not allowed in namespace '" + ns + "': " + join(denied, ", "));
  } else {
    set(r, "permissions", CheckStatus::ok, "create and delete allowed in namespace '" + ns + "'");
  }
}

}  // namespace

const char* status_name(CheckStatus status) {
  switch (status) {
    case CheckStatus::ok: return "ok";
    case CheckStatus::warning: return "warning";
    case CheckStatus::failed: return "failed";
    case CheckStatus::unknown: return "unknown";
    case CheckStatus::skipped: return "skipped";
  }
  return "unknown";
}

bool ClusterCheckResult::failed() const {
  return std::any_of(checks.begin(), checks.end(), [](const CheckItem& c) { return c.status == CheckStatus::failed; });
}

const CheckItem& ClusterCheckResult::check(const std::string& name) const {
  for (const auto& c : checks)
    if (c.name == name) return c;
  throw std::out_of_range("no check named " + name);
}

ClusterCheckResult check_cluster(const ClusterCheckInput& in, const ClusterCheckOptions& options) {
  auto start = Clock::now();
  ClusterCheckResult r;
  r.cluster = in.name;
  for (const char* name : k_check_names) r.checks.push_back({name, CheckStatus::skipped, {}});
  auto finish = [&] {
    r.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    return r;
  };

  ClusterAccess access;
  KubeconfigSummary summary;
  try {
    access = resolve_access(parse_kubeconfig(in.kubeconfig, in.name, {}), in.context, in.name);
    r.server = access.server;
    summary = validate_access(access);
    set(r, "kubeconfig", summary.warnings.empty() ? CheckStatus::ok : CheckStatus::warning,
        summary.warnings.empty() ? "context '" + summary.context + "', auth " + summary.auth : join(summary.warnings, "; "));
  } catch (const Error& e) {
    set(r, "kubeconfig", CheckStatus::failed, e.message());
    return finish();
  }
  const std::string ns = !in.ns.empty() ? in.ns : !access.ns.empty() ? access.ns : "default";

  KubeClientOptions copts = options.client;
  copts.request_timeout = options.timeout;
  copts.connect_timeout = std::min(copts.connect_timeout, options.timeout);
  copts.max_retries = 1;
  KubeClient client(access, copts, options.factory);

  // Reachability and TLS.
  try {
    json v = client.server_version(options.timeout);
    r.version = v.value("gitVersion", "");
    set(r, "reachable", CheckStatus::ok, r.version.empty() ? "answered" : "version " + r.version);
  } catch (const KubeError& e) {
    if (e.category() == KubeErrorCategory::tls) {
      set(r, "reachable", CheckStatus::ok, "connected");
      set(r, "tls", CheckStatus::failed, e.message());
      return finish();
    }
    if (e.http_status() == 0) {
      set(r, "reachable", CheckStatus::failed, e.message());
      return finish();
    }
    // An HTTP error on /version: the server is there; go on with the checks.
    set(r, "reachable", CheckStatus::warning, e.message());
  } catch (const Error& e) {  // the exec plugin failed before anything was sent
    set(r, "reachable", CheckStatus::unknown, "not checked: no credentials");
    set(r, "credentials", CheckStatus::failed, e.message());
    return finish();
  }
  if (starts_with(to_lower(access.server), "http://"))
    set(r, "tls", CheckStatus::warning, "plain http: no TLS");
  else if (access.insecure_skip_tls_verify)
    set(r, "tls", CheckStatus::warning, "verification disabled (insecure-skip-tls-verify)");
  else
    set(r, "tls", CheckStatus::ok, access.ca_pem.empty() ? "verified by the system trust store" : "verified by the kubeconfig's CA");

  // Credentials and their expiry, then permissions (which also proves the
  // credentials are accepted).
  try {
    Credentials creds = client.credentials();
    std::optional<std::chrono::system_clock::time_point> expiry;
    if (access.exec) {
      if (!creds.token.empty()) {
        r.credential_kind = "exec token";
        expiry = creds.expiry;
      } else {
        r.credential_kind = "exec client certificate";
        expiry = inspect_certificates(creds.client_cert_pem, "exec plugin's client certificate").not_after;
        if (creds.expiry && (!expiry || *creds.expiry < *expiry)) expiry = creds.expiry;
      }
    } else if (!creds.client_cert_pem.empty()) {
      r.credential_kind = "client certificate";
      expiry = summary.client_cert_not_after;
    } else if (!creds.token.empty()) {
      r.credential_kind = "token";
    } else if (!creds.username.empty()) {
      r.credential_kind = "basic";
    } else {
      r.credential_kind = "none";
    }
    r.credential_expiry = expiry;
    check_credentials_and_permissions(r, client, ns, options);
    auto now = std::chrono::system_clock::now();
    if (expiry && *expiry < now) {
      set(r, "credentials", CheckStatus::failed, r.credential_kind + " expired on " + format_rfc3339(*expiry));
    } else if (expiry && *expiry < now + options.expiry_warning) {
      set(r, "credentials", CheckStatus::warning, r.credential_kind + " expires on " + format_rfc3339(*expiry));
    } else {
      set(r, "credentials", CheckStatus::ok,
          r.credential_kind + " accepted" + (expiry ? ", expires on " + format_rfc3339(*expiry) : ""));
    }
  } catch (const KubeError& e) {
    if (e.category() == KubeErrorCategory::unauthorized) {
      set(r, "credentials", CheckStatus::failed, e.message());
    } else if (e.http_status() == 0) {
      set(r, "reachable", CheckStatus::failed, e.message());
    } else {
      set(r, "credentials", CheckStatus::unknown, e.message());
    }
  } catch (const Error& e) {  // the exec plugin failed
    set(r, "credentials", CheckStatus::failed, e.message());
  }
  return finish();
}

std::vector<ClusterCheckResult> check_clusters(const std::vector<ClusterCheckInput>& clusters,
                                               const ClusterCheckOptions& options) {
  std::vector<ClusterCheckResult> results(clusters.size());
  parallel_for(clusters.size(), options.parallelism,
               [&](size_t i) { results[i] = check_cluster(clusters[i], options); });
  return results;
}

std::string format_check_table(const std::vector<ClusterCheckResult>& results) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"CLUSTER", "SERVER", "VERSION", "REACHABLE", "TLS", "CREDENTIALS", "EXPIRES", "PERMISSIONS"});
  for (const auto& r : results) {
    rows.push_back({r.cluster, r.server.empty() ? "-" : r.server, r.version.empty() ? "-" : r.version,
                    status_name(r.check("reachable").status), status_name(r.check("tls").status),
                    status_name(r.check("credentials").status),
                    r.credential_expiry ? date_of(*r.credential_expiry) : "-",
                    status_name(r.check("permissions").status)});
    if (r.check("kubeconfig").status == CheckStatus::failed) rows.back()[3] = "-";
  }
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
  for (const auto& r : results)
    for (const auto& c : r.checks)
      if (c.status == CheckStatus::failed || c.status == CheckStatus::warning)
        out += r.cluster + ": " + c.name + ": " + c.detail + "\n";
  return out;
}

std::string check_results_json(const std::vector<ClusterCheckResult>& results) {
  json doc = {{"clusters", json::array()}, {"failed", 0}};
  int failed = 0;
  for (const auto& r : results) {
    json checks = json::object();
    for (const auto& c : r.checks) checks[c.name] = {{"status", status_name(c.status)}, {"detail", c.detail}};
    json entry = {{"cluster", r.cluster},
                  {"server", r.server},
                  {"version", r.version},
                  {"ok", !r.failed()},
                  {"credential", r.credential_kind},
                  {"credentialExpiry", r.credential_expiry ? json(format_rfc3339(*r.credential_expiry)) : json()},
                  {"durationMs", r.duration.count()},
                  {"checks", checks}};
    doc["clusters"].push_back(entry);
    if (r.failed()) ++failed;
  }
  doc["failed"] = failed;
  return doc.dump(2) + "\n";
}

int check_exit_code(const std::vector<ClusterCheckResult>& results) {
  return std::any_of(results.begin(), results.end(), [](const ClusterCheckResult& r) { return r.failed(); }) ? 1 : 0;
}

}  // namespace emco::kube
