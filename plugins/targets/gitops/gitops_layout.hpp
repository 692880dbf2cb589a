#pragma once
// EMCO's GitOps repository layout (../shared/spec/gitops.md) as pure
// functions: where each resource, status object and Flux/Anthos object goes,
// what it contains, and how one DIG operation becomes one commit per
// repository. Nothing here touches git; GitDelivery pushes the result.
//
// Layout, with <cl> = <provider>+<cluster> and <ctx> the AppContext id:
//   <base> = clusters/<cl>                 (Flux; Anthos level-0 contexts)
//          = namespaces/<ns>/<cl>          (Anthos level-1 DIG contexts)
//   <base>/context/<ctx>/app/<app>/<name>+<Kind>.yaml   resource, JSON text
//   <base>/context/<ctx>/app/<app>/<statusCtx>-<app>.yaml  ResourceBundleState
//   clusters/<cl>/<ctx>.yaml               Flux GitRepository
//   clusters/<cl>/kust<ctx>.yaml           Flux Kustomization
//   <base>/context/<ctx>/deployed          Anthos marker
//   <base>/context/<ctx>/app/<app>/repo-sync-<lc>+RepoSync.json
//                                          Anthos, logical-cloud contexts

#include <map>
#include <memory>
#include <set>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/targets/gitops/git_delivery.hpp"
#include "plugins/targets/gitops/git_remote.hpp"

namespace emco::gitops {

enum class GitOpsType { fluxcd, anthos };

// "fluxcd" (and its alias "fluxv2") or "anthos". "azureArcV2" and anything
// else throw Error(invalid); the message says what emco supports.
GitOpsType parse_gitops_type(std::string_view text);
std::string_view gitops_type_name(GitOpsType type);

// Flux timing in seconds, from the gitOpsResourceObject's kv.
struct FluxTiming {
  long sync_interval = 60;
  long retry_interval = 60;
  long timeout = 60;
};

// Reads "syncInterval", "retryInterval", "timeOut" (seconds as strings;
// missing or empty = 60). Throws Error(invalid) for non-numbers or values < 1.
FluxTiming flux_timing(const std::map<std::string, std::string>& kv);

// Go's time.Duration String() for whole seconds: 30 -> "30s", 60 -> "1m0s",
// 3661 -> "1h1m1s" (what Flux objects written by EMCO contain).
std::string go_duration(long seconds);

// The parts of an AppContext's meta the layout reads.
struct ContextMeta {
  std::string app_context_id;
  std::string namespace_name = "default";  // the AppContext namespace
  std::string level = "0";                 // "0" admin/DIG, "1" DIG on a standard logical cloud
  std::string logical_cloud;               // logical cloud name
  std::string logical_cloud_namespace;     // set on logical-cloud (not DIG) contexts

  // A level-1 logical cloud's own context (meta level "0" with a namespace).
  bool is_logical_cloud_context() const { return level == "0" && !logical_cloud_namespace.empty(); }
};

struct GitOpsCluster {
  std::string provider;
  std::string cluster;
  GitOpsType type = GitOpsType::fluxcd;
  GitRemoteSpec remote;   // url and branch also go into Flux/Anthos objects
  FluxTiming flux;

