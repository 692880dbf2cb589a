// ncm: network and provider network checks when a batch stores them (as
// upstream's API validates, plus overlapping subnets), and the context of a
// cluster's network apply (golden).
#include <catch2/catch.hpp>

#include "core/lifecycle/runtime.hpp"
#include "core/manifest/batch.hpp"
#include "core/manifest/manifest.hpp"
#include "core/util/error.hpp"
#include "plugins/builtin.hpp"
#include "tests/plan/world.hpp"

using namespace emco;

namespace {

std::string doc(const std::string& anchor, const std::string& body) {
  return "---\nversion: emco/v2\nresourceContext:\n  anchor: " + anchor + "\n" + body;
}

const std::string k_c1 = "cluster-providers/p1/clusters/c1";

// Applies `yaml` with the built-in runtime, so that the plugins' checks run.
void apply_checked(test::Workspace& ws, const std::string& yaml) {
  manifest::BatchOptions o;
  o.runtime = &plugins::builtin_runtime();
  manifest::run_batch(ws.store(), manifest::Verb::apply,
                      {manifest::parse_text(yaml, "net.yaml", ws.dir().string(), manifest::ReadOptions{})}, o);
}

std::string network(const std::string& name, const std::string& subnet, const std::string& extra = "") {
  return doc(k_c1 + "/networks", "metadata:\n  name: " + name + "\nspec:\n  cniType: ovn4nfv\n  ipv4Subnets:\n  - subnet: " +
                                     subnet + "\n    name: subnet1\n" + extra);
}

std::string provider(const std::string& name, const std::string& spec) {
  return doc(k_c1 + "/provider-networks", "metadata:\n  name: " + name + "\nspec:\n" + spec);
}

const std::string k_vlan = "  cniType: ovn4nfv\n  providerNetType: VLAN\n  ipv4Subnets:\n  - subnet: 172.16.0.0/24\n"
                           "    name: s\n    gateway: 172.16.0.1/24\n  vlan:\n    vlanID: \"100\"\n"
                           "    providerInterfaceName: eth1\n    logicalInterfaceName: eth1.100\n";

void world(test::Workspace& ws) {
  ws.write("kubeconfig", "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n");
  ws.apply_text(doc("cluster-providers", "metadata:\n  name: p1\n") +
                doc("cluster-providers/p1/clusters", "metadata:\n  name: c1\nfile: kubeconfig\n"));
}

void expect_invalid(test::Workspace& ws, const std::string& yaml, const std::string& text) {
  try {
    apply_checked(ws, yaml);
    FAIL("no error for: " << yaml);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid);
    CHECK_THAT(e.message(), Catch::Contains(text));
    CHECK_THAT(e.message(), Catch::Contains("net.yaml:"));
  }
}

}  // namespace

TEST_CASE("ncm checks networks as upstream when they are stored", "[plan][ncm][errors]") {
  test::Workspace ws;
  world(ws);
  apply_checked(ws, network("ok", "10.0.0.0/24", "    gateway: 10.0.0.1/24\n    excludeIps: 10.0.0.2 10.0.0.5..10.0.0.9\n"));
  expect_invalid(ws, network("n1", "10.1.0.0/33"), "networks/n1: ipv4Subnets[0].subnet: '10.1.0.0/33' is not an IPv4 CIDR");
  expect_invalid(ws, network("n2", "10.2.0.0/24", "    gateway: 10.2.0.1\n"), "ipv4Subnets[0].gateway: '10.2.0.1' is not an IPv4 CIDR");
  expect_invalid(ws, network("n3", "10.3.0.0/24", "    excludeIps: 10.3.0.2..x\n"), "ipv4Subnets[0].excludeIps");
  expect_invalid(ws, doc(k_c1 + "/networks", "metadata:\n  name: n4\nspec:\n  ipv4Subnets: []\n"), "networks/n4: cniType");
  // Overlapping subnets: with another network of the cluster, naming both documents.
  expect_invalid(ws, network("n5", "10.0.0.128/25"),
                 "networks/n5: ipv4Subnets: subnet 10.0.0.128/25 overlaps subnet 10.0.0.0/24 of "
                 "cluster-providers/p1/clusters/c1/networks/ok");
  // ... and within one document.
  expect_invalid(ws, network("n6", "10.6.0.0/16", "  - subnet: 10.6.1.0/24\n    name: s2\n"),
                 "subnets 10.6.0.0/16 and 10.6.1.0/24 overlap");
  // Re-applying the same network is no overlap with itself.
  CHECK_NOTHROW(apply_checked(ws, network("ok", "10.0.0.0/24")));
}

