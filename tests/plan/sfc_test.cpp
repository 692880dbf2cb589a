// sfc and sfcclient: the network-chain-intents app with one NetworkChaining
// per chain cluster, link labels, client labels from the selector matching
// the logical cloud's labels, and the errors naming the document.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/plan/object.hpp"
#include "core/plan/plan.hpp"
#include "core/util/error.hpp"
#include "tests/plan/world.hpp"

using namespace emco;
using test::ClusterSpec;

namespace {

const std::string k_dig = "projects/p/composite-apps/ca/v1/deployment-intent-groups/dig";
const std::string k_chain = k_dig + "/network-chains";

std::string doc(const std::string& anchor, const std::string& body) {
  return "---\nversion: emco/v2\nresourceContext:\n  anchor: " + anchor + "\n" + body;
}

std::string link_doc(const std::string& name, const std::string& left, const std::string& right, const std::string& app) {
  return doc(k_chain + "/chain1/links", "metadata:\n  name: " + name + "\nspec:\n  leftNet: " + left +
                                            "\n  rightNet: " + right + "\n  linkLabel: app=" + app + "\n  app: " + app +
                                            "\n  workloadResource: r1-web\n  resourceType: Deployment\n");
}

const std::string k_on_both = "    allOf:\n    - clusterProvider: p1\n      cluster: c1\n"
                              "    - clusterProvider: p1\n      cluster: c2\n";
const std::string k_on_c1 = "    allOf:\n    - clusterProvider: p1\n      cluster: c1\n";

// slb and ngfw on c1 and c2, sdewan on c1 only, client on c2; a chain slb → ngfw → sdewan; the logical cloud
// labelled team=blue; a client of the chain's left end.
void world(test::Workspace& ws) {
  ws.write("kubeconfig", "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n");
  for (const char* a : {"slb", "ngfw", "sdewan", "client"}) test::write_chart(ws, a);
  test::write_profile(ws, "profile");
  std::string y = doc("controllers", "metadata:\n  name: sfc\nspec:\n  type: action\n  priority: 1\n");
  y += doc("controllers", "metadata:\n  name: sfcclient\nspec:\n  type: action\n  priority: 2\n");
  y += test::world_yaml({{"p1", "c1", {}}, {"p1", "c2", {}}},
                        {{"slb", k_on_both}, {"ngfw", k_on_both}, {"sdewan", k_on_c1},
                         {"client", "    allOf:\n    - clusterProvider: p1\n      cluster: c2\n"}},
                        "    sfc: chain1\n    sfcclient: clients\n");
  y += doc(k_chain, "metadata:\n  name: chain1\nspec:\n  chainType: Routing\n  namespace: default\n");
  y += link_doc("l1", "vnet1", "dync-net1", "slb") + link_doc("l2", "dync-net1", "dync-net2", "ngfw") +
       link_doc("l3", "dync-net2", "vnet2", "sdewan");
  y += doc(k_chain + "/chain1/client-selectors",
           "metadata:\n  name: a-red\nspec:\n  chainEnd: left\n  podSelector:\n    matchLabels:\n      sfc: red\n"
           "  namespaceSelector:\n    matchLabels:\n      team: red\n");
  y += doc(k_chain + "/chain1/client-selectors",
           "metadata:\n  name: b-blue\nspec:\n  chainEnd: left\n  podSelector:\n    matchLabels:\n      sfc: head\n"
           "  namespaceSelector:\n    matchLabels:\n      team: blue\n");
  y += doc(k_chain + "/chain1/client-selectors",
           "metadata:\n  name: c-tail\nspec:\n  chainEnd: right\n  podSelector:\n    matchLabels:\n      sfc: tail\n"
           "  namespaceSelector:\n    matchLabels:\n      team: blue\n");
  y += doc(k_chain + "/chain1/provider-networks",
           "metadata:\n  name: left-pnet\nspec:\n  chainEnd: left\n  providerNetwork: left-pnetwork\n"
           "  gatewayIp: 172.30.10.2\n  subnet: 172.30.10.0/24\n");
  y += doc(k_chain + "/chain1/provider-networks",
           "metadata:\n  name: right-pnet\nspec:\n  chainEnd: right\n  providerNetwork: right-pnetwork\n"
           "  gatewayIp: 172.30.20.2\n  subnet: 172.30.20.0/24\n");
  y += doc(k_chain + "/chain1/provider-networks",
           "metadata:\n  name: right-pnet2\nspec:\n  chainEnd: right\n  providerNetwork: extra\n"
           "  gatewayIp: 172.30.30.2\n  subnet: 172.30.30.0/24\n");
  y += doc(k_dig + "/sfc-clients",
           "metadata:\n  name: head-client\nspec:\n  chainEnd: left\n  sfcIntent: chain1\n  compositeApp: ca\n"
           "  compositeAppVersion: v1\n  deploymentIntentGroup: dig\n  app: client\n  workloadResource: r1-web\n"
           "  resourceType: Deployment\n");
  ws.apply_text(y);
  ws.apply_text(doc("projects/p/logical-clouds", "metadata:\n  name: lc\nspec:\n  level: \"0\"\n  labels:\n    team: blue\n"));
}

plan::Options fixed() {
  plan::Options o = test::plan_options();
  o.context_id = "9";
  return o;
}

nlohmann::json object(const appcontext::AppContext& ctx, const std::string& app, const std::string& cluster,
                      const std::string& r) {
  const auto* a = ctx.find_app(app);
  REQUIRE(a);
  const auto* c = a->find_cluster(cluster);
  REQUIRE(c);
  const auto* res = c->find(r);
  REQUIRE(res);
  return controllers::parse_object(res->text(), r);
}

nlohmann::json pod_labels(const nlohmann::json& o) { return o["spec"]["template"]["metadata"]["labels"]; }

void expect_error(test::Workspace& ws, const std::string& text) {
  CHECK_THROWS_WITH(plan::build(ws.store(), test::world_dig(), test::plan_options()), Catch::Contains(text));
}

}  // namespace

