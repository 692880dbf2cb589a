#pragma once
// A workspace on disk registering the clusters of an in-process simulator
// (sim, RBAC enforced), with a project and a level-1 logical cloud
// "tenant" (namespace tenant-ns, user alice) whose children the test adds.

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/lifecycle/credentials.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/manifest/batch.hpp"
#include "core/manifest/manifest.hpp"
#include "core/store/store.hpp"
#include "sim/sim.hpp"
#include "plugins/builtin.hpp"
#include "tests/logical_cloud/objects.hpp"
#include "tests/shell.hpp"

namespace emco::lctest {

using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;

inline std::string doc(const std::string& anchor, const std::string& body) {
  return "---\nversion: emco/v2\nresourceContext: {anchor: " + anchor + "}\n" + body + "\n";
}

using test::Ran;
using test::sh;

struct World {
  sim::Simulator sim;
  fs::path dir;
  store::Workspace ws;
  std::unique_ptr<store::Store> st;
  std::vector<std::string> names;  // simulated cluster names

  static sim::SimOptions sim_options(int clusters) {
    sim::SimOptions o;
    o.clusters = clusters;
    o.ready_delay_ms = 50;
    o.finalize_delay_ms = 0;
    return o;
  }

  explicit World(int clusters = 2) : sim(sim_options(clusters)) {
    sim.start();
    names = sim.cluster_names();
    dir = fs::temp_directory_path() / ("emco-lc-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
    fs::create_directories(dir);
    bool created = false;
    ws = store::init_workspace(dir, created);
    st = store::Store::open(ws);
    std::string y = doc("cluster-providers", "metadata: {name: p}");
    for (const auto& n : names)
      y += doc("cluster-providers/p/clusters", "metadata: {name: " + n + "}\nfile: " + sim.kubeconfig_path(n));
    y += doc("projects", "metadata: {name: proj}");
    y += doc("projects/proj/logical-clouds",
             "metadata: {name: tenant}\nspec: {level: \"1\", namespace: tenant-ns, user: {userName: alice, type: "
             "certificate}, labels: {team: blue}}");
    apply(y);
  }
  ~World() {
    st.reset();
    sim.stop();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  manifest::BatchResult batch(manifest::Verb verb, const std::string& text) {
    manifest::ReadOptions ro;
    return manifest::run_batch(*st, verb, {manifest::parse_text(text, "test.yaml", dir.string(), ro)}, {});
  }
  void apply(const std::string& text) { batch(manifest::Verb::apply, text); }

  // The namespaced user permission every level-1 cloud needs.
  void permit_namespace() {
    apply(doc("projects/proj/logical-clouds/tenant/user-permissions",
              "metadata: {name: perm-ns}\nspec: {namespace: tenant-ns, apiGroups: ['', apps], resources: [configmaps, "
              "deployments, services, pods], verbs: [get, list, watch, create, update, patch, delete]}"));
  }
  // Two more: cluster-wide (ClusterRole) and another namespace (kube-system).
  void permit_privileged() {
    apply(doc("projects/proj/logical-clouds/tenant/user-permissions",
              "metadata: {name: perm-cluster}\nspec: {namespace: '', apiGroups: [''], resources: [nodes, namespaces], "
              "verbs: [get, list]}") +
          doc("projects/proj/logical-clouds/tenant/user-permissions",
              "metadata: {name: perm-kube}\nspec: {namespace: kube-system, apiGroups: [''], resources: [configmaps], "
              "verbs: [get]}"));
  }
  void quota() {
    apply(doc("projects/proj/logical-clouds/tenant/cluster-quotas", "metadata: {name: q1}\nspec: {pods: '10', configmaps: '20'}"));
  }
  void reference(const std::string& cluster) {
    apply(doc("projects/proj/logical-clouds/tenant/cluster-references",
              "metadata: {name: " + cluster + "}\nspec: {clusterProvider: p, cluster: " + cluster + "}"));
  }

  static resource::Key lc() { return resource::Key::parse("project=proj/logicalCloud=tenant"); }

  lifecycle::OperationOptions options() const {
    lifecycle::OperationOptions o;
    o.runtime = &plugins::builtin_runtime();
    o.timeout = 120s;
    o.engine.backoff_initial = 20ms;
    o.engine.backoff_max = 200ms;
    o.engine.poll = 50ms;
    return o;
  }
  lifecycle::OperationResult op(const std::string& name) {
    return lifecycle::run(*st, resource::kind("logicalCloud"), lc(), name, json::object(), system_clock(), options());
  }

  // The cloud's objects a cluster holds: "Kind namespace/name" for the kinds a
  // logical cloud creates, named after the cloud or in its namespace.
  std::set<std::string> objects(const std::string& cluster) { return test::logical_cloud_objects(sim, cluster, "tenant"); }
};

// What a standard cloud (perm-ns, quota q1) puts on each cluster.
inline std::set<std::string> standard_objects() {
  return {"Namespace /tenant-ns",
          "CertificateSigningRequest /tenant-tenant-ns-user-csr",
          "ResourceQuota tenant-ns/q1",
          "Role tenant-ns/tenant-role0",
          "RoleBinding tenant-ns/tenant-roleBinding0"};
}

}  // namespace emco::lctest
