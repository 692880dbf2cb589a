// ovnaction: the Multus and nfn-network annotations on every supported
// workload kind, merged with existing values, the cluster kv switches, and
// interface intents on networks a cluster lacks.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/plan/object.hpp"
#include "core/plan/plan.hpp"
#include "core/util/error.hpp"
#include "tests/plan/world.hpp"

using namespace emco;
using test::ClusterSpec;

namespace {

const std::string k_nci = "projects/p/composite-apps/ca/v1/deployment-intent-groups/dig/network-controller-intent";

std::string doc(const std::string& anchor, const std::string& body) {
  return "---\nversion: emco/v2\nresourceContext:\n  anchor: " + anchor + "\n" + body;
}

// A chart with one workload of every kind ovnaction knows, some with annotations already.
void write_fw_chart(test::Workspace& ws) {
  std::string d = "charts/fw/";
  ws.write(d + "Chart.yaml", "apiVersion: v2\nname: fw\nversion: 0.1.0\n");
  ws.write(d + "values.yaml", "{}\n");
  auto tmpl = [](const std::string& annotations) {
    return "  template:\n    metadata:\n      labels: {app: fw}\n" + annotations +
           "    spec:\n      containers:\n      - name: fw\n        image: busybox\n";
  };
  ws.write(d + "templates/deploy.yaml",
           "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: fw\nspec:\n  selector:\n"
           "    matchLabels: {app: fw}\n" +
               tmpl("      annotations:\n        k8s.v1.cni.cncf.io/networks: \"sriov/net1@if9, other\"\n"
                    "        k8s.plugin.opnfv.org/nfn-network: '{\"type\":\"calico\",\"interface\":["
                    "{\"interface\":\"eth1\",\"name\":\"protected\",\"defaultGateway\":\"true\",\"ipAddress\":\"1.1.1.1\"},"
                    "{\"interface\":\"eth9\",\"name\":\"keep\",\"defaultGateway\":\"false\"}]}'\n"));
  ws.write(d + "templates/pod.yaml",
           "apiVersion: v1\nkind: Pod\nmetadata:\n  name: probe\n  namespace: lab\n  annotations:\n"
           "    k8s.v1.cni.cncf.io/networks: '[{\"name\":\"macvlan\",\"ips\":[\"10.0.0.9\"]},{\"name\":\"ovn-networkobj\"}]'\n"
           "spec:\n  containers:\n  - name: p\n    image: busybox\n");
  ws.write(d + "templates/ds.yaml",
           "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: agent\nspec:\n  selector:\n"
           "    matchLabels: {app: fw}\n" + tmpl(""));
  ws.write(d + "templates/cron.yaml",
           "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: rotate\nspec:\n  schedule: \"@daily\"\n"
           "  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: Never\n"
           "          containers:\n          - name: r\n            image: busybox\n");
  ws.write(d + "templates/custom.yaml",
           "apiVersion: example.com/v1\nkind: Router\nmetadata:\n  name: edge\n  namespace: net\n  annotations:\n"
           "    untouched: \"yes\"\nspec:\n" + tmpl("      annotations:\n        k8s.v1.cni.cncf.io/networks: '[{\"name\":\"a\"}]'\n"));
  ws.write(d + "templates/svc.yaml",
           "apiVersion: v1\nkind: Service\nmetadata:\n  name: fw\nspec:\n  ports:\n  - port: 80\n");
}

std::string network_doc(const std::string& cluster, const std::string& name, const std::string& subnet) {
  return doc("cluster-providers/p1/clusters/" + cluster + "/networks",
             "metadata:\n  name: " + name + "\nspec:\n  cniType: ovn4nfv\n  ipv4Subnets:\n  - subnet: " + subnet +
                 "\n    name: subnet1\n    gateway: " + subnet.substr(0, subnet.rfind('.')) + ".1/24\n");
}

std::string workload_doc(const std::string& name, const std::string& resource, const std::string& type) {
  return doc(k_nci + "/nci/workload-intents",
             "metadata:\n  name: " + name + "\nspec:\n  app: fw\n  workloadResource: " + resource + "\n  type: " + type +
                 "\n");
}

std::string interface_doc(const std::string& workload, const std::string& name, const std::string& spec) {
  return doc(k_nci + "/nci/workload-intents/" + workload + "/interfaces", "metadata:\n  name: " + name + "\nspec:\n" + spec);
}

// fw on p1+c1 (Multus) and p1+c2 (Nodus for all interfaces), both with networks protected and emco.
void world(test::Workspace& ws) {
  ws.write("kubeconfig", "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n");
  write_fw_chart(ws);
  test::write_profile(ws, "profile");
  std::vector<ClusterSpec> clusters = {{"p1", "c1", {}}, {"p1", "c2", {}}};
  std::string y = doc("controllers", "metadata:\n  name: ovnaction\nspec:\n  type: action\n  priority: 1\n");
  y += test::world_yaml(clusters, {{"fw", "    allOf:\n    - clusterProvider: p1\n      cluster: c1\n"
                                          "    - clusterProvider: p1\n      cluster: c2\n"}},
                        "    ovnaction: nci\n");
  for (const char* c : {"c1", "c2"}) {
    y += network_doc(c, "protected", "192.168.20.0/24");
    y += network_doc(c, "emco", "10.10.20.0/24");
  }
  y += doc("cluster-providers/p1/clusters/c2/kv-pairs",
           "metadata:\n  name: cni\nspec:\n  kv:\n  - CNI-Networking-Nodus-CNI-For-all-interfaces: \"true\"\n");
  y += doc(k_nci, "metadata:\n  name: nci\n");
  const std::string eth1 = "  interface: eth1\n  name: protected\n  ipAddress: 192.168.20.2\n";
  const std::string eth2 = "  interface: eth2\n  name: emco\n  defaultGateway: \"false\"\n  macAddress: \"52:54:00:12:34:56\"\n";
  for (auto [w, res, type] : {std::tuple{"w-deploy", "fw", "Deployment"}, {"w-pod", "probe", "Pod"},
                              {"w-ds", "agent", "DaemonSet"}, {"w-cron", "rotate", "CronJob"},
                              {"w-custom", "edge", "Router"}, {"w-absent", "nothing", "Deployment"}}) {
    y += workload_doc(w, res, type);
    y += interface_doc(w, "if1", eth1) + interface_doc(w, "if2", eth2);
  }
  ws.apply_text(y);
}

plan::Options fixed() {
  plan::Options o = test::plan_options();
  o.context_id = "9";
  return o;
}

nlohmann::json object(const appcontext::AppContext& ctx, const std::string& cluster, const std::string& r) {
  const auto* res = ctx.apps.at(0).find_cluster(cluster)->find(r);
  REQUIRE(res);
  return controllers::parse_object(res->text(), r);
}

std::string annotation(const nlohmann::json& metadata, const std::string& key) {
  return metadata.at("annotations").value(key, std::string("<none>"));
}

}  // namespace

