// GAC patch types and targeting, on a synthetic workspace.
#include <catch2/catch.hpp>

#include "core/plan/plan.hpp"
#include "core/util/error.hpp"
#include "tests/plan/world.hpp"

using namespace emco;
using test::ClusterSpec;

namespace {

const std::string k_gki = "projects/p/composite-apps/ca/v1/deployment-intent-groups/dig/generic-k8s-intents";

std::string doc(const std::string& anchor, const std::string& body) {
  return "---\nversion: emco/v2\nresourceContext:\n  anchor: " + anchor + "\n" + body;
}

// A workspace with app web on p1+c1 (label edge) and p1+c2, gac registered and named.
void world(test::Workspace& ws) {
  ws.write("kubeconfig", "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n");
  test::write_chart(ws, "web");
  test::write_profile(ws, "profile");
  std::vector<ClusterSpec> clusters = {{"p1", "c1", {"edge"}}, {"p1", "c2", {}}};
  std::string y = doc("controllers", "metadata:\n  name: gac\nspec:\n  type: action\n  priority: 1\n");
  y += test::world_yaml(clusters, {{"web", "    allOf:\n    - clusterProvider: p1\n      cluster: c1\n"
                                           "    - clusterProvider: p1\n      cluster: c2\n"}},
                        "    gac: gki\n");
  y += doc(k_gki, "metadata:\n  name: gki\n");
  ws.apply_text(y);
}

std::string resource_doc(const std::string& name, const std::string& new_object, const std::string& api,
                         const std::string& kind, const std::string& obj, const std::string& file = "") {
  return doc(k_gki + "/gki/resources",
             "metadata:\n  name: " + name + "\nspec:\n  app: web\n  newObject: \"" + new_object +
                 "\"\n  resourceGVK:\n    apiVersion: " + api + "\n    kind: " + kind + "\n    name: " + obj + "\n" +
                 (file.empty() ? "" : "file: " + file + "\n"));
}

std::string customization_doc(const std::string& res, const std::string& name, const std::string& spec,
                              const std::vector<std::string>& files = {}) {
  std::string y = "metadata:\n  name: " + name + "\nspec:\n" + spec;
  if (!files.empty()) {
    y += "files:\n";
    for (const auto& f : files) y += "  - " + f + "\n";
  }
  return doc(k_gki + "/gki/resources/" + res + "/customizations", y);
}

const std::string k_all = "  clusterSpecific: \"false\"\n  clusterInfo:\n    scope: label\n    clusterProvider: p1\n"
                          "    clusterLabel: edge\n    mode: allow\n";

plan::Options fixed() {
  plan::Options o = test::plan_options();
  o.context_id = "9";
  return o;
}

const appcontext::Resource* find(const appcontext::AppContext& ctx, const std::string& cluster, const std::string& r) {
  return ctx.apps.at(0).find_cluster(cluster)->find(r);
}

}  // namespace

TEST_CASE("gac json patch on an existing object, all clusters", "[plan][gac]") {
  test::Workspace ws;
  world(ws);
  ws.apply_text(resource_doc("d", "false", "apps/v1", "Deployment", "r1-web") +
                customization_doc("d", "c", k_all + "  patchType: json\n  patchJson:\n  - op: replace\n"
                                                     "    path: /spec/replicas\n    value: 5\n"
                                                     "  - op: add\n    path: /metadata/annotations\n"
                                                     "    value: {team: blue}\n"));
  auto ctx = plan::build(ws.store(), test::world_dig(), fixed());
  for (const char* c : {"p1+c1", "p1+c2"}) {
    const auto* r = find(ctx, c, "r1-web+Deployment");
    REQUIRE(r);
    CHECK(r->text().find("replicas: 5") != std::string::npos);
    CHECK(r->text().find("team: blue") != std::string::npos);
    CHECK(r->text().find("emco/deployment-id") != std::string::npos);
  }
  // Patched once, shared by both clusters.
  CHECK(find(ctx, "p1+c1", "r1-web+Deployment")->content.get() == find(ctx, "p1+c2", "r1-web+Deployment")->content.get());
  test::check_golden("gac-json.txt", test::dump(ctx));
}

TEST_CASE("gac strategic merge patch merges containers by name", "[plan][gac]") {
  test::Workspace ws;
  world(ws);
  ws.write("sidecar.yaml", "spec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n"
                           "      - name: sidecar\n        image: envoy\n");
  ws.apply_text(resource_doc("d", "false", "apps/v1", "Deployment", "r1-web") +
                customization_doc("d", "c",
                                  "  clusterSpecific: \"true\"\n  clusterInfo:\n    scope: name\n    clusterProvider: p1\n"
                                  "    cluster: c2\n    mode: allow\n  patchType: merge\n",
                                  {"sidecar.yaml"}));
  auto ctx = plan::build(ws.store(), test::world_dig(), fixed());
  const auto& t2 = find(ctx, "p1+c2", "r1-web+Deployment")->text();
  CHECK(t2.find("image: nginx:1.27") != std::string::npos);
  CHECK(t2.find("name: sidecar") != std::string::npos);
  CHECK(t2.find("containerPort: 80") != std::string::npos);  // merged, not replaced
  CHECK(find(ctx, "p1+c1", "r1-web+Deployment")->text().find("sidecar") == std::string::npos);
  test::check_golden("gac-strategic.txt", test::dump(ctx));
}

