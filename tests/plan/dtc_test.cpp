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
    ws.apply_text(server_doc("serverin").replace(server_doc("serverin").find("app=server"), 10, "server") +
                  client_doc("serverin", "client1", k_client));
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
