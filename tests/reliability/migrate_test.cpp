// DIG migrate and clone end to end: the built emco binary against a
// simulated fleet (issue 16 item 4). migrate moves dig1 (composite app
// ca/v1) to the DIG "next" of ca/v2, delivering only the difference, and is
// rolled back across the migrate; clone copies a DIG with its intents.

#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/reliability/fleet.hpp"

using namespace emco::test;
using nlohmann::json;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

std::string doc(const std::string& anchor, const std::string& rest = "") {
  return "---\nversion: emco/v2\nresourceContext:\n  anchor: " + anchor + "\n" + rest;
}

// Composite app ca/v2: a00 with value v2 (changed), a01 as in v1, a02 new;
// DIG "next" (same release name as dig1, so the objects are the same) placing
// every app on every cluster.
std::string v2_setup(Fleet& f, bool approve) {
  std::string y = doc("projects/proj/composite-apps", "metadata:\n  name: ca\nspec:\n  compositeAppVersion: v2\n");
  y += doc("projects/proj/composite-apps/ca/v2/composite-profiles", "metadata:\n  name: prof\n");
  for (const std::string app : {"a00", "a01", "a02"}) {
    std::string value = app == "a00" ? "v2" : "v1";
    fs::path chart = f.root() / "charts-v2" / app;
    write(chart / "Chart.yaml", "apiVersion: v2\nname: " + app + "\nversion: 0.2.0\n");
    write(chart / "values.yaml", "v: " + value + "\n");
    write(chart / "templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-" + app +
                                           "\ndata:\n  v: {{ .Values.v | quote }}\n");
    y += doc("projects/proj/composite-apps/ca/v2/apps", "metadata:\n  name: " + app + "\nfile: charts-v2/" + app + "\n");
    write(f.root() / ("profile-" + app) / "manifest.yaml", "version: v1\ntype:\n  values: \"override_values.yaml\"\n");
    write(f.root() / ("profile-" + app) / "override_values.yaml", "v: " + value + "\n");
    y += doc("projects/proj/composite-apps/ca/v2/composite-profiles/prof/profiles",
             "metadata:\n  name: " + app + "-profile\nspec:\n  app: " + app + "\nfile: profile-" + app + "\n");
  }
  const std::string base = "projects/proj/composite-apps/ca/v2/deployment-intent-groups/next";
  y += doc("projects/proj/composite-apps/ca/v2/deployment-intent-groups",
           "metadata:\n  name: next\nspec:\n  compositeProfile: prof\n  version: dig1\n  logicalCloud: lc\n");
  y += doc(base + "/intents", "metadata:\n  name: intent\nspec:\n  intent:\n    genericPlacementIntent: gpi\n");
  y += doc(base + "/generic-placement-intents", "metadata:\n  name: gpi\n");
  for (const std::string app : {"a00", "a01", "a02"})
    y += doc(base + "/generic-placement-intents/gpi/app-intents",
             "metadata:\n  name: " + app + "-placement\nspec:\n  app: " + app +
                 "\n  intent:\n    allOf:\n      - clusterProvider: p\n        clusterLabel: edge\n");
  if (approve) y += doc(base + "/approve");
  return y;
}

std::string resource_version(Fleet& f, const std::string& cluster, const std::string& name) {
  json o = f.sim().get(cluster, "v1", "ConfigMap", "default", name);
  REQUIRE(o.is_object());
  return o["metadata"].value("resourceVersion", "");
}

}  // namespace

