// Golden AppContexts of the shared upstream flows (../shared/emco-flows).
#include <catch2/catch.hpp>

#include "core/appcontext/appcontext.hpp"
#include "core/plan/plan.hpp"
#include "tests/plan/fixture.hpp"

using namespace emco;
using emco::test::Workspace;

namespace {

const char* k_kubeconfig = R"(apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: u
  user: {token: test}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
)";

plan::Options fixed(const std::string& id) {
  plan::Options o = test::plan_options();
  o.context_id = id;
  o.created = "2026-01-01T00:00:00.000Z";
  return o;
}

resource::Key dig_key(const std::string& project, const std::string& ca, const std::string& dig) {
  return resource::Key{{{"project", project}, {"compositeApp", ca}, {"compositeAppVersion", "v1"},
                        {"deploymentIntentGroup", dig}}};
}

// Packs the charts and profiles the flows name into `ws`'s directory.
std::string packages(Workspace& ws, const test::fs::path& flows) {
  auto charts = flows / "helm_charts";
  ws.pack(charts / "collectd" / "helm", "packages/collectd.tar.gz");
  ws.pack(charts / "collectd" / "profile", "packages/collectd_profile.tar.gz");
  ws.pack(charts / "http-client" / "helm", "packages/http-client.tar.gz");
  ws.pack(charts / "http-client" / "profile" / "network_policy_overrides" / "http-client-profile",
          "packages/http-client_profile.tar.gz");
  ws.pack(charts / "http-server" / "helm", "packages/http-server.tar.gz");
  ws.pack(charts / "http-server" / "profile" / "network_policy_overrides" / "http-server-profile",
          "packages/http-server_profile.tar.gz");
  ws.pack(charts / "operators-latest" / "helm", "packages/operator.tar.gz");
  ws.pack(charts / "operators-latest" / "profile", "packages/operator_profile.tar.gz");
  ws.write("kubeconfig", k_kubeconfig);
  return (ws.dir() / "packages").string();
}

#define REQUIRE_FLOWS(flows)                                                                   \
  auto flows = test::flows_dir();                                                              \
  if (flows.empty()) {                                                                         \
    WARN("../shared/emco-flows not found (set EMCO_FLOWS): flow golden tests skipped");        \
    return;                                                                                    \
  }

}  // namespace

TEST_CASE("test-update: collectd on cluster1, then on cluster2 after the app intent changes", "[plan][flows]") {
  REQUIRE_FLOWS(flows);
  Workspace ws;
  std::string pkgs = packages(ws, flows);
  auto values = ws.write("values.yaml", "ProjectName: proj-update-1\nClusterProvider: provider-update\n"
                                        "ClusterLabel: edge-cluster\nAdminCloud: default\n"
                                        "CompositeApp: test-composite-app\nCompositeProfile: test-composite-profile\n"
                                        "GenericPlacementIntent: test-placement-intent\n"
                                        "DeploymentIntent: test-deployment-intent\nIntent: intent\n"
                                        "PackagesPath: " + pkgs + "\nHostIP: 127.0.0.1\nRsyncPort: 9031\n"
                                        "GacPort: 9033\nOvnPort: 9032\nDtcPort: 9048\nNpsPort: 9049\n"
                                        "Clusters:\n- {Name: cluster1, KubeConfig: " + (ws.dir() / "kubeconfig").string() +
                                        "}\n- {Name: cluster2, KubeConfig: " + (ws.dir() / "kubeconfig").string() +
                                        "}\nApplist:\n- {Name: collectd, Cluster: [cluster1], UpdateCluster: [cluster2]}\n");
  auto dir = flows / "test-update";
  for (const char* f : {"00-controllers.yaml", "01-prerequisites.yaml", "02-deployment-intent.yaml"})
    ws.apply(dir / f, values);
  auto key = dig_key("proj-update-1", "test-composite-app", "test-deployment-intent");
  auto p1 = plan::make(ws.store(), key, fixed("1001"));
  CHECK(p1.renders == 1);
  REQUIRE(p1.context.apps.size() == 1);
  REQUIRE(p1.context.apps[0].clusters.size() == 1);
  CHECK(p1.context.apps[0].clusters[0].name == "provider-update+cluster1");
  test::check_golden("test-update-1.txt", test::dump(p1.context));

  ws.apply(dir / "04-update-deployment-intent.yaml", values);
  auto o2 = fixed("1002");
  o2.status_context_id = "1001";  // labels keep the status context across updates
  auto c2 = plan::build(ws.store(), key, o2);
  REQUIRE(c2.apps[0].clusters.size() == 1);
  CHECK(c2.apps[0].clusters[0].name == "provider-update+cluster2");
  test::check_golden("test-update-2.txt", test::dump(c2));

  auto d = appcontext::diff(p1.context, c2);
  REQUIRE(d.size() == 2);
  CHECK(d[0].cluster == "provider-update+cluster1");
  CHECK(d[0].presence == appcontext::ClusterDiff::Presence::removed);
  CHECK(d[1].presence == appcontext::ClusterDiff::Presence::added);
  CHECK(d[1].added.size() == d[0].removed.size());
  // Same status context, same labels: the content moved unchanged.
  CHECK(p1.context.apps[0].clusters[0].resources[0].hash() == c2.apps[0].clusters[0].resources[0].hash());
}