  std::string id() const { return provider + "+" + cluster; }
};

// <base> for this cluster and context (see the file comment).
std::string cluster_base_dir(const GitOpsCluster& cluster, const ContextMeta& meta);
// <base>/context/<ctx>/app/<app>
std::string app_dir(const GitOpsCluster& cluster, const ContextMeta& meta, std::string_view app);
// <app_dir>/<name>+<kind>.yaml
std::string resource_path(const GitOpsCluster& cluster, const ContextMeta& meta, std::string_view app,
                          std::string_view name, std::string_view kind);
// <app_dir>/<status_context_id>-<app>.yaml
std::string status_path(const GitOpsCluster& cluster, const ContextMeta& meta, std::string_view app,
                        std::string_view status_context_id);
// The same two paths relative to <base> (what a cluster's ChangeGroup holds):
// resource_path = <base>/ + resource_path_in_base, likewise status_path.
std::string resource_path_in_base(const ContextMeta& meta, std::string_view app, std::string_view name,
                                  std::string_view kind);
std::string status_path_in_base(const ContextMeta& meta, std::string_view app, std::string_view status_context_id);

// The file content for a (labelled) resource: compact JSON with sorted keys
// and Go's HTML escaping, metadata.namespace set to `namespace_name` when
// absent, except for kinds that have none (Flux: Namespace; Anthos:
// Namespace, ClusterRole, ClusterRoleBinding, RepoSync).
std::string resource_content(const nlohmann::json& object, GitOpsType type, const std::string& namespace_name);
// The ResourceBundleState file content (Anthos drops `status`).
std::string status_content(const nlohmann::json& object, GitOpsType type, const std::string& namespace_name);

// Flux objects for a cluster and context, path -> YAML: GitRepository and
// Kustomization, or for a logical-cloud context only a Kustomization in
// flux-system on the bootstrap source. Empty for Anthos clusters.
std::map<std::string, std::string> flux_objects(const GitOpsCluster& cluster, const ContextMeta& meta);

// Anthos objects: the `deployed` marker (content `stamp`) and, for
// logical-cloud contexts, one RepoSync per app. Empty for Flux clusters.
std::map<std::string, std::string> anthos_objects(const GitOpsCluster& cluster, const ContextMeta& meta,
                                                  const std::vector<std::string_view>& apps, const std::string& stamp);

enum class GitOpsOperationKind { instantiate, update, terminate };
std::string_view operation_name(GitOpsOperationKind kind);

// One resource of one app on one cluster. `object` is the labelled object;
// null means "remove this resource's file". Objects may be shared between
// clusters (serialized once per operation). The names are views of text
// that outlives the operation (a batch keeps one copy of each name: three
// million resources at 100,000 clusters share a few dozen names).
struct ResourceChange {
  std::string_view app;
  std::string_view name;
  std::string_view kind;
  std::shared_ptr<const nlohmann::json> object;
};

struct ClusterWork {
  GitOpsCluster cluster;
  std::vector<ResourceChange> resources;
  // app -> ResourceBundleState object (null = remove its file)
  std::map<std::string, std::shared_ptr<const nlohmann::json>> status;
};

// One DIG operation over many clusters and apps.
struct GitOpsOperation {
  GitOpsOperationKind kind = GitOpsOperationKind::instantiate;
  std::string project;
  std::string composite_app;
  std::string composite_app_version;
  std::string dig;
  long revision = 1;
  ContextMeta context;
  std::string status_context_id;   // empty = context.app_context_id
  std::string deployed_stamp;      // Anthos marker content; empty = the revision
  std::vector<ClusterWork> clusters;
  // Update: clusters ("<provider>+<cluster>") the new context no longer
  // places any app on; their Flux/Anthos objects and context directory go
  // in the update's commit, as a terminate removes them.
  std::set<std::string> departed;
};

// "emco: instantiate proj1/ca/v1/dig1 revision 1 (context 123)"
std::string commit_message(const GitOpsOperation& op);

// One commit per repository (clusters grouped by remote URL + branch, in
// order of first appearance):
//   instantiate  writes resources and status objects, the Flux objects or
//                the Anthos marker (and RepoSyncs); null objects delete
//   update       writes/deletes only the resources and status objects given,
//                and rewrites the Flux objects (unchanged content = no diff);
//                for `departed` clusters removes them as terminate does
//   terminate    deletes the given resources' and status files, the Flux or
//                Anthos objects, and the whole <base>/context/<ctx>/ directory
// Throws Error(invalid) for empty ids or names containing '/'.
struct RepositoryCommit {
  GitRemoteSpec remote;
  std::vector<std::string> cluster_ids;
  CommitRequest request;
};
// The commits with every change in request.changes (full paths).
std::vector<RepositoryCommit> plan_commits(const GitOpsOperation& op);
// The same commits with their changes made as GitDelivery builds them: in
// request.groups, one group per cluster (its cluster_base_dir), request.changes
// empty. The groups read `op`, which must outlive the requests.
std::vector<RepositoryCommit> plan_commit_groups(const GitOpsOperation& op);

}  // namespace emco::gitops
