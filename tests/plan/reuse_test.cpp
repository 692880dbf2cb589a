// An update reuses the running context's plan of every app whose inputs did
// not change. Whatever it reuses, the stored context equals a full re-plan.
#include <catch2/catch.hpp>

#include "core/appcontext/appcontext.hpp"
#include "core/plan/plan.hpp"
#include "tests/plan/world.hpp"

using namespace emco;

namespace {

const std::string k_on_all = "    allOf:\n    - clusterProvider: p1\n      clusterLabel: edge\n";
const std::string k_on_c1 = "    allOf:\n    - clusterProvider: p1\n      cluster: c1\n";

std::string doc(const std::string& anchor, const std::string& body) {
  return "---\nversion: emco/v2\nresourceContext:\n  anchor: " + anchor + "\n" + body;
}

plan::Options options(const std::string& id, const std::string& running) {
  plan::Options o = test::plan_options();
  o.context_id = id;
  o.status_context_id = "1000";
  o.update_from = running;
  o.created = "2026-11-22T00:00:00.000Z";
  return o;
}

// Plans the update from `running` as context `id`, stores it and checks it
// against a full plan of the same inputs; returns the apps planned again.
std::vector<std::string> update(test::Workspace& ws, const std::string& running, const std::string& id) {
  auto fresh = plan::build(ws.store(), test::world_dig(), options(id, running));
  std::vector<std::string> replanned;
  for (const auto& a : fresh.apps)
    if (!a.elided) replanned.push_back(a.name);
  appcontext::save(ws.store(), fresh);
  auto full = plan::build(ws.store(), test::world_dig(), options(id, ""));
  for (const auto& a : full.apps) CHECK_FALSE(a.elided);
  CHECK(test::dump(appcontext::load(ws.store(), id)) == test::dump(full));
  return replanned;
}

using Apps = std::vector<std::string>;

}  // namespace

TEST_CASE("an update plans again only the apps whose inputs changed", "[plan][reuse]") {
  test::Workspace ws;
  ws.write("kubeconfig", "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n");
  for (const char* a : {"web", "db", "cache"}) test::write_chart(ws, a);
  test::write_profile(ws, "profile");
  std::vector<test::ClusterSpec> clusters = {{"p1", "c1", {"edge"}}, {"p1", "c2", {"edge"}}, {"p1", "c3", {"edge"}}};
  ws.apply_text(test::world_yaml(clusters, {{"web", k_on_all}, {"db", k_on_all}, {"cache", k_on_all}}));
  auto first = plan::build(ws.store(), test::world_dig(), options("1000", ""));
  appcontext::save(ws.store(), first);

  SECTION("nothing changed") { CHECK(update(ws, "1000", "1001") == Apps{}); }
  SECTION("one app's placement") {
    ws.apply_text(doc("projects/p/composite-apps/ca/v1/deployment-intent-groups/dig/generic-placement-intents/gpi/app-intents",
                      "metadata:\n  name: db-intent\nspec:\n  app: db\n  intent:\n" + k_on_c1));
    CHECK(update(ws, "1000", "1001") == Apps{"db"});
    CHECK(update(ws, "1001", "1002") == Apps{});
  }
  SECTION("one app's override values") {
    ws.apply_text(doc("projects/p/composite-apps/ca/v1/deployment-intent-groups",
                      "metadata:\n  name: dig\nspec:\n  compositeProfile: cp\n  version: r1\n  logicalCloud: lc\n"
                      "  overrideValues:\n  - app: cache\n    values:\n      greeting: changed\n"));
    // The DIG is an input of every app: all of them are planned again.
    CHECK(update(ws, "1000", "1001") == Apps{"cache", "db", "web"});
  }
  SECTION("one app's chart") {
    ws.write("charts/web/templates/cm.yaml",
             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-changed\n");
    ws.apply_text(doc("projects/p/composite-apps/ca/v1/apps", "metadata:\n  name: web\nfile: charts/web\n"));
    CHECK(update(ws, "1000", "1001") == Apps{"web"});
  }
  SECTION("one app's profile") {
    test::write_profile(ws, "profile-db", "greeting: only-db\n");
    ws.apply_text(doc("projects/p/composite-apps/ca/v1/composite-profiles/cp/profiles",
                      "metadata:\n  name: db-profile\nspec:\n  app: db\nfile: profile-db\n"));
    CHECK(update(ws, "1000", "1001") == Apps{"db"});
  }
  SECTION("a cluster's labels") {
    ws.apply_text(doc("cluster-providers/p1/clusters/c3/labels", "clusterLabel: gpu\n"));
    CHECK(update(ws, "1000", "1001") == Apps{"cache", "db", "web"});
  }
  SECTION("a new cluster in the logical cloud") {
    clusters.push_back({"p1", "c4", {"edge"}});
    ws.apply_text(test::world_yaml(clusters, {{"web", k_on_all}, {"db", k_on_all}, {"cache", k_on_all}}));
    CHECK(update(ws, "1000", "1001") == Apps{"cache", "db", "web"});
    CHECK(appcontext::load(ws.store(), "1001").apps[0].clusters.size() == 4);
  }
}
