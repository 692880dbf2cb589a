// Positive end-to-end tests: templated flows in upstream EMCO's style (written by
// the test; the upstream files themselves run in scripts/flows.sh), re-apply semantics,
// JSON output, noun commands, anchors as addresses, emcoctl mode, workspace
// discovery, permissions and concurrent writers.

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/cli/fixture.hpp"
#include "tests/test_store.hpp"

namespace emco::test {
namespace {

using nlohmann::json;

Run ok(const Sandbox& s, const std::vector<std::string>& args, const RunOptions& o = {}) {
  Run r = s.emco(args, o);
  std::string cmd;
  for (const auto& a : args) cmd += " " + a;
  INFO("emco" << cmd << "\nstdout:\n" << r.out << "stderr:\n" << r.err);
  REQUIRE(r.code == 0);
  return r;
}

size_t count(const std::string& text, const std::string& word) {
  size_t n = 0;
  for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

// A flow in upstream EMCO's style (emcoctl documents that are Go templates
// over a values file), written by the test: controllers, a provider with two
// clusters, a project with an admin cloud, a composite app whose app goes to
// the clusters of `.Cluster` (04 moves it to `.UpdateCluster`), a generic k8s
// intent with a new object and a JSON-patch customization, kv pairs, the
// cloud's cluster reference and the DIG's approve.
void write_flow(const Sandbox& s) {
  make_chart(s.path("pkg"), "web");
  make_profile(s.path("pkg"), "web_profile.tgz");
  s.write("kube1", kubeconfig_yaml());
  s.write("kube2", kubeconfig_yaml());
  s.write("values.yaml", "ProjectName: proj-flow\nClusterProvider: prov\nClusterLabel: edge\nAdminCloud: default\n"
                         "CompositeApp: capp\nCompositeProfile: cprof\nPlacementIntent: gpi\nDeploymentIntent: dig\n"
                         "GacIntent: gac-intent\nPackagesPath: " + s.path("pkg").string() + "\n"
                         "Clusters:\n  - {Name: cluster1, KubeConfig: " + s.path("kube1").string() + "}\n"
                         "  - {Name: cluster2, KubeConfig: " + s.path("kube2").string() + "}\n"
                         "Applist:\n  - {Name: web, Cluster: [cluster1], UpdateCluster: [cluster2]}\n");
  const std::string ca = "projects/{{ $.ProjectName }}/composite-apps/{{ $.CompositeApp }}/v1";
  const std::string dig = ca + "/deployment-intent-groups/{{ $.DeploymentIntent }}";
  s.write("flow/00-controllers.yaml",
          doc("controllers", "metadata:\n  name: rsync\nspec:\n  host: localhost\n  port: 9031\n") + "---\n" +
              doc("controllers", "metadata:\n  name: gac\nspec:\n  host: localhost\n  port: 9033\n  type: action\n  priority: 1\n"));
  s.write("flow/01-prerequisites.yaml",
          doc("cluster-providers", "metadata:\n  name: {{ .ClusterProvider }}\n") +
              "{{- range $index, $cluster := .Clusters }}\n---\n" +
              doc("cluster-providers/{{ $.ClusterProvider }}/clusters", "metadata:\n  name: {{ $cluster.Name }}\nfile:\n  {{ $cluster.KubeConfig }}\n") +
              "---\n" + doc("cluster-providers/{{ $.ClusterProvider }}/clusters/{{ $cluster.Name }}/labels", "clusterLabel: {{ $.ClusterLabel }}\n") +
              "---\n" + doc("cluster-providers/{{ $.ClusterProvider }}/clusters/{{ $cluster.Name }}/kv-pairs",
                            "metadata:\n  name: gateway\nspec:\n  kv:\n    - address: \"10.0.0.{{ $index }}\"\n") +
              "{{- end }}\n---\n" + doc("projects", "metadata:\n  name: {{ .ProjectName }}\n") +
              "---\n" + doc("projects/{{ .ProjectName }}/logical-clouds", "metadata:\n  name: {{ .AdminCloud }}\nspec:\n  level: \"0\"\n") +
              "{{- range .Clusters }}\n---\n" +
              doc("projects/{{ $.ProjectName }}/logical-clouds/{{ $.AdminCloud }}/cluster-references",
                  "metadata:\n  name: ref-{{ .Name }}\nspec:\n  clusterProvider: {{ $.ClusterProvider }}\n  cluster: {{ .Name }}\n") +
              "{{- end }}\n");
  auto placement = [&](const char* clusters) {
    return "{{- range .Applist }}\n---\n" +
           doc(dig + "/generic-placement-intents/{{ $.PlacementIntent }}/app-intents",
               "metadata:\n  name: {{ .Name }}-placement-intent\nspec:\n  app: {{ .Name }}\n  intent:\n    allOf:\n"
               "{{- range ." + std::string(clusters) + " }}\n    - clusterProvider: {{ $.ClusterProvider }}\n      cluster: {{ . }}\n{{- end }}\n") +
           "{{- end }}\n";
  };
  s.write("flow/02-deployment-intent.yaml",
          doc("projects/{{.ProjectName}}/composite-apps", "metadata:\n  name: {{ .CompositeApp }}\nspec:\n  compositeAppVersion: v1\n") +
              "{{- range .Applist }}\n---\n" +
              doc(ca + "/apps", "metadata:\n  name: {{ .Name }}\nfile:\n  {{ $.PackagesPath }}/{{ .Name }}.tgz\n") +
              "{{- end }}\n---\n" + doc(ca + "/composite-profiles", "metadata:\n  name: {{ .CompositeProfile }}\n") +
              "{{- range .Applist }}\n---\n" +
              doc(ca + "/composite-profiles/{{ $.CompositeProfile }}/profiles",
                  "metadata:\n  name: {{ .Name }}-profile\nspec:\n  app: {{ .Name }}\nfile:\n  {{ $.PackagesPath }}/{{ .Name }}_profile.tgz\n") +
              "{{- end }}\n---\n" +
              doc(ca + "/deployment-intent-groups",
                  "metadata:\n  name: {{ .DeploymentIntent }}\nspec:\n  compositeProfile: {{ .CompositeProfile }}\n  version: r1\n"
                  "  logicalCloud: {{ .AdminCloud }}\n  overrideValues: []\n") +
              "---\n" + doc(dig + "/intents",
                            "metadata:\n  name: intent\nspec:\n  intent:\n    genericPlacementIntent: {{ .PlacementIntent }}\n    gac: {{ .GacIntent }}\n") +
              "---\n" + doc(dig + "/generic-placement-intents", "metadata:\n  name: {{ .PlacementIntent }}\n") + placement("Cluster"));
  s.write("flow/04-update-deployment-intent.yaml", placement("UpdateCluster"));
  s.write("flow/netpol.yaml", "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: netpol-db\nspec:\n"
                              "  podSelector:\n    matchLabels:\n      role: db\n");
  s.write("flow/gac.yaml",
          doc(dig + "/generic-k8s-intents", "metadata:\n  name: {{ .GacIntent }}\n") + "---\n" +
              doc(dig + "/generic-k8s-intents/{{ .GacIntent }}/resources",
                  "metadata:\n  name: netpol-db\nspec:\n  app: web\n  newObject: \"true\"\n  resourceGVK:\n"
                  "    apiVersion: networking.k8s.io/v1\n    kind: networkpolicy\n    name: netpol-db\nfile:\n  netpol.yaml\n") +
              "---\n" +
              doc(dig + "/generic-k8s-intents/{{ .GacIntent }}/resources/netpol-db/customizations",
                  "metadata:\n  name: netpol-db-customization\nspec:\n  clusterSpecific: \"false\"\n  clusterInfo:\n"
                  "    scope: label\n    clusterProvider: {{ .ClusterProvider }}\n    cluster: \"dummy\"\n"
                  "    clusterLabel: {{ .ClusterLabel }}\n    mode: allow\n  patchType: \"json\"\n  patchJson: [\n"
                  "    {\"op\": \"replace\", \"path\": \"/spec/podSelector/matchLabels/role\", \"value\": \"database\"}\n  ]\n") +
              "---\n" + doc(dig + "/approve"));
}

const std::vector<std::string> k_flow_files = {"00-controllers.yaml", "01-prerequisites.yaml", "02-deployment-intent.yaml"};

}  // namespace

TEST_CASE("a templated flow: apply, unchanged on re-apply, configured on change, delete in reverse", "[flows]") {
  Sandbox s;
  s.init();
  write_flow(s);
  for (const auto& f : k_flow_files) {
    Run r = ok(s, {"apply", "-f", "flow/" + f, "-v", "values.yaml"});
    CHECK(count(r.out, " created") >= 1);
    CHECK(count(r.out, " created") == count(r.out, "\n"));
  }
  Run state = ok(s, {"get", "projects/proj-flow/composite-apps/capp/v1/deployment-intent-groups", "-o", "json"});
  json digs = json::parse(state.out);
  REQUIRE(digs.is_array());
  REQUIRE(digs.size() == 1);
  CHECK(digs[0]["metadata"]["name"] == "dig");
  CHECK(digs[0]["spec"]["logicalCloud"] == "default");
  json kv = json::parse(ok(s, {"cluster", "kv", "get", "prov/cluster2/gateway", "-o", "json"}).out);
  CHECK(kv["spec"]["kv"][0]["address"] == "10.0.0.1");
  json ref = json::parse(ok(s, {"lc", "cluster-ref", "get", "proj-flow/default/ref-cluster2", "-o", "json"}).out);
  CHECK(ref["spec"]["cluster"] == "cluster2");

  // Re-applying the same files changes nothing.
  const std::string before = s.dump();
  for (const auto& f : k_flow_files) {
    Run r = ok(s, {"apply", "-f", "flow/" + f, "-v", "values.yaml"});
    CHECK(count(r.out, " created") == 0);
    CHECK(count(r.out, " configured") == 0);
    CHECK(count(r.out, " unchanged") == count(r.out, "\n"));
  }
  CHECK(s.dump() == before);

  // 04 rewrites the app intent (web moves to cluster2): configured.
  Run upd = ok(s, {"apply", "-f", "flow/04-update-deployment-intent.yaml", "-v", "values.yaml"});
  CHECK(upd.out.find("app-intents/web-placement-intent configured") != std::string::npos);
  Run ai = ok(s, {"get",
                  "projects/proj-flow/composite-apps/capp/v1/deployment-intent-groups/dig/generic-placement-intents/gpi/"
                  "app-intents/web-placement-intent",
                  "-o", "json"});
  CHECK(json::parse(ai.out)["spec"]["intent"]["allOf"][0]["cluster"] == "cluster2");

  // Delete in reverse file order: the workspace ends empty.
  for (auto it = k_flow_files.rbegin(); it != k_flow_files.rend(); ++it) {
    Run r = s.emco({"delete", "-f", "flow/" + *it, "-v", "values.yaml"});
    INFO(*it << "\n" << r.out << r.err);
    CHECK(r.code == 0);
  }
  Sandbox empty;
  empty.init();
  CHECK(ok(s, {"get", "projects", "-o", "json"}).out == ok(empty, {"get", "projects", "-o", "json"}).out);
  CHECK(ok(s, {"get", "cluster-providers", "-o", "json"}).out == "[]\n");
  CHECK(ok(s, {"get", "controllers", "-o", "json"}).out == "[]\n");
}

TEST_CASE("a templated flow with generic k8s intents applies up to approve, and re-applies unchanged", "[flows]") {
  Sandbox s;
  s.init();
  write_flow(s);
  for (const auto& f : k_flow_files) ok(s, {"apply", "-f", "flow/" + f, "-v", "values.yaml"});
  ok(s, {"apply", "-f", "flow/gac.yaml", "-v", "values.yaml"});
  // gac.yaml ends with the DIG's approve.
  Run status = ok(s, {"dig", "status", "proj-flow/capp/v1/dig", "-o", "json"});
  CHECK(json::parse(status.out)["deployedStatus"] == "Approved");
  const std::string gac = "projects/proj-flow/composite-apps/capp/v1/deployment-intent-groups/dig/generic-k8s-intents/"
                          "gac-intent/resources";
  json resources = json::parse(ok(s, {"get", gac, "-o", "json"}).out);
  REQUIRE(resources.size() == 1);
  CHECK(resources[0]["spec"]["resourceGVK"]["kind"] == "networkpolicy");
  json cu = json::parse(ok(s, {"get", gac + "/netpol-db/customizations/netpol-db-customization", "-o", "json"}).out);
  CHECK(cu["spec"]["patchJson"][0]["value"] == "database");
  const std::string before = s.dump();
  Run again = ok(s, {"apply", "-f", "flow/gac.yaml", "-v", "values.yaml"});
  CHECK(count(again.out, " configured") == 0);
  CHECK(count(again.out, " created") == 0);
  CHECK(s.dump() == before);
}

namespace {

TEST_CASE("output: -o json is stable and parseable for lists, single resources and batch results", "[flows]") {
  Sandbox s;
  s.copy_from(base_sandbox());
  Run a = ok(s, {"get", "cluster-providers/p1/clusters", "-o", "json"});
  Run b = ok(s, {"cluster", "list", "-o", "json"});
  CHECK(a.out == b.out);
  json clusters = json::parse(a.out);
  REQUIRE(clusters.size() == 2);
  CHECK(clusters[0]["metadata"]["name"] == "c1");
  CHECK(clusters[1]["metadata"]["name"] == "c2");
  CHECK(ok(s, {"cluster", "list", "-o", "json"}).out == a.out);  // same bytes every time

  json one = json::parse(ok(s, {"cluster", "get", "p1/c1", "-o", "json"}).out);
  CHECK(one.is_object());
  CHECK(one["metadata"]["name"] == "c1");

  json label = json::parse(ok(s, {"get", "cluster-providers/p1/clusters/c1/labels/edge", "-o", "json"}).out);
  CHECK(label == json{{"clusterLabel", "edge"}});

  s.write("more.yaml", doc("projects", "metadata:\n  name: p2\n") + "---\n" + doc("projects", "metadata:\n  name: proj1\n"));
  json result = json::parse(ok(s, {"apply", "-f", "more.yaml", "-o", "json"}).out);
  REQUIRE(result.size() == 2);
  CHECK(result[0]["outcome"] == "created");
  CHECK(result[0]["anchor"] == "projects/p2");
  CHECK(result[0]["where"] == "more.yaml:1");
  CHECK(result[1]["outcome"] == "unchanged");
  CHECK(result[1]["kind"] == "project");

  CHECK(ok(s, {"project", "list", "-o", "yaml"}).out.find("name: p2") != std::string::npos);
  Run names = ok(s, {"project", "list", "-o", "name"});
  CHECK(names.out == "projects/p2\nprojects/proj1\n");

  // -o yaml is kubectl's (goyaml.v2 through sigs.k8s.io/yaml): keys sorted, strings that
  // would read back as another type quoted, multi-line strings literal, long ones folded.
  ok(s, {"project", "create", "y1", "--description", "yes"});
  ok(s, {"project", "create", "y2", "--description", "0123"});
  ok(s, {"project", "create", "y3", "--description", "two\nlines"});
  ok(s, {"project", "create", "y4", "--description",
         "a long description that goes past the eighty column limit of goyaml, so it folds here"});
  Run y = ok(s, {"get", "projects/y1", "projects/y2", "projects/y3", "projects/y4", "-o", "yaml"});
  CHECK(y.out ==
        "metadata:\n  description: \"yes\"\n  name: y1\nspec: {}\n---\n"
        "metadata:\n  description: \"0123\"\n  name: y2\nspec: {}\n---\n"
        "metadata:\n  description: |-\n    two\n    lines\n  name: y3\nspec: {}\n---\n"
        "metadata:\n  description: a long description that goes past the eighty column limit of goyaml,\n"
        "    so it folds here\n  name: y4\nspec: {}\n");
  json back = json::parse(ok(s, {"get", "projects/y3", "-o", "json"}).out);
  CHECK(back["metadata"]["description"] == "two\nlines");
}

// Every noun: create, get, list, update, delete through the noun commands,
// with the resource's anchor accepted wherever an address is.
TEST_CASE("noun commands create, get, list, update and delete every noun", "[flows]") {
  Sandbox s;
  s.init();
  s.write("kubeconfig", kubeconfig_yaml());
  make_chart(s.root(), "web");
  make_profile(s.root(), "web-profile.tgz");
  struct Step {
    std::vector<std::string> args;
    std::string expect;  // substring of stdout
  };
  const std::vector<Step> create = {
      {{"controller", "register", "rsync", "--host", "localhost", "--port", "9031"}, "controllers/rsync created"},
      {{"controller", "register", "gac", "--type", "action", "--priority", "2"}, "controllers/gac created"},
      {{"controller", "dtc", "register", "nps", "--type", "action", "--priority", "1"}, "dtc-controllers/nps created"},
      {{"cluster", "provider", "create", "edge", "--description", "edge sites"}, "cluster-providers/edge created"},
      {{"cluster", "create", "edge/e1", "--kubeconfig", "kubeconfig"}, "cluster-providers/edge/clusters/e1 created"},
      {{"cluster", "sync-object", "create", "edge/git", "--kv", "url=https://git.example/fleet.git", "--kv", "gitToken=s3cret"},
       "cluster-providers/edge/cluster-sync-objects/git created"},
      {{"cluster", "create", "edge/e2", "--gitops-type", "fluxcd", "--gitops-reference-object", "git"},
       "cluster-providers/edge/clusters/e2 created"},
      {{"cluster", "label", "add", "edge/e1/zone-a"}, "cluster-providers/edge/clusters/e1/labels/zone-a created"},
      {{"cluster", "kv", "create", "edge/e1/istio", "--kv", "addr=10.0.0.1"}, "cluster-providers/edge/clusters/e1/kv-pairs/istio created"},
      {{"project", "create", "p"}, "projects/p created"},
      {{"lc", "create", "p/admin", "--level", "0"}, "projects/p/logical-clouds/admin created"},
      {{"lc", "create", "p/tenant", "--namespace", "tenant", "--user", "alice"}, "projects/p/logical-clouds/tenant created"},
      {{"lc", "cluster-ref", "create", "p/admin/e1", "--cluster", "edge/e1"}, "projects/p/logical-clouds/admin/cluster-references/e1 created"},
      {{"lc", "quota", "create", "p/tenant/q", "--set", "pods=10"}, "projects/p/logical-clouds/tenant/cluster-quotas/q created"},
      {{"lc", "permission", "create", "p/tenant/perm", "--namespace", "tenant", "--api-group", "", "--resource", "pods", "--verb", "get"},
       "projects/p/logical-clouds/tenant/user-permissions/perm created"},
      {{"lc", "kv", "create", "p/tenant/kv", "--kv", "a=b"}, "projects/p/logical-clouds/tenant/kv-pairs/kv created"},
      {{"app", "composite", "create", "p/ca/v1"}, "projects/p/composite-apps/ca/v1 created"},
      {{"app", "create", "p/ca/v1/web", "--chart", "web.tgz"}, "projects/p/composite-apps/ca/v1/apps/web created"},
      {{"app", "create", "projects/p/composite-apps/ca/v1/apps/db", "--chart", ".chart-dir/db"}, "apps/db created"},
      {{"app", "dependency", "create", "p/ca/v1/web/needs-db", "--on", "db", "--op-status", "Ready", "--wait", "5"},
       "apps/web/dependency/needs-db created"},
      {{"app", "composite-profile", "create", "p/ca/v1/prof"}, "composite-profiles/prof created"},
      {{"app", "profile", "create", "p/ca/v1/prof/web-profile", "--app", "web", "--profile", "web-profile.tgz"},
       "composite-profiles/prof/profiles/web-profile created"},
      {{"dig", "create", "p/ca/v1/d", "--composite-profile", "prof", "--release", "r1", "--logical-cloud", "admin", "--override",
        "web:replicas=2"},
       "deployment-intent-groups/d created"},
      {{"dig", "placement", "create", "p/ca/v1/d/place"}, "generic-placement-intents/place created"},
      {{"dig", "intent", "create", "p/ca/v1/d/i", "--placement", "place", "--controller", "gac=g"}, "intents/i created"},
      {{"dig", "app-intent", "create", "p/ca/v1/d/place/web", "--app", "web", "--all-of", "edge/label=zone-a"},
       "app-intents/web created"},
  };
  // A chart directory (not a package) for the db app.
  s.write(".chart-dir/db/Chart.yaml", "apiVersion: v2\nname: db\nversion: 0.1.0\n");
  s.write(".chart-dir/db/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: db\n");
  for (const auto& st : create) {
    Run r = ok(s, st.args);
    INFO(r.out);
    CHECK(r.out.find(st.expect) != std::string::npos);
  }
  // get by address and by anchor give the same object.
  const std::vector<std::pair<std::vector<std::string>, std::string>> gets = {
      {{"cluster", "get", "edge/e1"}, "cluster-providers/edge/clusters/e1"},
      {{"cluster", "provider", "get", "edge"}, "cluster-providers/edge"},
      {{"cluster", "label", "get", "edge/e1/zone-a"}, "cluster-providers/edge/clusters/e1/labels/zone-a"},
      {{"cluster", "kv", "get", "edge/e1/istio"}, "cluster-providers/edge/clusters/e1/kv-pairs/istio"},
      {{"cluster", "sync-object", "get", "edge/git"}, "cluster-providers/edge/cluster-sync-objects/git"},
      {{"project", "get", "p"}, "projects/p"},
      {{"lc", "get", "p/tenant"}, "projects/p/logical-clouds/tenant"},
      {{"lc", "cluster-ref", "get", "p/admin/e1"}, "projects/p/logical-clouds/admin/cluster-references/e1"},
      {{"lc", "quota", "get", "p/tenant/q"}, "projects/p/logical-clouds/tenant/cluster-quotas/q"},
      {{"lc", "permission", "get", "p/tenant/perm"}, "projects/p/logical-clouds/tenant/user-permissions/perm"},
      {{"lc", "kv", "get", "p/tenant/kv"}, "projects/p/logical-clouds/tenant/kv-pairs/kv"},
      {{"app", "composite", "get", "p/ca/v1"}, "projects/p/composite-apps/ca/v1"},
      {{"app", "get", "p/ca/v1/web"}, "projects/p/composite-apps/ca/v1/apps/web"},
      {{"app", "dependency", "get", "p/ca/v1/web/needs-db"}, "projects/p/composite-apps/ca/v1/apps/web/dependency/needs-db"},
      {{"app", "composite-profile", "get", "p/ca/v1/prof"}, "projects/p/composite-apps/ca/v1/composite-profiles/prof"},
      {{"app", "profile", "get", "p/ca/v1/prof/web-profile"}, "projects/p/composite-apps/ca/v1/composite-profiles/prof/profiles/web-profile"},
      {{"dig", "get", "p/ca/v1/d"}, "projects/p/composite-apps/ca/v1/deployment-intent-groups/d"},
      {{"dig", "intent", "get", "p/ca/v1/d/i"}, "projects/p/composite-apps/ca/v1/deployment-intent-groups/d/intents/i"},
      {{"dig", "placement", "get", "p/ca/v1/d/place"},
       "projects/p/composite-apps/ca/v1/deployment-intent-groups/d/generic-placement-intents/place"},
      {{"dig", "app-intent", "get", "p/ca/v1/d/place/web"},
       "projects/p/composite-apps/ca/v1/deployment-intent-groups/d/generic-placement-intents/place/app-intents/web"},
      {{"controller", "get", "gac"}, "controllers/gac"},
      {{"controller", "dtc", "get", "nps"}, "dtc-controllers/nps"},
  };
  for (const auto& [args, anchor] : gets) {
    auto by_address = args;
    by_address.insert(by_address.end(), {"-o", "json"});
    auto by_anchor = std::vector<std::string>(args.begin(), args.end() - 1);
    by_anchor.insert(by_anchor.end(), {anchor, "-o", "json"});
    std::string a = ok(s, by_address).out;
    CHECK(a == ok(s, by_anchor).out);
    CHECK(a == ok(s, {"get", anchor, "-o", "json"}).out);
    CHECK(json::parse(a).is_object());
  }
  // Specific values made it through the flags.
  CHECK(json::parse(ok(s, {"dig", "get", "p/ca/v1/d", "-o", "json"}).out)["spec"]["overrideValues"][0]["values"]["replicas"] == "2");
  CHECK(json::parse(ok(s, {"dig", "app-intent", "get", "p/ca/v1/d/place/web", "-o", "json"}).out)["spec"]["intent"]["selector"] ==
        "label");
  CHECK(json::parse(ok(s, {"cluster", "sync-object", "get", "edge/git", "-o", "json"}).out)["spec"]["kv"][1]["gitToken"] ==
        "<redacted>");
  CHECK(json::parse(ok(s, {"cluster", "sync-object", "get", "edge/git", "-o", "json", "--show-secrets"}).out)["spec"]["kv"][1]
                   ["gitToken"] == "s3cret");
  // list, with and without a parent.
  CHECK(ok(s, {"cluster", "list"}).out.find("e2") != std::string::npos);
  CHECK(json::parse(ok(s, {"cluster", "list", "edge", "-o", "json"}).out).size() == 2);
  CHECK(json::parse(ok(s, {"cluster", "list", "cluster-providers/edge", "-o", "json"}).out).size() == 2);
  CHECK(json::parse(ok(s, {"lc", "list", "p", "-o", "json"}).out).size() == 2);
  CHECK(json::parse(ok(s, {"app", "list", "p/ca/v1", "-o", "json"}).out).size() == 2);
  CHECK(json::parse(ok(s, {"controller", "list", "-o", "json"}).out).size() == 2);
  // update changes only what is given.
  CHECK(ok(s, {"project", "update", "p", "--description", "new"}).out.find("projects/p configured") != std::string::npos);
  CHECK(ok(s, {"project", "update", "p", "--description", "new"}).out.find("projects/p unchanged") != std::string::npos);
  ok(s, {"controller", "update", "gac", "--priority", "5"});
  json gac = json::parse(ok(s, {"controller", "get", "gac", "-o", "json"}).out);
  CHECK(gac["spec"]["priority"] == 5);
  CHECK(gac["spec"]["type"] == "action");
  ok(s, {"app", "update", "p/ca/v1/web", "--description", "web app"});
  CHECK(json::parse(ok(s, {"app", "get", "p/ca/v1/web", "-o", "json"}).out)["metadata"]["description"] == "web app");
  // lifecycle through the noun commands.
  CHECK(ok(s, {"dig", "approve", "p/ca/v1/d"}).out.find("approved") != std::string::npos);
  CHECK(json::parse(ok(s, {"dig", "status", "p/ca/v1/d", "-o", "json"}).out)["deployedStatus"] == "Approved");
  // delete, children first, by address and by anchor.
  const std::vector<std::vector<std::string>> deletes = {
      {"dig", "app-intent", "delete", "p/ca/v1/d/place/web"},
      {"dig", "intent", "delete", "projects/p/composite-apps/ca/v1/deployment-intent-groups/d/intents/i"},
      {"dig", "placement", "delete", "p/ca/v1/d/place"},
      {"dig", "delete", "p/ca/v1/d"},
      {"app", "profile", "delete", "p/ca/v1/prof/web-profile"},
      {"app", "composite-profile", "delete", "p/ca/v1/prof"},
      {"app", "dependency", "delete", "p/ca/v1/web/needs-db"},
      {"app", "delete", "p/ca/v1/web"},
      {"app", "delete", "p/ca/v1/db"},
      {"app", "composite", "delete", "p/ca/v1"},
      {"lc", "kv", "delete", "p/tenant/kv"},
      {"lc", "permission", "delete", "p/tenant/perm"},
      {"lc", "quota", "delete", "p/tenant/q"},
      {"lc", "cluster-ref", "delete", "p/admin/e1"},
      {"lc", "delete", "p/tenant"},
      {"lc", "delete", "p/admin"},
      {"project", "delete", "p"},
      {"cluster", "kv", "delete", "edge/e1/istio"},
      {"cluster", "label", "delete", "edge/e1/zone-a"},
      {"cluster", "delete", "edge/e2"},
      {"cluster", "sync-object", "delete", "edge/git"},
      {"cluster", "delete", "cluster-providers/edge/clusters/e1"},
      {"cluster", "provider", "delete", "edge"},
      {"controller", "dtc", "delete", "nps"},
      {"controller", "delete", "gac"},
      {"controller", "delete", "rsync"},
  };
  for (const auto& d : deletes) CHECK(ok(s, d).out.find(" deleted") != std::string::npos);
  Sandbox empty;
  empty.init();
  CHECK(s.dump() == empty.dump());
}

TEST_CASE("emcoctl compatibility output through 'emco ctl' and the emcoctl symlink", "[flows]") {
  Sandbox s;
  s.copy_from(base_sandbox());
  s.write("ctl.yaml", doc("projects", "metadata:\n  name: p2\n") + "---\n" +
                          doc("projects/p2/composite-apps", "metadata:\n  name: ca\nspec:\n  compositeAppVersion: v1\n"));
  REQUIRE(fs::exists(emcoctl_binary()));
  Run a = ok(s, {"ctl", "apply", "-f", "ctl.yaml"});
  auto l = lines(a.out);
  REQUIRE(l.size() == 8);
  CHECK(l[0] == "---");
  CHECK(l[1] == "POST  --> URL: http://localhost:9015/v2/projects");
  CHECK(l[2] == "Response Code: 201");
  CHECK(l[3].rfind("Response: {", 0) == 0);
  CHECK(json::parse(l[3].substr(10))["metadata"]["name"] == "p2");
  CHECK(l[5] == "POST  --> URL: http://localhost:9015/v2/projects/p2/composite-apps");
  CHECK(l[6] == "Response Code: 201");
  // Applying again POSTs again: 409 for what exists, as upstream answers;
  // emcoctl prints it and goes on (exit 0). update PUTs: 200.
  Run again = ok(s, {"ctl", "apply", "-f", "ctl.yaml"});
  auto al = lines(again.out);
  REQUIRE(al.size() == 8);
  CHECK(al[2] == "Response Code: 409");
  CHECK(al[3] == "Response: ctl.yaml:1: project 'p2' already exists");
  CHECK(al[6] == "Response Code: 409");
  CHECK(al[7] == "Response: ctl.yaml:7: composite app 'p2/ca/v1' already exists");
  Run put = ok(s, {"ctl", "update", "-f", "ctl.yaml"});
  CHECK(lines(put.out)[1] == "PUT  --> URL: http://localhost:9015/v2/projects/p2");
  CHECK(lines(put.out)[2] == "Response Code: 200");
  // A PUT of what does not exist creates it, as upstream's handlers and emco serve's PUT do;
  // update sends nothing for a lifecycle document.
  s.write("put.yaml", doc("projects", "metadata:\n  name: p4\n") + "---\n" + doc("projects/p4/composite-apps/ca/v1/deployment-intent-groups/d/approve", ""));
  Run created = ok(s, {"ctl", "update", "-f", "put.yaml"});
  auto cl = lines(created.out);
  REQUIRE(cl.size() == 4);
  CHECK(cl[1] == "PUT  --> URL: http://localhost:9015/v2/projects/p4");
  CHECK(cl[2] == "Response Code: 201");
  CHECK(ok(s, {"ctl", "delete", "-f", "put.yaml"}).out.find("Response Code: 204") != std::string::npos);
  // Upstream scripts: sed -z 's/.*Response://' | jq
  RunOptions viactl;
  viactl.program = emcoctl_binary().string();
  Run g = s.emco({"get", "-f", "ctl.yaml"}, viactl);
  INFO(g.err);
  CHECK(g.code == 0);
  auto gl = lines(g.out);
  REQUIRE(gl.size() == 8);
  CHECK(gl[1] == "GET  --> URL: http://localhost:9015/v2/projects/p2");
  CHECK(gl[2] == "Response Code: 200");
  CHECK(gl[5] == "GET  --> URL: http://localhost:9015/v2/projects/p2/composite-apps/ca/v1");
  CHECK(json::parse(gl[7].substr(10))["spec"]["compositeAppVersion"] == "v1");
  Run tail = shell("cd " + quote(s.root().string()) + " && " + quote(emcoctl_binary().string()) +
                   " get -f ctl.yaml | sed -z 's/.*Response://'");
  CHECK(json::parse(tail.out)["metadata"]["name"] == "ca");
  // --config moves the URLs; an API error is printed and processing goes on (exit 0).
  s.write("cfg.yaml", "orchestrator:\n  host: 10.0.0.1\n  port: 30415\n");
  s.write("dup.yaml", doc("projects/p9/composite-apps", "metadata:\n  name: x\nspec:\n  compositeAppVersion: v1\n") + "---\n" +
                          doc("projects", "metadata:\n  name: p3\n"));
  Run e = s.emco({"--config", "cfg.yaml", "apply", "-f", "dup.yaml"}, viactl);
  INFO(e.out << e.err);
  CHECK(e.code == 0);
  auto el = lines(e.out);
  REQUIRE(el.size() >= 8);
  CHECK(el[1] == "POST  --> URL: http://10.0.0.1:30415/v2/projects/p9/composite-apps");
  CHECK(el[2] == "Response Code: 404");
  CHECK(el[5] == "POST  --> URL: http://10.0.0.1:30415/v2/projects");
  CHECK(el[6] == "Response Code: 201");
  // A config emcoctl cannot use is refused with its FILE:LINE.
  s.write("bad-cfg.yaml", "orchestrator:\n  host: 10.0.0.1\n  port: http\n");
  Run bad_cfg = s.emco({"--config", "bad-cfg.yaml", "apply", "-f", "dup.yaml"}, viactl);
  CHECK(bad_cfg.code == 3);
  CHECK(bad_cfg.err.find("bad-cfg.yaml:3: port 'http' is not a number") != std::string::npos);
  s.write("bad-cfg.yaml", "orchestrator: {host: [\n");
  bad_cfg = s.emco({"--config", "bad-cfg.yaml", "apply", "-f", "dup.yaml"}, viactl);
  CHECK(bad_cfg.code == 3);
  CHECK(bad_cfg.err.find("bad-cfg.yaml:2: ") != std::string::npos);
  // delete: reverse order, DELETE of the resource URLs.
  Run d = ok(s, {"ctl", "delete", "-f", "ctl.yaml"});
  auto dl = lines(d.out);
  REQUIRE(dl.size() >= 6);
  CHECK(dl[1] == "DELETE  --> URL: http://localhost:9015/v2/projects/p2/composite-apps/ca/v1");
  CHECK(dl[2] == "Response Code: 204");
  CHECK(dl[4] == "DELETE  --> URL: http://localhost:9015/v2/projects/p2");
  // Deleting what is gone: 404 at the resource's URL, as upstream answers, and on to the next.
  Run gone = ok(s, {"ctl", "delete", "-f", "ctl.yaml"});
  auto gl2 = lines(gone.out);
  REQUIRE(gl2.size() == 8);
  CHECK(gl2[1] == "DELETE  --> URL: http://localhost:9015/v2/projects/p2/composite-apps/ca/v1");
  CHECK(gl2[2] == "Response Code: 404");
  CHECK(gl2[5] == "DELETE  --> URL: http://localhost:9015/v2/projects/p2");
  CHECK(gl2[6] == "Response Code: 404");
}

TEST_CASE("workspace: found by walking up, --workspace, EMCO_WORKSPACE, modes 0700 and 0600", "[flows]") {
  Sandbox s;
  Run init = ok(s, {"init", "ws"});
  CHECK(init.out.find("Initialized empty emco workspace in " + s.path("ws").string()) != std::string::npos);
  CHECK(ok(s, {"init", "ws"}).out.find("Reinitialized existing emco workspace") != std::string::npos);
  struct stat st {};
  REQUIRE(::stat(s.path("ws/.emco").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  REQUIRE(::stat(s.path("ws/.emco/emco.db").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  // With a permissive umask too.
  Run loose = shell("cd " + quote(s.root().string()) + " && umask 000 && " + quote(emco_binary().string()) + " init loose");
  REQUIRE(loose.code == 0);
  REQUIRE(::stat(s.path("loose/.emco").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  REQUIRE(::stat(s.path("loose/.emco/emco.db").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  fs::create_directories(s.path("ws/a/b/c"));
  RunOptions deep;
  deep.cwd = s.path("ws/a/b/c");
  ok(s, {"project", "create", "from-below"}, deep);
  RunOptions at_root;
  at_root.cwd = s.path("ws");
  CHECK(ok(s, {"project", "list", "-o", "name"}, at_root).out == "projects/from-below\n");
  // --workspace and EMCO_WORKSPACE from outside.
  CHECK(ok(s, {"project", "list", "-o", "name", "--workspace", "ws"}).out == "projects/from-below\n");
  RunOptions env;
  env.env["EMCO_WORKSPACE"] = s.path("ws").string();
  CHECK(ok(s, {"project", "list", "-o", "name"}, env).out == "projects/from-below\n");
  // --workspace wins over EMCO_WORKSPACE.
  env.env["EMCO_WORKSPACE"] = s.path("loose").string();
  CHECK(ok(s, {"project", "list", "-o", "name", "--workspace", "ws"}, env).out == "projects/from-below\n");
  CHECK(ok(s, {"project", "list", "-o", "name"}, env).out.empty());
}

TEST_CASE("8 processes applying different projects at once all succeed", "[flows][concurrency]") {
  Sandbox s;
  s.init();
  std::string script;
  for (int p = 0; p < 8; ++p) {
    std::string y;
    y += doc("projects", "metadata:\n  name: p" + std::to_string(p) + "\n");
    for (int c = 0; c < 20; ++c)
      y += "---\n" + doc("projects/p" + std::to_string(p) + "/composite-apps",
                         "metadata:\n  name: ca" + std::to_string(c) + "\nspec:\n  compositeAppVersion: v1\n");
    s.write("p" + std::to_string(p) + ".yaml", y);
    script += "( " + quote(emco_binary().string()) + " apply -f p" + std::to_string(p) + ".yaml >out" + std::to_string(p) +
              " 2>err" + std::to_string(p) + "; echo $? >rc" + std::to_string(p) + " ) & ";
  }
  for (int round = 0; round < 3; ++round) {
    Run r = shell("cd " + quote(s.root().string()) + " || exit 1; " + script + "wait");
    CHECK(r.code == 0);
    for (int p = 0; p < 8; ++p) {
      std::string err = s.read("err" + std::to_string(p));
      INFO("process " << p << " round " << round << ": " << err);
      CHECK(s.read("rc" + std::to_string(p)) == "0\n");
      CHECK(err.empty());
      std::string out = s.read("out" + std::to_string(p));
      CHECK(count(out, "\n") == 21);
      CHECK(count(out, round == 0 ? " created" : " unchanged") == 21);
    }
  }
  CHECK(json::parse(ok(s, {"project", "list", "-o", "json"}).out).size() == 8);
  CHECK(json::parse(ok(s, {"app", "composite", "list", "-o", "json"}).out).size() == 160);
  Run check = shell(integrity_command(s.root()));
  CHECK(check.out == "ok\n");
}

}  // namespace
}  // namespace emco::test
