#include "tests/cli/fixture.hpp"

#include <catch2/catch.hpp>

namespace emco::test {

std::string doc(const std::string& anchor, const std::string& rest) {
  return "version: emco/v2\nresourceContext:\n  anchor: " + anchor + "\n" + rest;
}

const std::string& kubeconfig_yaml() {
  static const std::string k = R"(apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
users:
- name: u
  user: {token: abc}
)";
  return k;
}

const std::string& base_yaml() {
  static const std::string dig = "projects/proj1/composite-apps/ca/v1/deployment-intent-groups";
  static const std::string y =
      "---\n" + doc("controllers", "metadata:\n  name: rsync\nspec:\n  host: localhost\n  port: 9031\n") +  //
      "---\n" + doc("controllers", "metadata:\n  name: gac\nspec:\n  host: localhost\n  port: 9033\n  type: action\n  priority: 1\n") +
      "---\n" + doc("cluster-providers", "metadata:\n  name: p1\n") +
      "---\n" + doc("cluster-providers/p1/clusters", "metadata:\n  name: c1\nfile: kubeconfig\n") +
      "---\n" + doc("cluster-providers/p1/clusters", "metadata:\n  name: c2\nfile: kubeconfig\n") +
      "---\n" + doc("cluster-providers/p1/clusters/c1/labels", "clusterLabel: edge\n") +
      "---\n" + doc("projects", "metadata:\n  name: proj1\n") +
      "---\n" + doc("projects/proj1/logical-clouds", "metadata:\n  name: lc0\nspec:\n  level: \"0\"\n") +
      "---\n" + doc("projects/proj1/logical-clouds/lc0/cluster-references",
                    "metadata:\n  name: c1\nspec:\n  clusterProvider: p1\n  cluster: c1\n") +
      "---\n" + doc("projects/proj1/composite-apps", "metadata:\n  name: ca\nspec:\n  compositeAppVersion: v1\n") +
      "---\n" + doc("projects/proj1/composite-apps/ca/v1/apps", "metadata:\n  name: collectd\nfile: collectd.tgz\n") +
      "---\n" + doc("projects/proj1/composite-apps/ca/v1/composite-profiles", "metadata:\n  name: cprof\n") +
      "---\n" + doc("projects/proj1/composite-apps/ca/v1/composite-profiles/cprof/profiles",
                    "metadata:\n  name: collectd-profile\nspec:\n  app: collectd\nfile: profile.tgz\n") +
      "---\n" + doc(dig, "metadata:\n  name: dig1\nspec:\n  compositeProfile: cprof\n  version: r1\n  logicalCloud: lc0\n") +
      "---\n" + doc(dig + "/dig1/intents",
                    "metadata:\n  name: intent1\nspec:\n  intent:\n    genericPlacementIntent: gpi\n    gac: gac-intent\n") +
      "---\n" + doc(dig + "/dig1/generic-placement-intents", "metadata:\n  name: gpi\n") +
      "---\n" + doc(dig + "/dig1/generic-placement-intents/gpi/app-intents",
                    "metadata:\n  name: collectd-placement\nspec:\n  app: collectd\n  intent:\n    allOf:\n"
                    "    - clusterProvider: p1\n      clusterLabel: edge\n") +
      "---\n" + doc(dig, "metadata:\n  name: dig-approved\nspec:\n  compositeProfile: cprof\n  version: r2\n  logicalCloud: lc0\n") +
      "---\n" + doc(dig + "/dig-approved/approve");
  return y;
}

const Sandbox& base_sandbox() {
  static const Sandbox base;
  static bool built = false;
  if (!built) {
    base.init();
    base.write("kubeconfig", kubeconfig_yaml());
    make_chart(base.root(), "collectd");
    make_profile(base.root(), "profile.tgz");
    base.write("base.yaml", base_yaml());
    Run r = base.emco({"apply", "-f", "base.yaml"});
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    built = true;
  }
  return base;
}

}  // namespace emco::test