TEST_CASE("migrate moves a running DIG to a new composite app version, delivering only the difference", "[migrate]") {
  Fleet f(2, 2);
  Exit inst = f.emco({"dig", "instantiate", Fleet::dig("dig1")});
  INFO(inst.err);
  REQUIRE(inst.code == 0);
  const std::set<std::string> v1 = {"dig1-a00=v1", "dig1-a01=v1"};
  for (const auto& c : f.sim().cluster_names()) REQUIRE(f.held(c) == v1);

  write(f.root() / "v2.yaml", v2_setup(f, false));
  Exit setup = f.emco({"apply", "-f", "v2.yaml"});
  INFO(setup.err);
  REQUIRE(setup.code == 0);

  SECTION("the target must be Approved, the source instantiated; a refusal changes nothing") {
    Exit e = f.emco({"dig", "migrate", Fleet::dig("dig1"), "--target-version", "v2", "--target-dig", "next"});
    CHECK(e.code == 5);
    CHECK(e.err.find("the target must be Approved (it is Created)") != std::string::npos);
    CHECK(e.err.find("approve it first") != std::string::npos);
    Exit e2 = f.emco({"dig", "migrate", Fleet::dig("dig2"), "--target-version", "v2", "--target-dig", "next"});
    CHECK(e2.code == 5);
    CHECK(e2.err.find("it is not instantiated (state Approved)") != std::string::npos);
    Exit e3 = f.emco({"dig", "migrate", Fleet::dig("dig1"), "--target-version", "v3", "--target-dig", "next"});
    CHECK(e3.code == 4);
    CHECK(e3.err.find("the target deployment intent group 'proj/ca/v3/next' does not exist") != std::string::npos);
    Exit usage = f.emco({"dig", "migrate", Fleet::dig("dig1"), "--target-version", "v2"});
    CHECK(usage.code == 64);
    CHECK(f.state("dig1") == "Instantiated");
    CHECK(f.state("proj/ca/v2/next") == "Created");
    for (const auto& c : f.sim().cluster_names()) CHECK(f.held(c) == v1);
  }

  SECTION("migrate, roll back across it, terminate the target, delete the retired source") {
    Exit approve = f.emco({"dig", "approve", "proj/ca/v2/next"});
    REQUIRE(approve.code == 0);
    const std::string untouched = resource_version(f, "c00", "dig1-a01");
    // The emcoctl anchor form, as upstream's scripts send it.
    write(f.root() / "migrate.yaml",
          doc("projects/proj/composite-apps/ca/v1/deployment-intent-groups/dig1/migrate",
              "metadata:\n  description: to v2\nspec:\n  targetCompositeAppVersion: v2\n  targetDeploymentIntentGroup: next\n"));
    Exit m = f.emco({"apply", "-f", "migrate.yaml"});
    INFO(m.err);
    REQUIRE(m.code == 0);
    CHECK(m.out.find("migrated to deployment intent group 'proj/ca/v2/next' as revision 2") != std::string::npos);
    const std::set<std::string> v2 = {"dig1-a00=v2", "dig1-a01=v1", "dig1-a02=v1"};
    for (const auto& c : f.sim().cluster_names()) CHECK(f.held(c) == v2);
    // The unchanged object was not written again.
    CHECK(resource_version(f, "c00", "dig1-a01") == untouched);
    CHECK(f.state("dig1") == "Updated");
    CHECK(f.state("proj/ca/v2/next") == "Instantiated");
    CHECK(f.status_line("proj/ca/v2/next") == "Instantiated Applied=6");

    // History: the source records where it went, the target its lineage.
    Exit h = f.emco({"dig", "history", "proj/ca/v2/next", "-o", "json"});
    json si = json::parse(h.out);
    REQUIRE(si["actions"].size() >= 2);
    CHECK(si["actions"][si["actions"].size() - 2].value("migratedFrom", "") == "v1/dig1");
    Exit hs = f.emco({"dig", "history", Fleet::dig("dig1"), "-o", "json"});
    CHECK(json::parse(hs.out)["actions"].back().value("migratedTo", "") == "v2/next");

    // The source's revisions moved: rolling it back is refused with a hint,
    // rolling the target back to revision 1 returns the v1 objects.
    Exit rs = f.emco({"dig", "rollback", Fleet::dig("dig1"), "--revision", "1"});
    CHECK(rs.code == 5);
    CHECK(rs.err.find("was migrated") != std::string::npos);
    Exit rb = f.emco({"dig", "rollback", "proj/ca/v2/next", "--revision", "1"});
    INFO(rb.err);
    REQUIRE(rb.code == 0);
    for (const auto& c : f.sim().cluster_names()) CHECK(f.held(c) == v1);

    Exit t = f.emco({"dig", "terminate", "proj/ca/v2/next"});
    INFO(t.err);
    REQUIRE(t.code == 0);
    for (const auto& c : f.sim().cluster_names()) CHECK(f.held(c).empty());
    // The retired source's state allows its delete (only its intents are
    // left in the way); the target's file deletes cleanly.
    Exit del_source = f.emco({"dig", "delete", Fleet::dig("dig1")});
    CHECK(del_source.code == 5);
    CHECK(del_source.err.find("it still has 2 children") != std::string::npos);
    Exit del_target = f.emco({"delete", "-f", "v2.yaml"});
    INFO(del_target.err);
    CHECK(del_target.code == 0);
    CHECK(f.emco({"dig", "get", "proj/ca/v2/next"}).code == 4);
    CHECK(f.integrity() == "ok");
  }
}

