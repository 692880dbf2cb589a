// dtc and its sub-controllers on a synthetic workspace: app `server` on p1+c1
// (labelled networkpolicy-supported) and p1+c2, app `client` on p1+c3.
#include <catch2/catch.hpp>

#include "core/plan/plan.hpp"
#include "core/util/error.hpp"
#include "tests/plan/world.hpp"

using namespace emco;
using test::ClusterSpec;

namespace {

const std::string k_digs = "projects/p/composite-apps/ca/v1/deployment-intent-groups/dig";
const std::string k_tgi = k_digs + "/traffic-group-intents";

std::string doc(const std::string& anchor, const std::string& body) {
  return "---\nversion: emco/v2\nresourceContext:\n  anchor: " + anchor + "\n" + body;
}

std::string on(const std::string& cluster) {
  return "    allOf:\n    - clusterProvider: p1\n      cluster: " + cluster + "\n";
}

// The world, dtc registered with priority 1 and named in the group intent
// (traffic group intent tg), plus `subs` registered under dtc-controllers.
void world(test::Workspace& ws, const std::vector<std::pair<std::string, int>>& subs = {{"nps", 1}}) {
  ws.write("kubeconfig", "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n");
  test::write_chart(ws, "server");
  ws.write("charts/server/templates/svc.yaml",
           "apiVersion: v1\nkind: Service\nmetadata:\n  name: http-service\nspec:\n  type: NodePort\n"
           "  selector: {app: web}\n  ports:\n  - port: 3550\n    targetPort: 80\n");
  test::write_chart(ws, "client");
  test::write_profile(ws, "profile");
  std::vector<ClusterSpec> clusters = {
      {"p1", "c1", {"networkpolicy-supported"}}, {"p1", "c2", {}}, {"p1", "c3", {"networkpolicy-supported"}}};
  // upstream's registration documents, host and port included
  std::string y = doc("controllers", "metadata:\n  name: dtc\nspec:\n  host: dtc\n  port: 9018\n  type: action\n"
                                     "  priority: 1\n");
  for (const auto& [name, prio] : subs)
    y += doc("dtc-controllers", "metadata:\n  name: " + name + "\nspec:\n  host: " + name +
                                    "\n  port: 9033\n  type: action\n  priority: " + std::to_string(prio) + "\n");
  y += test::world_yaml(clusters,
                        {{"server", "    allOf:\n    - clusterProvider: p1\n      cluster: c1\n"
                                    "    - clusterProvider: p1\n      cluster: c2\n"},
                         {"client", on("c3")}},
                        "    dtc: tg\n");
  y += doc(k_tgi, "metadata:\n  name: tg\n");
  ws.apply_text(y);
}

std::string server_doc(const std::string& name, const std::string& extra = "") {
  return doc(k_tgi + "/tg/inbound-intents",
             "metadata:\n  name: " + name + "\nspec:\n  app: server\n  appLabel: app=server\n"
             "  serviceName: http-service\n  port: 3550\n  protocol: TCP\n" + extra);
}

std::string client_doc(const std::string& server, const std::string& name, const std::string& spec) {
  return doc(k_tgi + "/tg/inbound-intents/" + server + "/clients", "metadata:\n  name: " + name + "\nspec:\n" + spec);
}

const std::string k_client = "  app: client\n  appLabel: app=client\n  serviceName: client-svc\n  namespaces: []\n"
                             "  cidrs: []\n";

plan::Options fixed() {
  plan::Options o = test::plan_options();
  o.context_id = "9";
  return o;
}

const appcontext::Resource* find(const appcontext::AppContext& ctx, const std::string& app, const std::string& cluster,
                                 const std::string& r) {
  const auto* c = ctx.find_app(app)->find_cluster(cluster);
  return c ? c->find(r) : nullptr;
}

std::string plan_error(test::Workspace& ws) {
  try {
    plan::build(ws.store(), test::world_dig(), test::plan_options());
  } catch (const Error& e) {
    return e.message();
  }
  FAIL("the plan did not fail");
  return {};
}

}  // namespace