TEST_CASE("test-gac: every customization of the flow", "[plan][flows][gac]") {
  REQUIRE_FLOWS(flows);
  Workspace ws;
  std::string pkgs = packages(ws, flows);
  auto values = ws.write(
      "values.yaml",
      "ProjectName: proj1\nClusterProvider: provider1\nCluster: cluster1\nClusterLabel: edge-cluster1\n"
      "ClusterRef: lc-cl-1\nAdminCloud: default\nApp1: operator\nApp2: collectd\nKubeConfig: " +
          (ws.dir() / "kubeconfig").string() +
          "\nClusterIstioIngressGatewayAddress: 1.2.3.4\nHelmApp1: " + pkgs + "/operator.tar.gz\nHelmApp2: " + pkgs +
          "/collectd.tar.gz\nProfileApp1: " + pkgs + "/operator_profile.tar.gz\nProfileApp2: " + pkgs +
          "/collectd_profile.tar.gz\nCompositeProfile: collection-composite-profile\n"
          "GenericPlacementIntent: collection-placement-intent\nDeploymentIntent: collection-deployment-intent-group\n"
          "CompositeAppGac: gac-composite-app\nGacIntent: operator-gac-intent\nIstioIngressGatewayKvName: istioingress\n"
          "DatabaseAuthorizationKvName: database-auth\nHostIP: 127.0.0.1\nRsyncPort: 9031\nGacPort: 9033\n"
          "OvnPort: 9032\nDtcPort: 9048\nNpsPort: 9049\n");
  auto dir = flows / "test-gac";
  for (const char* f : {"controllers.yaml", "projects.yaml", "clusters.yaml", "logicalclouds.yaml", "apps.yaml",
                        "intents.yaml"})
    ws.apply(dir / f, values);
  // The flow's customizations name cluster "dummy" (ignored for label scope);
  // emco's store checks that referenced clusters exist, so register one
  // outside the logical cloud.
  ws.write("dummy.yaml", "version: emco/v2\nresourceContext:\n  anchor: cluster-providers/provider1/clusters\n"
                         "metadata:\n  name: dummy\nfile: kubeconfig\n");
  ws.apply(ws.dir() / "dummy.yaml");
  ws.apply(dir / "test-gac.yaml", values);
  auto key = dig_key("proj1", "gac-composite-app", "collection-deployment-intent-group");
  auto ctx = plan::build(ws.store(), key, fixed("2001"));
  REQUIRE(ctx.apps.size() == 1);
  REQUIRE(ctx.apps[0].clusters.size() == 1);
  const auto& c = ctx.apps[0].clusters[0];
  for (const char* k : {"netpol-web+networkpolicy", "netpol-db+networkpolicy", "cm-game+ConfigMap", "cm-team+ConfigMap",
                        "secret-user+Secret", "secret-auth+Secret"})
    CHECK(c.find(k) != nullptr);
  CHECK(c.find("netpol-db+networkpolicy")->text().find("role: database") != std::string::npos);
  CHECK(c.find("cm-team+ConfigMap")->text().find("team_size: \"10\"") != std::string::npos);
  CHECK(c.find("cm-team+ConfigMap")->text().find("game.properties:") != std::string::npos);
  CHECK(c.find("cm-game+ConfigMap")->text().find("info.json:") != std::string::npos);
  CHECK(c.find("secret-auth+Secret")->text().find("EXPIRATION:") != std::string::npos);
  CHECK(c.find("secret-auth+Secret")->text().find("USER_NAME: YWRtaW4=") != std::string::npos);
  CHECK(c.find("secret-user+Secret")->text().find("data-userexpiration.yaml:") != std::string::npos);
  test::check_golden("test-gac.txt", test::dump(ctx));

  // The strategic-merge flow on top: a new Deployment patched, the etcd StatefulSet patched.
  ws.apply(dir / "test-strategic-merge.yaml", values);
  auto sm = plan::build(ws.store(), key, fixed("2002"));
  const auto& c2 = sm.apps[0].clusters[0];
  REQUIRE(c2.find("deploy-web+Deployment"));
  CHECK(c2.find("deploy-web+Deployment")->text().find("redis-ctr") != std::string::npos);
  CHECK(c2.find("etcd+StatefulSet")->text().find("host1") != std::string::npos);
  test::check_golden("test-gac-strategic-merge.txt", test::dump(sm));
}