TEST_CASE("clone copies a DIG with all its intents, and the copies deploy on their own", "[clone]") {
  Fleet f(2, 1);
  Exit c = f.emco({"dig", "clone", Fleet::dig("dig2"), "--prefix", "copy", "--count", "2", "--start", "1"});
  INFO(c.err);
  REQUIRE(c.code == 0);
  CHECK(c.out.find("cloned as copy-1, copy-2") != std::string::npos);
  for (const std::string name : {"copy-1", "copy-2"}) {
    CHECK(f.state(name) == "Created");
    Exit intents = f.emco({"dig", "app-intent", "list", Fleet::dig(name) + "/gpi", "-o", "json"});
    INFO(intents.err);
    REQUIRE(intents.code == 0);
    CHECK(json::parse(intents.out).size() == 1);
  }
  // spec.version gets the clone's ordinal (upstream: from 0), so the release
  // names of the copies differ.
  Exit g = f.emco({"dig", "get", Fleet::dig("copy-2"), "-o", "json"});
  CHECK(json::parse(g.out)["spec"]["version"] == "dig2-1");

  // A name in use: nothing is created.
  Exit again = f.emco({"dig", "clone", Fleet::dig("dig2"), "--prefix", "copy", "--count", "3"});
  CHECK(again.code == 5);
  CHECK(again.err.find("'proj/ca/v1/copy-1' already exists") != std::string::npos);
  Exit copy0 = f.emco({"dig", "get", Fleet::dig("copy-0")});
  CHECK(copy0.code == 4);

  // The emcoctl anchor form; then a copy deploys on its own.
  write(f.root() / "clone.yaml", doc("projects/proj/composite-apps/ca/v1/deployment-intent-groups/dig1/clone",
                                     "spec:\n  cloneDigNamePrefix: twin\n  numberOfClones: 1\n"));
  Exit ac = f.emco({"apply", "-f", "clone.yaml"});
  INFO(ac.err);
  REQUIRE(ac.code == 0);
  REQUIRE(f.emco({"dig", "approve", Fleet::dig("twin-0")}).code == 0);
  Exit inst = f.emco({"dig", "instantiate", Fleet::dig("twin-0")});
  INFO(inst.err);
  REQUIRE(inst.code == 0);
  for (const auto& cl : f.sim().cluster_names()) CHECK(f.held(cl) == std::set<std::string>{"dig1-0-a00=v1"});
  // Deleting the clone file does not clone again or delete anything.
  Exit d = f.emco({"delete", "-f", "clone.yaml"});
  CHECK(d.code == 0);
  CHECK(f.emco({"dig", "get", Fleet::dig("twin-1")}).code == 4);
  Exit bad = f.emco({"dig", "clone", Fleet::dig("dig2"), "--prefix", "x", "--count", "0"});
  CHECK(bad.code == 3);
  CHECK(bad.err.find("spec.numberOfClones must be between 1 and 10000") != std::string::npos);
}