TEST_CASE("nps: a NetworkPolicy per server on the labelled clusters of the server app", "[plan][dtc][nps]") {
  test::Workspace ws;
  world(ws);
  ws.apply_text(server_doc("serverin") + client_doc("serverin", "client1", k_client) +
                client_doc("serverin", "outside", "  app: client\n  appLabel: app=outside\n  serviceName: x\n"
                                                  "  namespaces: []\n  cidrs: [10.0.0.0/8]\n"));
  auto ctx = plan::build(ws.store(), test::world_dig(), fixed());
  const auto* np = find(ctx, "server", "p1+c1", "tg-serverin");
  REQUIRE(np);
  // Only the cluster with the label; never the client's clusters.
  CHECK(find(ctx, "server", "p1+c2", "tg-serverin") == nullptr);
  CHECK(find(ctx, "client", "p1+c3", "tg-serverin") == nullptr);
  // Appended to resorder, after the chart's objects.
  CHECK(ctx.find_app("server")->find_cluster("p1+c1")->resources.back().name == "tg-serverin");
  // Not externalSupport: the clients' CIDRs are left out and 0.0.0.0/0 is added.
  CHECK(np->text().find("10.0.0.0/8") == std::string::npos);
  CHECK(np->text().find("0.0.0.0/0") != std::string::npos);
  test::check_golden("dtc-nps.txt", test::dump(ctx));
}

TEST_CASE("nps: externalSupport takes the clients' CIDRs instead of 0.0.0.0/0", "[plan][dtc][nps]") {
  test::Workspace ws;
  world(ws);
  ws.apply_text(server_doc("serverin", "  externalSupport: true\n") +
                client_doc("serverin", "client1", "  app: client\n  appLabel: app=client\n  serviceName: x\n"
                                                  "  namespaces: []\n  cidrs: [10.0.0.0/8, 192.168.1.0/24]\n"));
  auto ctx = plan::build(ws.store(), test::world_dig(), fixed());
  const std::string& t = find(ctx, "server", "p1+c1", "tg-serverin")->text();
  CHECK(t.find("cidr: 10.0.0.0/8") != std::string::npos);
  CHECK(t.find("cidr: 192.168.1.0/24") != std::string::npos);
  CHECK(t.find("0.0.0.0/0") == std::string::npos);
  CHECK(t.find("app: client") != std::string::npos);
}

TEST_CASE("nps: a server without clients gets no policy", "[plan][dtc][nps]") {
  test::Workspace ws;
  world(ws);
  ws.apply_text(server_doc("lonely"));
  auto ctx = plan::build(ws.store(), test::world_dig(), fixed());
  CHECK(find(ctx, "server", "p1+c1", "tg-lonely") == nullptr);
}

TEST_CASE("dtc without registered sub-controllers changes nothing", "[plan][dtc]") {
  test::Workspace ws;
  world(ws, {});
  ws.apply_text(server_doc("serverin") + client_doc("serverin", "client1", k_client));
  auto ctx = plan::build(ws.store(), test::world_dig(), fixed());
  CHECK(find(ctx, "server", "p1+c1", "tg-serverin") == nullptr);
}