TEST_CASE("multi-cluster: three apps on three clusters", "[plan][flows]") {
  REQUIRE_FLOWS(flows);
  Workspace ws;
  std::string pkgs = packages(ws, flows);
  std::string kc = (ws.dir() / "kubeconfig").string();
  auto values = ws.write("values.yaml", "ProjectName: proj1\nClusterProvider: provider1\nClusterLabel: edge-cluster\n"
                                        "AdminCloud: default\nCompositeApp: composite-app\n"
                                        "CompositeProfile: composite-profile\nGenericPlacementIntent: placement-intent\n"
                                        "DeploymentIntent: deployment-intent\nIntent: intent\nPackagesPath: " + pkgs +
                                        "\nHostIP: 127.0.0.1\nRsyncPort: 9031\nGacPort: 9033\nOvnPort: 9032\n"
                                        "DtcPort: 9048\nNpsPort: 9049\nClusters:\n"
                                        "- {Name: cluster1, KubeConfig: " + kc + "}\n- {Name: cluster2, KubeConfig: " + kc +
                                        "}\n- {Name: cluster3, KubeConfig: " + kc + "}\n"
                                        "Applist:\n- {Name: collectd, Cluster: [cluster1, cluster2, cluster3]}\n"
                                        "- {Name: http-server, Cluster: [cluster1]}\n"
                                        "- {Name: http-client, Cluster: [cluster2, cluster3]}\n");
  auto dir = flows / "multi-cluster";
  for (const char* f : {"00-controllers.yaml", "01-prerequisites.yaml", "03-deployment-intent.yaml"})
    ws.apply(dir / f, values);
  auto p = plan::make(ws.store(), dig_key("proj1", "composite-app", "deployment-intent"), fixed("3001"));
  CHECK(p.renders == 3);  // one render per app, not per cluster
  REQUIRE(p.context.apps.size() == 3);
  const auto& collectd = *p.context.find_app("collectd");
  REQUIRE(collectd.clusters.size() == 3);
  CHECK(collectd.clusters[0].group == 1);
  CHECK(collectd.clusters[2].group == 3);
  // Identical content is shared across clusters, not copied.
  CHECK(collectd.clusters[0].resources[0].content.get() == collectd.clusters[2].resources[0].content.get());
  CHECK(p.context.find_app("http-client")->clusters.size() == 2);
  test::check_golden("multi-cluster.txt", test::dump(p.context));
}
