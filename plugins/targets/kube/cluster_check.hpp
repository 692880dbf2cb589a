#pragma once
// `emco cluster check`: for each cluster, in parallel (bounded), without
// changing anything on it:
//   kubeconfig   it resolves and its certificates/keys decode
//   reachable    GET /version answers (server version)
//   tls          the server certificate verified (or: verification disabled)
//   credentials  an authenticated request is accepted; expiry of the client
//                certificate or of the exec plugin's token
//   permissions  SelfSubjectAccessReview: create and delete of configmaps and
//                deployments.apps in the target namespace ("unknown" when the
//                server does not offer the review API)
// cli/ prints format_check_table() or check_results_json() and exits with
// check_exit_code().

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "plugins/targets/kube/kube_client.hpp"

namespace emco::kube {

struct ClusterCheckInput {
  std::string name;        // emco's cluster name, "provider+cluster"
  std::string kubeconfig;  // the stored kubeconfig text
  std::string context;     // empty: current-context
  std::string ns;          // target namespace; empty: the context's, else "default"
};

enum class CheckStatus { ok, warning, failed, unknown, skipped };
const char* status_name(CheckStatus status);  // "ok", "warning", "failed", "unknown", "skipped"

struct CheckItem {
  std::string name;  // "kubeconfig", "reachable", "tls", "credentials", "permissions"
  CheckStatus status = CheckStatus::skipped;
  std::string detail;  // what was found, or the error message
};

struct ClusterCheckResult {
  std::string cluster;
  std::string server;
  std::string version;  // gitVersion when reachable
  std::optional<std::chrono::system_clock::time_point> credential_expiry;
  std::string credential_kind;  // "client certificate", "exec token", "exec client certificate", "token", ...
  std::vector<CheckItem> checks;  // always the five above, in that order
  std::chrono::milliseconds duration{0};

  bool failed() const;  // any check failed
  const CheckItem& check(const std::string& name) const;
};

struct ClusterCheckOptions {
  size_t parallelism = 16;
  std::chrono::milliseconds timeout{5000};  // per request
  std::chrono::hours expiry_warning{24 * 7};  // credentials expiring sooner: warning
  KubeClientOptions client;  // timeouts are overridden by `timeout`
  HttpClientFactory factory;  // tests; default libcurl
};

// Checks every cluster; results in input order.
std::vector<ClusterCheckResult> check_clusters(const std::vector<ClusterCheckInput>& clusters,
                                               const ClusterCheckOptions& options = {});

// One cluster (what check_clusters runs on each worker).
ClusterCheckResult check_cluster(const ClusterCheckInput& cluster, const ClusterCheckOptions& options = {});

// A fixed-width table, one row per cluster:
// CLUSTER  SERVER  VERSION  REACHABLE  TLS  CREDENTIALS  EXPIRES  PERMISSIONS
// followed by one "cluster: check: detail" line per failed or warning check.
std::string format_check_table(const std::vector<ClusterCheckResult>& results);

// {"clusters":[{"cluster":..,"server":..,"version":..,"ok":..,"credentialExpiry":..,
//   "checks":{"reachable":{"status":..,"detail":..},..}}],"failed":N}
std::string check_results_json(const std::vector<ClusterCheckResult>& results);

// 0 when no cluster failed a check, else 1 (ExitCode::failed).
int check_exit_code(const std::vector<ClusterCheckResult>& results);

}  // namespace emco::kube