TEST_CASE("dtc errors name the document and every failing sub-controller", "[plan][dtc][errors]") {
  test::Workspace ws;
  SECTION("a traffic group intent without inbound intents") {
    world(ws);
    auto m = plan_error(ws);
    CHECK(m.find("action controller 'dtc': sub-controller 'nps': " + k_tgi + "/tg: the traffic group intent has no "
                 "inbound server intents") != std::string::npos);
  }
  SECTION("a bad appLabel names the inbound intent") {
    world(ws);
    auto bad = server_doc("serverin");
    bad.replace(bad.find("app=server"), 10, "server");
    ws.apply_text(bad + client_doc("serverin", "client1", k_client));
    CHECK(plan_error(ws).find(k_tgi + "/tg/inbound-intents/serverin: appLabel 'server' is not of the form key=value") !=
          std::string::npos);
  }
  SECTION("sub-controllers run by descending priority; all errors are reported") {
    world(ws, {{"nps", 5}, {"aaa", 1}, {"zzz", 9}});
    ws.apply_text(server_doc("serverin") + client_doc("serverin", "client1", k_client));
    auto m = plan_error(ws);
    auto z = m.find("'zzz' (dtc-controllers/zzz) has no implementation"), a = m.find("'aaa' (dtc-controllers/aaa)");
    REQUIRE(z != std::string::npos);
    REQUIRE(a != std::string::npos);
    CHECK(z < a);
  }
  SECTION("a traffic group intent named in the group intent must exist") {
    world(ws);
    ws.apply_text(doc(k_digs + "/intents", "metadata:\n  name: gi\nspec:\n  intent:\n    genericPlacementIntent: gpi\n"
                                           "    dtc: nothere\n"));
    CHECK(plan_error(ws).find("traffic group intent '" + k_tgi + "/nothere' named in the group intent does not exist") !=
          std::string::npos);
  }
  SECTION("an inbound intent for an app not in the composite app is refused when it is applied") {
    world(ws);
    auto bad = server_doc("serverin");
    bad.replace(bad.find("app: server"), 11, "app: nosuch");
    CHECK_THROWS_WITH(ws.apply_text(bad), Catch::Contains("nosuch"));
  }
}

namespace {

std::string kv_doc(const std::string& cluster, const std::vector<std::pair<std::string, std::string>>& kv) {
  std::string y = "metadata:\n  name: kv\nspec:\n  kv:\n";
  for (const auto& [k, v] : kv) y += "  - " + k + ": \"" + v + "\"\n";
  return doc("cluster-providers/p1/clusters/" + cluster + "/kv-pairs", y);
}

std::string istio_kv(const std::string& cluster, const std::string& address) {
  return kv_doc(cluster, {{"istioIngressGatewayAddress", address},
                          {"istioIngressGatewayPort", "32001"},
                          {"istioIngressGatewayInternalPort", "15443"},
                          {"istioIngressGatewayHttpsPort", "32443"}});
}

std::string access_doc(const std::string& server, const std::string& client, const std::string& name) {
  return doc(k_tgi + "/tg/inbound-intents/" + server + "/clients/" + client + "/access-points",
             "metadata:\n  name: " + name + "\nspec:\n  action: ALLOW\n  url: [/status]\n  access: [GET]\n");
}

std::vector<std::string> keys(const appcontext::AppContext& ctx, const std::string& app, const std::string& cluster) {
  std::vector<std::string> out;
  for (const auto& r : ctx.find_app(app)->find_cluster(cluster)->resources)
    if (r.name.find('+') == std::string::npos) out.push_back(r.name);  // the controllers' objects
  return out;
}

}  // namespace

TEST_CASE("its: Istio objects on server and client clusters from the cluster kv pairs", "[plan][dtc][its]") {
  test::Workspace ws;
  world(ws, {{"its", 1}});
  ws.apply_text(istio_kv("c1", "10.0.0.1") + istio_kv("c2", "10.0.0.2") +
                server_doc("serverin", "  serviceMesh: istio\n") + client_doc("serverin", "client1", k_client) +
                access_doc("serverin", "client1", "status"));
  auto ctx = plan::build(ws.store(), test::world_dig(), fixed());
  const std::vector<std::string> server = {"http-service-gateway", "http-service-se-server",
                                           "http-service-se-server-dr-dr", "http-service-auth-00"};
  CHECK(keys(ctx, "server", "p1+c1") == server);
  auto server2 = server;
  server2.back() = "http-service-auth-01";
  CHECK(keys(ctx, "server", "p1+c2") == server2);
  CHECK(keys(ctx, "client", "p1+c3") ==
        std::vector<std::string>{"http-service-se-client0", "http-service-se-client1", "http-service-dr-client0-dr",
                                 "http-service-dr-client1-dr", "http-service-dr-client-svcname-dr"});
  const std::string& se = find(ctx, "client", "p1+c3", "http-service-se-client0")->text();
  CHECK(se.find("240.0.0.2") != std::string::npos);
  CHECK(se.find("http-service.default.p1.c1") != std::string::npos);
  CHECK(se.find("address: 10.0.0.2") != std::string::npos);
  // metadata.name is the key without the trailing -dr
  CHECK(find(ctx, "server", "p1+c1", "http-service-se-server-dr-dr")->text().find("name: http-service-se-server-dr\n") !=
        std::string::npos);
  test::check_golden("dtc-its.txt", test::dump(ctx));
}

