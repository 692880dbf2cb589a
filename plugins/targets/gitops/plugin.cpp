// The GitOps delivery plugin: registrations read from the clusters' sync
// objects, one GitOpsTargets (one batch per repository) per drive.

#include "plugins/targets/gitops/plugin.hpp"

#include <map>
#include <mutex>

#include "core/store/store.hpp"
#include "core/util/error.hpp"
#include "plugins/targets/gitops/gitops_target.hpp"
#include "plugins/targets/gitops/libgit2_init.hpp"

namespace emco::plugins::gitops {

using namespace emco::gitops;

namespace {

GitOpsOperation operation_of(const lifecycle::OperationInfo& info) {
  GitOpsOperation op;
  using K = lifecycle::OperationInfo::Kind;
  op.kind = info.kind == K::instantiate ? GitOpsOperationKind::instantiate
            : info.kind == K::terminate ? GitOpsOperationKind::terminate
                                        : GitOpsOperationKind::update;
  op.project = info.project;
  op.composite_app = info.composite_app;
  op.composite_app_version = info.composite_app_version;
  op.dig = info.dig;
  op.revision = info.revision;
  op.context.app_context_id = info.status_context;
  if (!info.ns.empty()) op.context.namespace_name = info.ns;
  if (!info.level.empty()) op.context.level = info.level;
  op.context.logical_cloud = info.logical_cloud;
  op.context.logical_cloud_namespace = info.logical_cloud_namespace;
  op.departed = info.departed;
  return op;
}

// One drive: the registrations it met (fleets share a few: each is checked
// once) and the GitOpsTargets whose batches commit once per repository.
class Session {
public:
  Session(const lifecycle::DriveContext& drive, lifecycle::ClusterTargets direct)
      : m_targets(drive.cache_dir / "git", [describe = drive.operation] { return operation_of(describe()); }),
        m_direct(std::move(direct)) {}

  std::shared_ptr<sync::Target> target(const lifecycle::ClusterAccess& c, const std::string& ns) {
    GitOpsCluster registration = registered(c);
    // GitOps and a kubeconfig: deliver by git, read back through the kubeconfig.
    std::shared_ptr<sync::Target> reader;
    if (!c.kubeconfig.empty() && m_direct) reader = m_direct(c, ns);
    return m_targets.target(registration, reader);
  }

private:
  GitOpsCluster registered(const lifecycle::ClusterAccess& c) {
    if (!c.error.empty()) fail(ErrorKind::invalid, "GitOps cluster '" + c.id + "' cannot be delivered to: " + c.error);
    const std::string shared = c.provider + '\n' + c.gitops_type + '\n' + c.gitops_reference_object + '\n' +
                               c.gitops_resource_object;
    std::lock_guard lock(m_mutex);
    auto it = m_registrations.find(shared);
    if (it == m_registrations.end()) {
      Registration r;
      try {
        r.cluster = registered_cluster(c.provider, c.cluster, c.gitops_type, c.gitops_reference_object, c.reference_kv,
                                       c.gitops_resource_object, c.resource_kv);
      } catch (const Error& e) {
        r.error = e.message();
      }
      it = m_registrations.emplace(shared, std::move(r)).first;
    }
    if (!it->second.error.empty())
      fail(ErrorKind::invalid, "GitOps cluster '" + c.id + "' cannot be delivered to: " + it->second.error);
    GitOpsCluster out = it->second.cluster;
    out.cluster = c.cluster;
    return out;
  }

  struct Registration {
    GitOpsCluster cluster;
    std::string error;
  };
  GitOpsTargets m_targets;
  lifecycle::ClusterTargets m_direct;
  std::mutex m_mutex;
  std::map<std::string, Registration> m_registrations;
};

class GitOpsDelivery : public lifecycle::DeliveryMechanism {
public:
  std::string name() const override { return "gitops"; }
  bool delivers(const lifecycle::ClusterAccess& c) const override { return !c.gitops_type.empty(); }
  lifecycle::ClusterTargets session(const lifecycle::DriveContext& drive,
                                    const lifecycle::ClusterTargets& direct) const override {
    auto s = std::make_shared<Session>(drive, direct);
    return [s](const lifecycle::ClusterAccess& c, const std::string& ns) { return s->target(c, ns); };
  }
  // libgit2's initialisation parses the system's CA bundle (mbedTLS in
  // Debian's build) whatever the remote: about 59M instructions, 15 ms,
  // before the first commit. GitOps clusters name a cluster sync object, so
  // a workspace without one has none to deliver to.
  void warm_up(const store::Store& st) const override {
    if (!st.list(resource::kind("clusterSyncObject")).empty()) gitops::warm_up_libgit2();
  }
};

}  // namespace

void install(lifecycle::Runtime& runtime) {
  runtime.delivery.push_back(std::make_unique<GitOpsDelivery>());
  runtime.plugins.push_back({.name = "gitops",
                             .summary = "delivery through a git repository that Flux, Anthos or Azure Arc applies",
                             .services = {"rsync"},
                             .runs = true});
}

}  // namespace emco::plugins::gitops
