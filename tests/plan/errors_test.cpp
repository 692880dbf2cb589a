// Bad intents are caught at plan time with errors naming the document.
#include <catch2/catch.hpp>

#include <memory>

#include "core/plan/controllers.hpp"
#include "core/plan/plan.hpp"
#include "core/util/error.hpp"
#include "tests/plan/world.hpp"

using namespace emco;
using test::ClusterSpec;

namespace {

std::string doc(const std::string& anchor, const std::string& body) {
  return "---\nversion: emco/v2\nresourceContext:\n  anchor: " + anchor + "\n" + body;
}

void setup(test::Workspace& ws, const std::vector<std::string>& apps) {
  ws.write("kubeconfig", "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n");
  for (const auto& a : apps) test::write_chart(ws, a);
  test::write_profile(ws, "profile");
}

const std::string k_on_c1 = "    allOf:\n    - clusterProvider: p1\n      cluster: c1\n";

Error plan_error(test::Workspace& ws) {
  try {
    plan::build(ws.store(), test::world_dig(), test::plan_options());
  } catch (const Error& e) {
    return e;
  }
  FAIL("the plan succeeded");
  return Error(ErrorKind::internal, "");
}

}  // namespace

TEST_CASE("a named cluster outside the logical cloud", "[plan][errors]") {
  test::Workspace ws;
  setup(ws, {"web"});
  ws.apply_text(test::world_yaml({{"p1", "c1", {}}, {"p1", "c2", {}, false}},
                                 {{"web", "    allOf:\n    - clusterProvider: p1\n      cluster: c2\n"}}));
  auto e = plan_error(ws);
  CHECK(e.message().find("app-intents/web-intent") != std::string::npos);
  CHECK(e.message().find("cluster 'p1/c2' is not part of logical cloud 'lc'") != std::string::npos);
}

TEST_CASE("a label only clusters outside the logical cloud carry", "[plan][errors]") {
  test::Workspace ws;
  setup(ws, {"web"});
  ws.apply_text(test::world_yaml({{"p1", "c1", {}}, {"p1", "c2", {"gpu"}, false}},
                                 {{"web", "    anyOf:\n    - clusterProvider: p1\n      clusterLabel: gpu\n"}}));
  auto e = plan_error(ws);
  CHECK(e.message().find("app-intents/web-intent") != std::string::npos);
  CHECK(e.message().find("no cluster with label 'gpu' of provider 'p1' is part of logical cloud 'lc'") !=
        std::string::npos);
}

TEST_CASE("an app without placement intent", "[plan][errors]") {
  test::Workspace ws;
  setup(ws, {"web", "db"});
  std::string y = test::world_yaml({{"p1", "c1", {}}}, {{"web", k_on_c1}, {"db", k_on_c1}});
  ws.apply_text(y);
  ws.store().write([&] {
    ws.store().remove(resource::Key::parse(
        "project=p/compositeApp=ca/compositeAppVersion=v1/deploymentIntentGroup=dig/genericPlacementIntent=gpi/"
        "genericAppPlacementIntent=db-intent"));
  });
  auto e = plan_error(ws);
  CHECK(e.message().find("app 'db' has no app placement intent") != std::string::npos);
}

TEST_CASE("a controller that is registered but not built in", "[plan][errors]") {
  test::Workspace ws;
  setup(ws, {"web"});
  ws.apply_text(doc("controllers", "metadata:\n  name: hpa-ac\nspec:\n  type: action\n  priority: 2\n") +
                test::world_yaml({{"p1", "c1", {}}}, {{"web", k_on_c1}}, "    hpa-ac: h1\n"));
  auto e = plan_error(ws);
  CHECK(e.message().find("intents/gi") != std::string::npos);
  CHECK(e.message().find("names controller 'hpa-ac' (type action), but emco has no hpa-ac controller yet") !=
        std::string::npos);
  CHECK(e.kind() == ErrorKind::unsupported);  // exit 9, 501 in emcoctl mode
  CHECK(e.hint() == "remove it from the group intent to deploy without it; built-in controllers: dtc, gac, "
                    "hpa-action-controller-1, hpa-placement-controller-1, ovnaction, sfc, sfcclient, tac");

  // The hint names what the runtime's registry holds, whatever that is.
  struct Noop : controllers::PlacementController {
    void filter(const controllers::Call&, appcontext::AppContext&) const override {}
  };
  controllers::Registry other;
  other.add_placement("zeta", std::make_unique<Noop>());
  other.add_placement("alpha", std::make_unique<Noop>());
  plan::Options o = test::plan_options();
  o.registry = &other;
  try {
    plan::build(ws.store(), test::world_dig(), o);
    FAIL("the plan succeeded");
  } catch (const Error& e2) {
    CHECK(e2.hint() == "remove it from the group intent to deploy without it; built-in controllers: alpha, zeta");
  }
}

TEST_CASE("a controller intent for an unregistered controller", "[plan][errors]") {
  test::Workspace ws;
  setup(ws, {"web"});
  // The workspace refuses the group intent already (its controller reference
  // must exist), naming the document; the planner never sees it.
  try {
    ws.apply_text(test::world_yaml({{"p1", "c1", {}}}, {{"web", k_on_c1}}, "    nosuch: x\n"));
    FAIL("stored a group intent naming an unregistered controller");
  } catch (const Error& e) {
    CHECK(e.message().find("nosuch") != std::string::npos);
  }
}