TEST_CASE("ovnaction annotates every supported workload kind", "[plan][ovnaction]") {
  test::Workspace ws;
  world(ws);
  auto ctx = plan::build(ws.store(), test::world_dig(), fixed());
  const std::string nfn_new =
      "{\"type\":\"ovn4nfv\",\"interface\":[{\"interface\":\"eth1\",\"name\":\"protected\",\"defaultGateway\":\"false\","
      "\"ipAddress\":\"192.168.20.2\"},{\"interface\":\"eth2\",\"name\":\"emco\",\"defaultGateway\":\"false\","
      "\"macAddress\":\"52:54:00:12:34:56\"}]}";
  const std::string multus_new = "[{\"name\":\"ovn-networkobj\",\"namespace\":\"default\"}]";

  // Deployment: existing text-form networks kept (namespace from the template: none), ovn-networkobj added;
  // the existing eth1/protected entry updated in place, eth9 kept, eth2 appended, type forced to ovn4nfv.
  auto d = object(ctx, "p1+c1", "fw+Deployment")["spec"]["template"]["metadata"];
  CHECK(annotation(d, "k8s.v1.cni.cncf.io/networks") ==
        "[{\"name\":\"net1\",\"namespace\":\"sriov\",\"interface\":\"if9\"},{\"name\":\"other\"},"
        "{\"name\":\"ovn-networkobj\",\"namespace\":\"default\"}]");
  CHECK(annotation(d, "k8s.plugin.opnfv.org/nfn-network") ==
        "{\"type\":\"ovn4nfv\",\"interface\":[{\"interface\":\"eth1\",\"name\":\"protected\",\"defaultGateway\":\"false\","
        "\"ipAddress\":\"192.168.20.2\"},{\"interface\":\"eth9\",\"name\":\"keep\",\"defaultGateway\":\"false\"},"
        "{\"interface\":\"eth2\",\"name\":\"emco\",\"defaultGateway\":\"false\",\"macAddress\":\"52:54:00:12:34:56\"}]}");

  // Pod: on its own metadata; ovn-networkobj already there, missing namespaces become the Pod's.
  auto p = object(ctx, "p1+c1", "probe+Pod")["metadata"];
  CHECK(annotation(p, "k8s.v1.cni.cncf.io/networks") ==
        "[{\"name\":\"macvlan\",\"namespace\":\"lab\",\"ips\":[\"10.0.0.9\"]},{\"name\":\"ovn-networkobj\",\"namespace\":\"lab\"}]");
  CHECK(annotation(p, "k8s.plugin.opnfv.org/nfn-network") == nfn_new);

  auto ds = object(ctx, "p1+c1", "agent+DaemonSet")["spec"]["template"]["metadata"];
  CHECK(annotation(ds, "k8s.v1.cni.cncf.io/networks") == multus_new);
  CHECK(annotation(ds, "k8s.plugin.opnfv.org/nfn-network") == nfn_new);
  auto cj = object(ctx, "p1+c1", "rotate+CronJob")["spec"]["jobTemplate"]["spec"]["template"]["metadata"];
  CHECK(annotation(cj, "k8s.plugin.opnfv.org/nfn-network") == nfn_new);

  // Another object with spec.template: namespace defaults to the object's; its own annotations untouched.
  auto r = object(ctx, "p1+c1", "edge+Router");
  CHECK(annotation(r["spec"]["template"]["metadata"], "k8s.v1.cni.cncf.io/networks") ==
        "[{\"name\":\"a\",\"namespace\":\"net\"},{\"name\":\"ovn-networkobj\",\"namespace\":\"default\"}]");
  CHECK(r["metadata"]["annotations"].size() == 1);

  // p1+c2 runs Nodus for all interfaces: no Multus annotation, nfn-network still added.
  auto ds2 = object(ctx, "p1+c2", "agent+DaemonSet")["spec"]["template"]["metadata"];
  CHECK(annotation(ds2, "k8s.v1.cni.cncf.io/networks") == "<none>");
  CHECK(annotation(ds2, "k8s.plugin.opnfv.org/nfn-network") == nfn_new);
  auto d2 = object(ctx, "p1+c2", "fw+Deployment")["spec"]["template"]["metadata"];
  CHECK(annotation(d2, "k8s.v1.cni.cncf.io/networks") == "sriov/net1@if9, other");

  // The Service is no workload intent's: unchanged.
  CHECK(object(ctx, "p1+c1", "fw+Service")["metadata"].value("annotations", nlohmann::json()).is_null());
  test::check_golden("ovnaction.txt", test::dump(ctx));
}