TEST_CASE("sfc: a NetworkChaining on the chain's clusters, links and client labelled", "[plan][sfc]") {
  test::Workspace ws;
  world(ws);
  auto ctx = plan::build(ws.store(), test::world_dig(), fixed());
  // The chain app comes last, only on c1 (sdewan is not on c2).
  REQUIRE(ctx.apps.back().name == "network-chain-intents");
  REQUIRE(ctx.apps.back().clusters.size() == 1);
  auto cr = object(ctx, "network-chain-intents", "p1+c1", "chain1+NetworkChaining");
  CHECK(cr["apiVersion"] == "k8s.plugin.opnfv.org/v1alpha1");
  CHECK(cr["metadata"]["name"] == "chain1");
  const auto& rs = cr["spec"]["routingSpec"];
  CHECK(cr["spec"]["chainType"] == "Routing");
  CHECK(rs["namespace"] == "default");
  CHECK(rs["networkChain"] == "net=vnet1,app=slb,net=dync-net1,app=ngfw,net=dync-net2,app=sdewan,net=vnet2");
  // Left: two selectors, the first filled with the provider network; right: one selector plus one more network.
  REQUIRE(rs["left"].size() == 2);
  CHECK(rs["left"][0]["networkName"] == "left-pnetwork");
  CHECK(rs["left"][0]["podSelector"]["matchLabels"]["sfc"] == "red");
  CHECK(rs["left"][1]["networkName"] == "");
  CHECK(rs["left"][1]["namespaceSelector"]["matchLabels"]["team"] == "blue");
  REQUIRE(rs["right"].size() == 2);
  CHECK(rs["right"][0]["podSelector"]["matchLabels"]["sfc"] == "tail");
  CHECK(rs["right"][0]["subnet"] == "172.30.20.0/24");
  CHECK(rs["right"][1]["networkName"] == "extra");
  CHECK(rs["right"][1]["podSelector"].empty());

  // Link labels on the chain clusters only.
  CHECK(pod_labels(object(ctx, "slb", "p1+c1", "r1-web+Deployment"))["app"] == "slb");
  CHECK(pod_labels(object(ctx, "sdewan", "p1+c1", "r1-web+Deployment"))["app"] == "sdewan");
  CHECK(pod_labels(object(ctx, "ngfw", "p1+c2", "r1-web+Deployment"))["app"] == "web");
  // The client gets the labels of the first left selector matching team=blue.
  auto client = pod_labels(object(ctx, "client", "p1+c2", "r1-web+Deployment"));
  CHECK(client["sfc"] == "head");
  CHECK(client["app"] == "web");
  test::check_golden("sfc.txt", test::dump(ctx));

  // emco dig plan's explanation leaves the unplaced chain app out.
  plan::Options explain = test::plan_options();
  explain.explain = true;
  CHECK_NOTHROW(plan::build(ws.store(), test::world_dig(), explain));
}

TEST_CASE("sfc errors name the document", "[plan][sfc][errors]") {
  test::Workspace ws;
  world(ws);
  SECTION("links that do not form one chain") {
    ws.apply_text(link_doc("l3", "elsewhere", "vnet2", "sdewan"));
    expect_error(ws, "network-chains/chain1: the links have several leftmost networks");
  }
  SECTION("a duplicate left network") {
    ws.apply_text(link_doc("l4", "vnet1", "x", "ngfw"));
    expect_error(ws, "links/l4: left network 'vnet1' is the left network of another link too");
  }
  SECTION("apps of the chain on no common cluster") {
    ws.apply_text(link_doc("l1", "vnet1", "dync-net1", "client"));
    expect_error(ws, "network-chains/chain1: no cluster has every app of the chain");
  }
  SECTION("an end without selectors or provider networks") {
    ws.apply_text(doc(k_chain, "metadata:\n  name: chain2\nspec:\n  chainType: Routing\n  namespace: default\n"));
    expect_error(ws, "network-chains/chain2: the left end has no client selector and no provider network");
  }
  SECTION("no client selector matches the logical cloud") {
    ws.apply_text(doc("projects/p/logical-clouds", "metadata:\n  name: lc\nspec:\n  level: \"0\"\n  labels:\n    team: green\n"));
    expect_error(ws, "sfc-clients/head-client: no client selector of chain end 'left' of "
                     "'projects/p/composite-apps/ca/v1/deployment-intent-groups/dig/network-chains/chain1' matches the "
                     "labels of logical cloud 'lc' (team=green)");
  }
  SECTION("a link's workload missing") {
    ws.apply_text(doc(k_chain + "/chain1/links",
                      "metadata:\n  name: l1\nspec:\n  leftNet: vnet1\n  rightNet: dync-net1\n  linkLabel: app=slb\n"
                      "  app: slb\n  workloadResource: nothing\n  resourceType: Deployment\n"));
    expect_error(ws, "links/l1: app 'slb' has no resource 'nothing+Deployment' on cluster 'p1+c1'");
  }
}

TEST_CASE("sfc: a link naming an app the composite app lacks is refused when applied", "[plan][sfc][errors]") {
  test::Workspace ws;
  world(ws);
  try {
    ws.apply_text(link_doc("l9", "vnet2", "vnet3", "nosuch"));
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.message().find("nosuch") != std::string::npos);
  }
}