TEST_CASE("gac new ConfigMap and Secret from files, by label", "[plan][gac]") {
  test::Workspace ws;
  world(ws);
  ws.write("app.properties", "a=1\n");
  ws.write("extra.yaml", "x: y\n");
  ws.write("cm-patch.yaml", "metadata:\n  labels:\n    patched: \"yes\"\n");
  ws.write("token.txt", "s3cret");
  ws.apply_text(
      resource_doc("cm", "true", "v1", "ConfigMap", "settings") +
      customization_doc("cm", "c",
                        "  clusterSpecific: \"true\"\n  clusterInfo:\n    scope: label\n    clusterProvider: p1\n"
                        "    clusterLabel: edge\n    mode: allow\n  patchType: merge\n"
                        "  configMapOptions:\n    dataKeyOptions:\n    - fileName: app.properties\n"
                        "      keyName: application.properties\n    - fileName: cm-patch.yaml\n"
                        "      keyName: unused\n      mergePatch: \"true\"\n",
                        {"app.properties", "extra.yaml", "cm-patch.yaml"}) +
      resource_doc("sec", "true", "v1", "Secret", "creds") + customization_doc("sec", "c", k_all, {"token.txt"}));
  auto ctx = plan::build(ws.store(), test::world_dig(), fixed());
  const auto* cm = find(ctx, "p1+c1", "settings+ConfigMap");
  REQUIRE(cm);
  CHECK(cm->text().find("application.properties: |") != std::string::npos);
  CHECK(cm->text().find("extra.yaml: |") != std::string::npos);
  CHECK(cm->text().find("patched: \"yes\"") != std::string::npos);
  CHECK(cm->text().find("cm-patch.yaml") == std::string::npos);
  CHECK(find(ctx, "p1+c2", "settings+ConfigMap") == nullptr);  // c2 lacks the label
  const auto* sec = find(ctx, "p1+c2", "creds+Secret");
  REQUIRE(sec);
  CHECK(sec->text().find("token.txt: czNjcmV0") != std::string::npos);
  CHECK(sec->text().find("type: Opaque") != std::string::npos);
  // Added resources come after the chart's.
  const auto& res = ctx.apps[0].find_cluster("p1+c1")->resources;
  CHECK(res.back().name == "creds+Secret");
  test::check_golden("gac-new-objects.txt", test::dump(ctx));
}

TEST_CASE("gac: deny matches nothing, no customization does nothing", "[plan][gac]") {
  test::Workspace ws;
  world(ws);
  ws.write("obj.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: robot\n");
  ws.apply_text(resource_doc("sa", "true", "v1", "ServiceAccount", "robot", "obj.yaml") +
                resource_doc("sa2", "true", "v1", "ServiceAccount", "robot2", "obj.yaml") +
                customization_doc("sa", "c",
                                  "  clusterSpecific: \"true\"\n  clusterInfo:\n    scope: name\n    clusterProvider: p1\n"
                                  "    cluster: c1\n    mode: deny\n"));
  auto ctx = plan::build(ws.store(), test::world_dig(), test::plan_options());
  for (const char* c : {"p1+c1", "p1+c2"}) {
    CHECK(find(ctx, c, "robot+ServiceAccount") == nullptr);
    CHECK(find(ctx, c, "robot2+ServiceAccount") == nullptr);
  }
}

TEST_CASE("gac errors name the customization", "[plan][gac][errors]") {
  test::Workspace ws;
  world(ws);
  SECTION("a json patch whose path is missing") {
    ws.apply_text(resource_doc("d", "false", "apps/v1", "Deployment", "r1-web") +
                  customization_doc("d", "bad", k_all + "  patchType: json\n  patchJson:\n  - op: replace\n"
                                                         "    path: /spec/nothing/here\n    value: 1\n"));
    try {
      plan::build(ws.store(), test::world_dig(), test::plan_options());
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::invalid);
      CHECK(e.message().find("customizations/bad") != std::string::npos);
      CHECK(e.message().find("JSON patch does not apply") != std::string::npos);
    }
  }
  SECTION("$(http...)$ values are rejected") {
    ws.apply_text(resource_doc("d", "false", "apps/v1", "Deployment", "r1-web") +
                  customization_doc("d", "url", k_all + "  patchType: json\n  patchJson:\n  - op: add\n"
                                                         "    path: /metadata/labels/x\n"
                                                         "    value: \"$(http://emco:9015/v2/kv?key=x)$\"\n"));
    try {
      plan::build(ws.store(), test::world_dig(), test::plan_options());
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.message().find("over HTTP, which emco does not support") != std::string::npos);
    }
  }
  SECTION("changing an existing object needs a patch type") {
    ws.apply_text(resource_doc("d", "false", "apps/v1", "Deployment", "r1-web") + customization_doc("d", "none", k_all));
    CHECK_THROWS_WITH(plan::build(ws.store(), test::world_dig(), test::plan_options()),
                      Catch::Contains("patchType is required"));
  }
}