TEST_CASE("its: external access with MUTUAL TLS adds the gateway, virtual service and credential", "[plan][dtc][its]") {
  test::Workspace ws;
  world(ws, {{"its", 1}});
  ws.apply_text(istio_kv("c1", "10.0.0.1") + istio_kv("c2", "10.0.0.2") +
                server_doc("serverin", "  serviceMesh: istio\n  externalSupport: true\n  externalName: web.example.com\n"
                                       "  management:\n    sidecarProxy: \"yes\"\n    tlsType: MUTUAL\n"
                                       "  external:\n    externalCerts:\n      serviceCertificate: Y2VydA==\n"
                                       "      servicePrivateKey: a2V5\n      caCertificate: Y2E=\n") +
                client_doc("serverin", "client1", k_client));
  auto ctx = plan::build(ws.store(), test::world_dig(), fixed());
  auto k = keys(ctx, "server", "p1+c1");
  REQUIRE(k.size() >= 3);
  CHECK(std::vector<std::string>(k.begin(), k.begin() + 3) ==
        std::vector<std::string>{"http-service-ext-mutual-gateway", "http-service-vs-http-service-ext-mutual-gateway",
                                 "http-service-credential"});
  const std::string& gw = find(ctx, "server", "p1+c1", "http-service-ext-mutual-gateway")->text();
  CHECK(gw.find("number: 32443") != std::string::npos);
  CHECK(gw.find("credentialName: http-service-credential") != std::string::npos);
  const std::string& secret = find(ctx, "server", "p1+c1", "http-service-credential")->text();
  CHECK(secret.find("namespace: istio-system") != std::string::npos);
  CHECK(secret.find("ca.crt: Y2E=") != std::string::npos);
  test::check_golden("dtc-its-external.txt", test::dump(ctx));
}

TEST_CASE("its: a client on the server's cluster needs no cross-cluster objects", "[plan][dtc][its]") {
  test::Workspace ws;
  world(ws, {{"its", 1}});
  ws.apply_text(istio_kv("c1", "10.0.0.1") + istio_kv("c2", "10.0.0.2") +
                server_doc("serverin", "  serviceMesh: istio\n") +
                client_doc("serverin", "self", "  app: server\n  appLabel: app=server\n  serviceName: s\n"
                                               "  namespaces: []\n  cidrs: []\n"));
  auto ctx = plan::build(ws.store(), test::world_dig(), fixed());
  // The client app is the server app: p1+c1's clients are on p1+c2 and the other way round.
  CHECK(keys(ctx, "server", "p1+c1") ==
        std::vector<std::string>{"http-service-gateway", "http-service-se-server", "http-service-se-server-dr-dr"});
  CHECK(keys(ctx, "client", "p1+c3").empty());
}

TEST_CASE("its and swc leave servers that are not theirs alone, nps still runs", "[plan][dtc][its][swc]") {
  test::Workspace ws;
  world(ws, {{"its", 3}, {"swc", 2}, {"nps", 1}});
  ws.apply_text(server_doc("serverin") + client_doc("serverin", "client1", k_client));
  auto ctx = plan::build(ws.store(), test::world_dig(), fixed());
  CHECK(keys(ctx, "server", "p1+c1") == std::vector<std::string>{"tg-serverin"});
  CHECK(keys(ctx, "client", "p1+c3").empty());
}