TEST_CASE("ncm checks provider networks as upstream", "[plan][ncm][errors]") {
  test::Workspace ws;
  world(ws);
  apply_checked(ws, provider("vlan100", k_vlan + "    vlanNodeSelector: specific\n    nodeLabelList:\n    - kubernetes.io/hostname=node1\n"));
  apply_checked(ws, provider("direct", "  cniType: ovn4nfv\n  providerNetType: direct\n  vlan:\n    vlanID: \"0\"\n"
                               "    vlanNodeSelector: ANY\n"));
  expect_invalid(ws, provider("p1", "  cniType: ovn4nfv\n  providerNetType: BRIDGE\n"), "'spec.providerNetType' must be one of VLAN, DIRECT, not 'BRIDGE'");
  std::string v = k_vlan;
  expect_invalid(ws, provider("p2", std::string(v).replace(v.find("\"100\""), 5, "\"4096\"") + "    vlanNodeSelector: any\n"),
                 "vlan.vlanID: '4096' is not a VLAN id");
  expect_invalid(ws, provider("p3", std::string(v).replace(v.find("172.16.0.0"), 10, "172.17.0.0") +
                                        "    vlanNodeSelector: specific\n"),
                 "vlanNodeSelector specific needs at least one node label");
  expect_invalid(ws, provider("p4", std::string(v).replace(v.find("172.16.0.0"), 10, "172.18.0.0") +
                                        "    vlanNodeSelector: any\n    nodeLabelList:\n    - \"a=b=c\"\n"),
                 "'a=b=c' is not a Kubernetes label");
  // A provider network overlapping a virtual network of the same cluster.
  apply_checked(ws, network("virt", "172.20.0.0/16"));
  expect_invalid(ws, provider("p5", std::string(v).replace(v.find("172.16.0.0"), 10, "172.20.9.0") +
                                        "    vlanNodeSelector: any\n"),
                 "overlaps subnet 172.20.0.0/16 of cluster-providers/p1/clusters/c1/networks/virt");
}

TEST_CASE("ncm: the context of a cluster's network apply", "[plan][ncm]") {
  test::Workspace ws;
  world(ws);
  apply_checked(ws, network("protected", "192.168.20.0/24", "    gateway: 192.168.20.1/24\n") +
                network("emco", "10.10.20.0/24") +
                provider("vlan100", k_vlan + "    vlanNodeSelector: specific\n    nodeLabelList:\n    - node=a\n"));
  const auto* planner = lifecycle::resource_planner(plugins::builtin_runtime(), "cluster");
  REQUIRE(planner);
  resource::Key c1{{{"clusterProvider", "p1"}, {"cluster", "c1"}}};
  auto ctx = planner->plan(ws.store(), c1);
  REQUIRE(ctx.apps.size() == 1);
  CHECK(ctx.apps[0].name == "network-intents");
  const auto& cl = ctx.apps[0].clusters.at(0);
  CHECK(cl.name == "p1+c1");
  std::vector<std::string> names;
  for (const auto& r : cl.resources) names.push_back(r.name);
  CHECK(names == std::vector<std::string>{"emco+Network", "protected+Network", "vlan100+ProviderNetwork"});
  CHECK(cl.find("vlan100+ProviderNetwork")->text().find("vlanId: \"100\"") != std::string::npos);
  CHECK(cl.find("protected+Network")->text().find("net: protected") != std::string::npos);
  test::check_golden("ncm.txt", test::dump(ctx));

  // A Multus cluster also gets a NetworkAttachmentDefinition after each network.
  apply_checked(ws, doc(k_c1 + "/kv-pairs", "metadata:\n  name: cni\nspec:\n  kv:\n  - CNI-Networking-Multi-VM-CNI-Wrapper: Multus\n"));
  ctx = planner->plan(ws.store(), c1);
  names.clear();
  for (const auto& r : ctx.apps[0].clusters.at(0).resources) names.push_back(r.name);
  CHECK(names == std::vector<std::string>{"emco+Network", "emco+NetworkAttachmentDefinition", "protected+Network",
                                          "protected+NetworkAttachmentDefinition", "vlan100+ProviderNetwork",
                                          "vlan100+NetworkAttachmentDefinition"});
  CHECK(ctx.apps[0].clusters.at(0).find("emco+NetworkAttachmentDefinition")->text().find(
            R"(config: '{"cniVersion":"0.3.1","type":"ovn4nfvk8s-cni","nfn-network":"emco"}')") != std::string::npos);
}