TEST_CASE("an app dependency cycle", "[plan][errors]") {
  test::Workspace ws;
  setup(ws, {"a", "b"});
  ws.apply_text(test::world_yaml({{"p1", "c1", {}}}, {{"a", k_on_c1}, {"b", k_on_c1}}) +
                doc("projects/p/composite-apps/ca/v1/apps/a/dependency",
                    "metadata:\n  name: on-b\nspec:\n  app: b\n  opStatus: Ready\n  wait: 1\n") +
                doc("projects/p/composite-apps/ca/v1/apps/b/dependency",
                    "metadata:\n  name: on-a\nspec:\n  app: a\n  opStatus: Deployed\n"));
  auto e = plan_error(ws);
  CHECK(e.message().find("app dependency cycle a -> b -> a") != std::string::npos);
}

TEST_CASE("dependencies without a cycle are recorded", "[plan]") {
  test::Workspace ws;
  setup(ws, {"a", "b"});
  ws.apply_text(test::world_yaml({{"p1", "c1", {}}}, {{"a", k_on_c1}, {"b", k_on_c1}}) +
                doc("projects/p/composite-apps/ca/v1/apps/a/dependency",
                    "metadata:\n  name: on-b\nspec:\n  app: b\n  opStatus: Ready\n  wait: 7\n"));
  auto ctx = plan::build(ws.store(), test::world_dig(), test::plan_options());
  REQUIRE(ctx.apps[0].dependencies.size() == 1);
  CHECK(ctx.apps[0].dependencies[0].app == "b");
  CHECK(ctx.apps[0].dependencies[0].op_status == "Ready");
  CHECK(ctx.apps[0].dependencies[0].wait == 7);
}

TEST_CASE("a profile package without its values file", "[plan][errors]") {
  test::Workspace ws;
  setup(ws, {"web"});
  ws.write("profile/manifest.yaml", "version: v1\ntype:\n  values: \"missing.yaml\"\n");
  ws.apply_text(test::world_yaml({{"p1", "c1", {}}}, {{"web", k_on_c1}}));
  auto e = plan_error(ws);
  CHECK(e.message().find("profiles/web-profile") != std::string::npos);
  CHECK(e.message().find("profile package lacks 'missing.yaml'") != std::string::npos);
}

TEST_CASE("profile values Helm cannot read name the file and keep Helm's words", "[plan][errors]") {
  test::Workspace ws;
  setup(ws, {"web"});
  ws.write("profile/override_values.yaml", "~: x\n");
  ws.apply_text(test::world_yaml({{"p1", "c1", {}}}, {{"web", k_on_c1}}));
  auto e = plan_error(ws);
  CHECK(e.message().find("profiles/web-profile") != std::string::npos);
  CHECK(e.message().find(": override_values.yaml: error converting YAML to JSON: unsupported map key of type: "
                         "%!s(<nil>), key: <nil>, value: \"x\"") != std::string::npos);
}

TEST_CASE("override values that break the chart", "[plan][errors]") {
  test::Workspace ws;
  setup(ws, {"web"});
  ws.apply_text(test::world_yaml({{"p1", "c1", {}}}, {{"web", k_on_c1}}));
  ws.apply_text(doc("projects/p/composite-apps/ca/v1/deployment-intent-groups",
                    "metadata:\n  name: dig\nspec:\n  compositeProfile: cp\n  version: r1\n  logicalCloud: lc\n"
                    "  overrideValues:\n  - app: web\n    values:\n      greeting: \"null\"\n"));
  auto e = plan_error(ws);
  CHECK(e.message().find("deployment-intent-groups/dig': app 'web'") != std::string::npos);
  CHECK(e.message().find("greeting is required") != std::string::npos);
}

TEST_CASE("rendering conventions: release, namespace, values order, hooks, labels", "[plan]") {
  test::Workspace ws;
  setup(ws, {"web"});
  test::write_profile(ws, "profile", "greeting: from-profile\nreplicas: 2\n");
  ws.apply_text(test::world_yaml({{"p1", "c1", {}}}, {{"web", k_on_c1}}));
  ws.apply_text(doc("projects/p/composite-apps/ca/v1/deployment-intent-groups",
                    "metadata:\n  name: dig\nspec:\n  compositeProfile: cp\n  version: r1\n  logicalCloud: lc\n"
                    "  overrideValues:\n  - app: web\n    values:\n      greeting: from-dig\n"));
  plan::Options o = test::plan_options();
  o.context_id = "77";
  auto ctx = plan::build(ws.store(), test::world_dig(), o);
  const auto& c = ctx.apps[0].clusters[0];
  REQUIRE(c.resources.size() == 2);
  CHECK(c.resources[0].name == "r1-web+ConfigMap");  // install order: ConfigMap before Deployment
  CHECK(c.resources[1].name == "r1-web+Deployment");
  CHECK(c.resources[0].text().find("greeting: from-dig") != std::string::npos);  // DIG overrides the profile
  CHECK(c.resources[1].text().find("replicas: 2") != std::string::npos);         // profile overrides the chart
  CHECK(c.resources[1].text().find("namespace: default") != std::string::npos);
  // Object and pod template labelled.
  auto text = c.resources[1].text();
  auto first = text.find("emco/deployment-id: 77-web");
  REQUIRE(first != std::string::npos);
  CHECK(text.find("emco/deployment-id: 77-web", first + 1) != std::string::npos);
  REQUIRE(c.hooks.size() == 1);
  CHECK(c.hooks[0].event == "pre-install");
  CHECK(c.hooks[0].resources[0].name == "r1-setup+Job");
  CHECK(ctx.meta.at("Release") == "r1");
  CHECK(ctx.meta.at("Namespace") == "default");
  CHECK(ctx.meta.at("LogicalCloud") == "lc");
}