TEST_CASE("swc: CNFService on server clusters, SdewanApplication on client clusters", "[plan][dtc][swc]") {
  test::Workspace ws;
  world(ws, {{"swc", 1}});
  auto sdewan = [](const std::string& c, const std::string& port) {
    return kv_doc(c, {{"SdewanCnfPort", port}, {"SdewanServicePort", "3550"}, {"SdewanServiceAllowedCidr", "10.0.0.0/8"}});
  };
  ws.apply_text(sdewan("c1", "6443") + sdewan("c2", "6444") + server_doc("serverin", "  edgeCNF: sdewan\n") +
                client_doc("serverin", "client1", k_client));
  auto ctx = plan::build(ws.store(), test::world_dig(), fixed());
  const std::string svc = "http-service.default.svc.cluster.local-sa";
  CHECK(keys(ctx, "server", "p1+c1") == std::vector<std::string>{svc});
  CHECK(find(ctx, "server", "p1+c2", svc)->text().find("port: \"6444\"") != std::string::npos);
  CHECK(keys(ctx, "client", "p1+c3") == std::vector<std::string>{"http-service-sa"});
  test::check_golden("dtc-swc.txt", test::dump(ctx));
}

TEST_CASE("its and swc errors name the inbound intent and the missing kv pair", "[plan][dtc][its][swc][errors]") {
  test::Workspace ws;
  SECTION("its") {
    world(ws, {{"its", 1}});
    ws.apply_text(istio_kv("c1", "10.0.0.1") + server_doc("serverin", "  serviceMesh: istio\n") +
                  client_doc("serverin", "client1", k_client));
    CHECK(plan_error(ws).find("sub-controller 'its': " + k_tgi +
                              "/tg/inbound-intents/serverin: cluster 'p1+c2' of app 'server' has no kv pair "
                              "'istioIngressGatewayAddress'") != std::string::npos);
  }
  SECTION("its: a port that is not a number") {
    world(ws, {{"its", 1}});
    ws.apply_text(istio_kv("c1", "10.0.0.1") +
                  kv_doc("c2", {{"istioIngressGatewayAddress", "a"}, {"istioIngressGatewayPort", "http"}}) +
                  server_doc("serverin", "  serviceMesh: istio\n") + client_doc("serverin", "client1", k_client));
    CHECK(plan_error(ws).find("kv pair 'istioIngressGatewayPort' of cluster 'p1+c2' is 'http', not a port number") !=
          std::string::npos);
  }
  SECTION("swc and nps both fail: both are reported") {
    world(ws, {{"swc", 2}, {"nps", 1}});
    auto bad = server_doc("serverin", "  edgeCNF: sdewan\n");
    bad.replace(bad.find("app=server"), 10, "server");
    ws.apply_text(bad + client_doc("serverin", "client1", k_client));
    auto m = plan_error(ws);
    CHECK(m.find("sub-controller 'swc': " + k_tgi + "/tg/inbound-intents/serverin: appLabel 'server'") !=
          std::string::npos);
    CHECK(m.find("; sub-controller 'nps': " + k_tgi + "/tg/inbound-intents/serverin: appLabel 'server'") !=
          std::string::npos);
  }
}

TEST_CASE("sds at plan time: a client without a matching server Service fails the plan", "[plan][dtc][sds][errors]") {
  test::Workspace ws;
  world(ws, {{"sds", 1}});
  SECTION("the Service exists: nothing is added to the parent") {
    ws.apply_text(server_doc("serverin") + client_doc("serverin", "client1", k_client));
    auto ctx = plan::build(ws.store(), test::world_dig(), fixed());
    CHECK(keys(ctx, "server", "p1+c1").empty());
    CHECK(keys(ctx, "client", "p1+c3").empty());
  }
  SECTION("serviceName names no Service of the server app") {
    auto bad = server_doc("serverin");
    bad.replace(bad.find("serviceName: http-service"), 25, "serviceName: nosuch");
    ws.apply_text(bad + client_doc("serverin", "client1", k_client));
    CHECK(plan_error(ws).find("sub-controller 'sds': " + k_tgi + "/tg/inbound-intents/serverin: app 'server' has no "
                              "Service 'nosuch' on cluster 'p1+c1' for its clients (" + k_tgi +
                              "/tg/inbound-intents/serverin/clients/client1) to discover") != std::string::npos);
  }
}