TEST_CASE("ovnaction: the multi-CNI wrapper switch", "[plan][ovnaction]") {
  test::Workspace ws;
  world(ws);
  ws.apply_text(doc("cluster-providers/p1/clusters/c1/kv-pairs",
                    "metadata:\n  name: cni\nspec:\n  kv:\n  - CNI-Networking-Multi-CNI-Wrapper: Danm\n"));
  auto ctx = plan::build(ws.store(), test::world_dig(), fixed());
  auto ds = object(ctx, "p1+c1", "agent+DaemonSet")["spec"]["template"]["metadata"];
  CHECK(annotation(ds, "k8s.v1.cni.cncf.io/networks") == "<none>");
  CHECK(annotation(ds, "k8s.plugin.opnfv.org/nfn-network") != "<none>");
}

TEST_CASE("ovnaction errors name the document", "[plan][ovnaction][errors]") {
  test::Workspace ws;
  world(ws);
  SECTION("an interface on a network the cluster lacks") {
    ws.apply_text(interface_doc("w-ds", "if3", "  interface: eth3\n  name: unprotected\n"));
    try {
      plan::build(ws.store(), test::world_dig(), test::plan_options());
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::invalid);
      CHECK(e.message().find("workload-intents/w-ds/interfaces/if3") != std::string::npos);
      CHECK(e.message().find("network 'unprotected' does not exist on cluster 'p1+c1'") != std::string::npos);
      CHECK(e.hint().find("cluster-providers/p1/clusters/c1/networks") != std::string::npos);
    }
  }
  SECTION("a bad IP address") {
    ws.apply_text(interface_doc("w-ds", "if3", "  interface: eth3\n  name: emco\n  ipAddress: 10.1.2\n"));
    CHECK_THROWS_WITH(plan::build(ws.store(), test::world_dig(), test::plan_options()),
                      Catch::Contains("interfaces/if3: ipAddress '10.1.2' is not an IP address"));
  }
  SECTION("a workload without a pod template") {
    ws.apply_text(workload_doc("w-svc", "fw", "Service") + interface_doc("w-svc", "if1", "  interface: eth1\n  name: emco\n"));
    CHECK_THROWS_WITH(plan::build(ws.store(), test::world_dig(), test::plan_options()),
                      Catch::Contains("workload-intents/w-svc: resource 'fw+Service': a 'Service' has no pod template"));
  }
  SECTION("an unparseable networks annotation") {
    ws.write("charts/fw/templates/bad.yaml",
             "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\n  annotations:\n"
             "    k8s.v1.cni.cncf.io/networks: \"a/b/c\"\nspec:\n  containers: []\n");
    ws.apply_text(doc("projects/p/composite-apps/ca/v1/apps", "metadata:\n  name: fw\nfile: charts/fw\n") +
                  workload_doc("w-bad", "bad", "Pod") + interface_doc("w-bad", "if1", "  interface: eth1\n  name: emco\n"));
    CHECK_THROWS_WITH(plan::build(ws.store(), test::world_dig(), test::plan_options()),
                      Catch::Contains("w-bad: resource 'bad+Pod': annotation k8s.v1.cni.cncf.io/networks: invalid network object 'a/b/c'"));
  }
}
