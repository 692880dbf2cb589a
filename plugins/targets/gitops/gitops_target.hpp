#pragma once
// The sync engine's Target for GitOps clusters: delivery by committing EMCO's
// repository layout (gitops_layout.hpp) and pushing it (git_delivery.hpp).
//
// Every cluster's Target hands the engine the Batch of its repository (one
// per remote URL + branch, shared by all the clusters on it for as long as a
// Target of that repository lives, i.e. for one engine run). The engine
// stages each step there and calls commit() once every job ended: the batch
// then builds one GitOpsOperation covering all its clusters and apps and
// delivers it as one commit (none when nothing changed). A push that fails
// for a transport reason (unreachable, authentication, TLS, host key) is a
// transient TargetError, so the engine retries it and, at its deadline,
// leaves the operation pending; anything else (hook rejection, unrelated
// history, bad layout input) is permanent.
//
// Registration (spec/gitops.md §1): a cluster's spec.gitOps names a
// gitOpsType and two cluster sync objects of its provider; their kv lists
// are read by registered_cluster().

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "core/sync/target.hpp"
#include "plugins/targets/gitops/git_delivery.hpp"
#include "plugins/targets/gitops/gitops_layout.hpp"

namespace emco::gitops {

// The GitOps cluster `provider`+`cluster` of type `type` ("fluxcd", alias
// "fluxv2", or "anthos") from its sync objects' kv:
//   reference object (git access): url (required), branch (default "main"),
//     userName, gitToken (HTTPS token), password (HTTPS user/password),
//     sshKeyFile (+ sshPassphrase), knownHostsFile, caFile (PEM CA trusted
//     for https:// besides the system's); gitType and repoName are accepted
//     and not used. Files are read now; credentials apply only to the
//     transports that use them (https, ssh).
//   resource object (fluxcd): timeOut, syncInterval, retryInterval.
// Throws Error(invalid) naming the sync object for missing or bad values
// (never quoting a secret).
GitOpsCluster registered_cluster(const std::string& provider, const std::string& cluster, std::string_view type,
                                 const std::string& reference_name, const std::map<std::string, std::string>& reference_kv,
                                 const std::string& resource_name, const std::map<std::string, std::string>& resource_kv);

// The operation being delivered (kind, names, revision, context), asked on
// the engine's calling thread when a batch commits; `clusters` is ignored.
using DescribeOperation = std::function<GitOpsOperation()>;

class GitOpsTargets {
public:
  GitOpsTargets(std::filesystem::path cache_root, DescribeOperation describe, DeliveryOptions options = {});

  // The Target of `cluster` (see the file comment). `reader`, when the
  // cluster also has a kubeconfig, answers probe-free reads (state, read);
  // without it objects read as absent.
  std::shared_ptr<sync::Target> target(const GitOpsCluster& cluster, std::shared_ptr<sync::Target> reader);

  class RepositoryBatch;

private:
  std::shared_ptr<GitDelivery> m_delivery;
  DescribeOperation m_describe;
  std::mutex m_mutex;
  std::map<std::string, std::weak_ptr<RepositoryBatch>> m_batches;  // url '\n' branch -> batch of the live run
};

}  // namespace emco::gitops
