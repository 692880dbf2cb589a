// A deployment intent group in a standard logical cloud: planned by
// core/plan into the cloud's namespace, delivered with the user's issued
// kubeconfig, so an object the user may not create fails on the cluster with
// the API's 403 message; the cloud cannot be terminated under it.

#include "world.hpp"

#include "core/appcontext/appcontext.hpp"
#include "core/status/status.hpp"

using namespace emco;
using namespace emco::lctest;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// Two charts: "good" (a ConfigMap the user may create) and "bad" (a Secret
// it may not), with their profiles, placed on every cluster of the cloud.
std::string composite_app(World& w) {
  for (const std::string app : {"good", "bad"}) {
    write(w.dir / "charts" / app / "Chart.yaml", "apiVersion: v2\nname: " + app + "\nversion: 0.1.0\n");
    write(w.dir / "profiles" / app / "manifest.yaml", "version: v1\ntype:\n  values: \"override_values.yaml\"\n");
    write(w.dir / "profiles" / app / "override_values.yaml", "note: x\n");
  }
  write(w.dir / "charts/good/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: good-cm\ndata:\n  a: b\n");
  write(w.dir / "charts/bad/templates/secret.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: bad-secret\nstringData:\n  a: b\n");
  const std::string ca = "projects/proj/composite-apps/ca/v1";
  std::string y = doc("projects/proj/composite-apps", "metadata: {name: ca}\nspec: {compositeAppVersion: v1}") +
                  doc(ca + "/composite-profiles", "metadata: {name: prof}");
  for (const std::string app : {"good", "bad"})
    y += doc(ca + "/apps", "metadata: {name: " + app + "}\nfile: charts/" + app) +
         doc(ca + "/composite-profiles/prof/profiles",
             "metadata: {name: " + app + "-profile}\nspec: {app: " + app + "}\nfile: profiles/" + app);
  y += doc(ca + "/deployment-intent-groups",
           "metadata: {name: dig}\nspec: {compositeProfile: prof, version: r1, logicalCloud: tenant}") +
       doc(ca + "/deployment-intent-groups/dig/intents", "metadata: {name: intent}\nspec: {intent: {genericPlacementIntent: gpi}}") +
       doc(ca + "/deployment-intent-groups/dig/generic-placement-intents", "metadata: {name: gpi}");
  for (const std::string app : {"good", "bad"}) {
    std::string all;
    for (const auto& n : w.names) all += std::string(all.empty() ? "" : ", ") + "{clusterProvider: p, cluster: " + n + "}";
    y += doc(ca + "/deployment-intent-groups/dig/generic-placement-intents/gpi/app-intents",
             "metadata: {name: " + app + "-placement}\nspec: {app: " + app + ", intent: {allOf: [" + all + "]}}");
  }
  return y;
}

resource::Key dig() { return resource::Key::parse("project=proj/compositeApp=ca/compositeAppVersion=v1/deploymentIntentGroup=dig"); }

lifecycle::OperationResult dig_op(World& w, const std::string& name) {
  return lifecycle::run(*w.st, resource::kind("deploymentIntentGroup"), dig(), name, json::object(), system_clock(), w.options());
}

}  // namespace

TEST_CASE("a DIG in a standard logical cloud deploys as the cloud's user", "[logical_cloud][sim][dig]") {
  World w(2);
  w.permit_namespace();
  for (const auto& n : w.names) w.reference(n);
  w.apply(composite_app(w));
  dig_op(w, "approve");

  // Not before the cloud is instantiated.
  try {
    dig_op(w, "instantiate");
    FAIL("instantiate must be refused");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::conflict);
    CHECK(e.message() == "cannot instantiate deployment intent group 'proj/ca/v1/dig': logical cloud 'tenant' has never "
                         "been instantiated");
  }

  REQUIRE(w.op("instantiate").delivery == lifecycle::Delivery::done);
  auto r = dig_op(w, "instantiate");
  // The Secret is forbidden to alice: that app fails, the other one deploys.
  CHECK(r.delivery == lifecycle::Delivery::failed);
  auto h = appcontext::header(*w.st, r.context);
  CHECK(h.meta.at("Namespace") == "tenant-ns");
  CHECK(h.meta.at("Level") == "1");
  for (const auto& n : w.names) {
    CHECK(w.sim.get(n, "v1", "ConfigMap", "tenant-ns", "good-cm")["data"]["a"] == "b");
    CHECK(w.sim.get(n, "v1", "ConfigMap", "default", "good-cm").is_null());
    CHECK(w.sim.get(n, "v1", "Secret", "tenant-ns", "bad-secret").is_null());
  }
  int failed = 0, applied = 0;
  for (const auto& s : appcontext::resource_states(*w.st, r.context)) {
    if (s.resource == "bad-secret+Secret") {
      ++failed;
      CHECK(s.status == "Failed");
      CHECK(s.message.find("secrets \"bad-secret\" is forbidden: User \"alice\" cannot") != std::string::npos);
    }
    if (s.resource == "good-cm+ConfigMap" && s.status == "Applied") ++applied;
  }
  CHECK(failed == 2);
  CHECK(applied == 2);
  status::Query q;
  q.status = "deployed";
  q.output = "summary";
  CHECK(status::dig_status(*w.st, dig(), q).value("deployedCounts", json::object()) == json{{"Applied", 2}, {"Failed", 2}});

  // The cloud cannot be terminated under an instantiated DIG.
  try {
    w.op("terminate");
    FAIL("terminate must be refused");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::conflict);
    CHECK(e.message() == "cannot terminate logical cloud 'proj/tenant': 1 deployment intent group is instantiated in it: "
                         "'projects/proj/composite-apps/ca/v1/deployment-intent-groups/dig'");
  }

  dig_op(w, "terminate");
  for (const auto& n : w.names) CHECK(w.sim.get(n, "v1", "ConfigMap", "tenant-ns", "good-cm").is_null());
  REQUIRE(w.op("terminate").delivery == lifecycle::Delivery::done);
  for (const auto& n : w.names) CHECK(w.objects(n).empty());
}
