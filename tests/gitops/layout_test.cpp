// EMCO's GitOps repository layout: pure functions, then one end-to-end run
// through GitDelivery to a bare repository checked with the git CLI.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "plugins/targets/gitops/gitops_layout.hpp"
#include "support.hpp"

using namespace emco::gitops;
using nlohmann::json;

namespace {

GitOpsCluster flux_cluster(const std::string& name, const std::string& url = "https://git.example.com/fleet.git") {
  GitOpsCluster c;
  c.provider = "provider1flux";
  c.cluster = name;
  c.type = GitOpsType::fluxcd;
  c.remote.url = url;
  c.remote.branch = "main";
  return c;
}

ContextMeta meta() {
  ContextMeta m;
  m.app_context_id = "5772429642747222531";
  m.namespace_name = "default";
  return m;
}

std::shared_ptr<const json> object(json j) { return std::make_shared<const json>(std::move(j)); }

}  // namespace

TEST_CASE("gitOpsType: fluxcd, fluxv2 alias, anthos, azureArcV2 refused", "[gitops][layout]") {
  CHECK(parse_gitops_type("fluxcd") == GitOpsType::fluxcd);
  CHECK(parse_gitops_type("fluxv2") == GitOpsType::fluxcd);
  CHECK(parse_gitops_type("anthos") == GitOpsType::anthos);
  CHECK(gitops_type_name(GitOpsType::fluxcd) == "fluxcd");
  try {
    parse_gitops_type("azureArcV2");
    FAIL("expected an error");
  } catch (const emco::Error& e) {
    CHECK(e.kind() == emco::ErrorKind::invalid);
    CHECK(e.message() == "gitOpsType 'azureArcV2' is not supported by emco");
  }
  try {
    parse_gitops_type("fluxdc");
    FAIL("expected an error");
  } catch (const emco::Error& e) {
    CHECK(e.message() == "unknown gitOpsType 'fluxdc'");
    CHECK(e.hint() == "did you mean 'fluxcd'?");
  }
}

TEST_CASE("flux timing from the resource object, Go durations", "[gitops][layout]") {
  FluxTiming defaults = flux_timing({});
  CHECK(defaults.sync_interval == 60);
  CHECK(defaults.retry_interval == 60);
  CHECK(defaults.timeout == 60);
  FluxTiming t = flux_timing({{"syncInterval", "30"}, {"retryInterval", " 90 "}, {"timeOut", ""}, {"other", "x"}});
  CHECK(t.sync_interval == 30);
  CHECK(t.retry_interval == 90);
  CHECK(t.timeout == 60);
  CHECK_THROWS_AS(flux_timing({{"timeOut", "1m"}}), emco::Error);
  CHECK_THROWS_AS(flux_timing({{"syncInterval", "0"}}), emco::Error);
  CHECK(go_duration(30) == "30s");
  CHECK(go_duration(60) == "1m0s");
  CHECK(go_duration(90) == "1m30s");
  CHECK(go_duration(3600) == "1h0m0s");
  CHECK(go_duration(3661) == "1h1m1s");
}

TEST_CASE("resource and status paths", "[gitops][layout]") {
  auto c = flux_cluster("cluster2");
  CHECK(resource_path(c, meta(), "collectd", "r1-collectd", "DaemonSet") ==
        "clusters/provider1flux+cluster2/context/5772429642747222531/app/collectd/r1-collectd+DaemonSet.yaml");
  CHECK(status_path(c, meta(), "collectd", "5772429642747222531") ==
        "clusters/provider1flux+cluster2/context/5772429642747222531/app/collectd/5772429642747222531-collectd.yaml");
  ContextMeta level1 = meta();
  level1.level = "1";
  level1.namespace_name = "lc1-ns";
  CHECK(cluster_base_dir(c, level1) == "clusters/provider1flux+cluster2");
  c.type = GitOpsType::anthos;
  CHECK(cluster_base_dir(c, meta()) == "clusters/provider1flux+cluster2");
  CHECK(cluster_base_dir(c, level1) == "namespaces/lc1-ns/provider1flux+cluster2");
  CHECK(app_dir(c, level1, "a") == "namespaces/lc1-ns/provider1flux+cluster2/context/5772429642747222531/app/a");
}

TEST_CASE("resource content: JSON with namespace defaulting per flavour", "[gitops][layout]") {
  json deploy = {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"metadata", {{"name", "web"}}}};
  CHECK(resource_content(deploy, GitOpsType::fluxcd, "ns1") ==
        R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"ns1"}})");
  json placed = {{"kind", "Service"}, {"metadata", {{"name", "s"}, {"namespace", "mine"}}}};
  CHECK(resource_content(placed, GitOpsType::anthos, "ns1") == R"({"kind":"Service","metadata":{"name":"s","namespace":"mine"}})");
  json ns = {{"kind", "Namespace"}, {"metadata", {{"name", "x"}}}};
  CHECK(resource_content(ns, GitOpsType::fluxcd, "ns1") == R"({"kind":"Namespace","metadata":{"name":"x"}})");
  CHECK(resource_content(ns, GitOpsType::anthos, "ns1") == R"({"kind":"Namespace","metadata":{"name":"x"}})");
  for (const char* kind : {"ClusterRole", "ClusterRoleBinding", "RepoSync"}) {
    json o = {{"kind", kind}, {"metadata", {{"name", "x"}}}};
    CHECK(resource_content(o, GitOpsType::anthos, "ns1").find("namespace") == std::string::npos);
    CHECK(resource_content(o, GitOpsType::fluxcd, "ns1").find(R"("namespace":"ns1")") != std::string::npos);
  }
  // Go's encoding/json escaping, as upstream's files have it.
  json html = {{"kind", "ConfigMap"}, {"metadata", {{"name", "c"}, {"namespace", "n"}}}, {"data", {{"k", "<a>&\u2028"}}}};
  CHECK(resource_content(html, GitOpsType::fluxcd, "ns1") ==
        R"({"data":{"k":"\u003ca\u003e\u0026\u2028"},"kind":"ConfigMap","metadata":{"name":"c","namespace":"n"}})");
  json rbs = {{"kind", "ResourceBundleState"}, {"metadata", {{"name", "r"}}}, {"status", {{"ready", true}}}};
  CHECK(status_content(rbs, GitOpsType::fluxcd, "d") ==
        R"({"kind":"ResourceBundleState","metadata":{"name":"r","namespace":"d"},"status":{"ready":true}})");
  CHECK(status_content(rbs, GitOpsType::anthos, "d") == R"({"kind":"ResourceBundleState","metadata":{"name":"r","namespace":"d"}})");
  CHECK_THROWS_AS(resource_content(json::array(), GitOpsType::fluxcd, "d"), emco::Error);
}

TEST_CASE("flux GitRepository and Kustomization", "[gitops][layout]") {
  auto c = flux_cluster("cluster2");
  c.flux = flux_timing({{"syncInterval", "120"}, {"retryInterval", "30"}});
  auto files = flux_objects(c, meta());
  REQUIRE(files.size() == 2);
  CHECK(files.at("clusters/provider1flux+cluster2/5772429642747222531.yaml") ==
        "apiVersion: source.toolkit.fluxcd.io/v1beta1\n"
        "kind: GitRepository\n"
        "metadata:\n"
        "  name: \"5772429642747222531\"\n"
        "  namespace: default\n"
        "spec:\n"
        "  interval: 30s\n"
        "  ref:\n"
        "    branch: main\n"
        "  url: \"https://git.example.com/fleet.git\"\n");
  CHECK(files.at("clusters/provider1flux+cluster2/kust5772429642747222531.yaml") ==
        "apiVersion: kustomize.toolkit.fluxcd.io/v1beta2\n"
        "kind: Kustomization\n"
        "metadata:\n"
        "  name: kust5772429642747222531\n"
        "  namespace: default\n"
        "spec:\n"
        "  interval: 2m0s\n"
        "  path: clusters/provider1flux+cluster2/context/5772429642747222531\n"
        "  prune: true\n"
        "  retryInterval: 30s\n"
        "  sourceRef:\n"
        "    kind: GitRepository\n"
        "    name: \"5772429642747222531\"\n"
        "  timeout: 1m0s\n");

  SECTION("level-1 DIG context gets the logical cloud's service account") {
    ContextMeta m = meta();
    m.level = "1";
    m.namespace_name = "lc1-ns";
    m.logical_cloud_namespace = "lc1-ns";
    auto kust = flux_objects(c, m).at("clusters/provider1flux+cluster2/kust5772429642747222531.yaml");
    CHECK_THAT(kust, Catch::Contains("  serviceAccountName: lc1-ns-sa\n"));
    CHECK_THAT(kust, Catch::Contains("  namespace: lc1-ns\n"));
  }
  SECTION("logical-cloud context: only a Kustomization in flux-system") {
    ContextMeta m = meta();
    m.logical_cloud = "lc1";
    m.logical_cloud_namespace = "lc1-ns";
    auto lc = flux_objects(c, m);
    REQUIRE(lc.size() == 1);
    const auto& kust = lc.at("clusters/provider1flux+cluster2/kust5772429642747222531.yaml");
    CHECK_THAT(kust, Catch::Contains("metadata:\n  name: kust5772429642747222531\n  namespace: flux-system\n"));
    CHECK_THAT(kust, Catch::Contains("  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"));
    CHECK_THAT(kust, !Catch::Contains("serviceAccountName"));
  }
  c.type = GitOpsType::anthos;
  CHECK(flux_objects(c, meta()).empty());
}

TEST_CASE("anthos deployed marker and RepoSync", "[gitops][layout]") {
  auto c = flux_cluster("c1");
  c.type = GitOpsType::anthos;
  auto files = anthos_objects(c, meta(), {"app1"}, "1700000000");
  REQUIRE(files.size() == 1);
  CHECK(files.at("clusters/provider1flux+c1/context/5772429642747222531/deployed") == "1700000000");

  ContextMeta lc = meta();
  lc.logical_cloud = "lc1";
  lc.logical_cloud_namespace = "lc1-ns";
  auto lc_files = anthos_objects(c, lc, {"app1", "app2"}, "s");
  REQUIRE(lc_files.size() == 3);
  CHECK(lc_files.at("clusters/provider1flux+c1/context/5772429642747222531/app/app2/repo-sync-lc1+RepoSync.json") ==
        R"({"apiVersion":"configsync.gke.io/v1beta1","kind":"RepoSync","metadata":{"name":"repo-sync-lc1","namespace":"lc1-ns"},)"
        R"("spec":{"git":{"auth":"none","branch":"main","dir":"/namespaces/lc1-ns/provider1flux+c1","noSSLVerify":false,)"
        R"("repo":"https://git.example.com/fleet.git","revision":"HEAD"}}})");
  CHECK(anthos_objects(flux_cluster("c1"), meta(), {"a"}, "s").empty());
}

TEST_CASE("plan_commits: one commit per repository, per operation kind", "[gitops][layout]") {
  auto cm = object({{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "cfg"}}}});
  auto rbs = object({{"kind", "ResourceBundleState"}, {"metadata", {{"name", "app1-5772429642747222531"}}}});
  GitOpsOperation op;
  op.project = "proj1";
  op.composite_app = "ca";
  op.composite_app_version = "v1";
  op.dig = "dig1";
  op.revision = 3;
  op.context = meta();
  for (const char* name : {"c1", "c2"}) {
    ClusterWork w;
    w.cluster = flux_cluster(name);
    w.resources.push_back({"app1", "cfg", "ConfigMap", cm});
    w.status["app1"] = rbs;
    op.clusters.push_back(w);
  }
  ClusterWork other;
  other.cluster = flux_cluster("c3", "git://127.0.0.1/other.git");
  other.cluster.type = GitOpsType::anthos;
  other.resources.push_back({"app1", "cfg", "ConfigMap", cm});
  op.clusters.push_back(other);

  auto commits = plan_commits(op);
  REQUIRE(commits.size() == 2);
  CHECK(commits[0].remote.url == "https://git.example.com/fleet.git");
  CHECK(commits[0].cluster_ids == std::vector<std::string>{"provider1flux+c1", "provider1flux+c2"});
  CHECK(commits[0].request.message == "emco: instantiate proj1/ca/v1/dig1 revision 3 (context 5772429642747222531)");
  const ChangeSet& fleet = commits[0].request.changes;
  CHECK(fleet.size() == 8);
  const std::string c1 = "clusters/provider1flux+c1/";
  CHECK(fleet.at(c1 + "context/5772429642747222531/app/app1/cfg+ConfigMap.yaml") ==
        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default"}})");
  CHECK(fleet.count(c1 + "context/5772429642747222531/app/app1/5772429642747222531-app1.yaml"));
  CHECK(fleet.count(c1 + "5772429642747222531.yaml"));
  CHECK(fleet.count(c1 + "kust5772429642747222531.yaml"));
  const ChangeSet& anthos = commits[1].request.changes;
  CHECK(commits[1].cluster_ids == std::vector<std::string>{"provider1flux+c3"});
  CHECK(anthos.size() == 2);
  CHECK(anthos.at("clusters/provider1flux+c3/context/5772429642747222531/deployed") == "3");

  SECTION("update writes only what it is given") {
    op.kind = GitOpsOperationKind::update;
    op.clusters.resize(1);
    op.clusters[0].status.clear();
    op.clusters[0].resources = {{"app1", "cfg", "ConfigMap", cm}, {"app1", "old", "Secret", nullptr}};
    auto update = plan_commits(op);
    REQUIRE(update.size() == 1);
    CHECK_THAT(update[0].request.message, Catch::StartsWith("emco: update proj1/ca/v1/dig1 revision 3"));
    const ChangeSet& ch = update[0].request.changes;
    CHECK(ch.size() == 4);  // the ConfigMap, the removed Secret, the two Flux objects
    CHECK_FALSE(ch.at(c1 + "context/5772429642747222531/app/app1/old+Secret.yaml").has_value());
  }
  SECTION("terminate deletes files, Flux objects and the context directory") {
    op.kind = GitOpsOperationKind::terminate;
    auto term = plan_commits(op);
    REQUIRE(term.size() == 2);
    for (const auto& [path, content] : term[0].request.changes) {
      INFO(path);
      CHECK_FALSE(content.has_value());
    }
    CHECK(term[0].request.changes.count(c1 + "context/5772429642747222531/"));
    CHECK(term[0].request.changes.count(c1 + "kust5772429642747222531.yaml"));
    CHECK(term[1].request.changes.count("clusters/provider1flux+c3/context/5772429642747222531/deployed"));
  }
  SECTION("a resource given twice keeps its last content") {
    auto other_cm = object({{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "cfg2"}}}});
    op.clusters[0].resources.push_back({"app1", "cfg", "ConfigMap", other_cm});
    auto twice = plan_commits(op);
    CHECK(twice[0].request.changes.size() == 8);
    CHECK(twice[0].request.changes.at(c1 + "context/5772429642747222531/app/app1/cfg+ConfigMap.yaml") ==
          R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg2","namespace":"default"}})");
  }
  SECTION("bad names are refused") {
    op.clusters[0].resources[0].name = "a/b";
    CHECK_THROWS_AS(plan_commits(op), emco::Error);
    op.clusters[0].resources[0].name = "cfg";
    op.context.app_context_id.clear();
    CHECK_THROWS_AS(plan_commits(op), emco::Error);
  }
}

TEST_CASE("plan_commit_groups: one group per cluster at its base directory", "[gitops][layout]") {
  auto cm = object({{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "cfg"}}}});
  GitOpsOperation op;
  op.project = "proj1";
  op.composite_app = "ca";
  op.composite_app_version = "v1";
  op.dig = "dig1";
  op.context = meta();
  op.context.level = "1";
  op.context.namespace_name = "ns1";
  for (const char* name : {"c1", "c2"}) {
    ClusterWork w;
    w.cluster = flux_cluster(name);
    if (std::string(name) == "c2") w.cluster.type = GitOpsType::anthos;
    w.resources.push_back({"app1", "cfg", "ConfigMap", cm});
    op.clusters.push_back(w);
  }
  auto commits = plan_commit_groups(op);
  REQUIRE(commits.size() == 1);
  CHECK(commits[0].request.changes.empty());
  std::map<std::string, ChangeSet> groups;
  commits[0].request.groups([&](ChangeGroup&& g) {
    for (auto& [path, content] : g.changes) groups[g.dir].insert_or_assign(path, std::move(content));
  });
  REQUIRE(groups.size() == 2);
  // Flux: clusters/<cl>; Anthos in a level-1 context: namespaces/<ns>/<cl>.
  const ChangeSet& flux = groups.at("clusters/provider1flux+c1");
  CHECK(flux.count("context/5772429642747222531/app/app1/cfg+ConfigMap.yaml"));
  CHECK(flux.count("kust5772429642747222531.yaml"));
  const ChangeSet& anthos = groups.at("namespaces/ns1/provider1flux+c2");
  CHECK(anthos.count("context/5772429642747222531/app/app1/cfg+ConfigMap.yaml"));
  CHECK(anthos.count("context/5772429642747222531/deployed"));
  // The whole change set is the groups' changes under their directories.
  ChangeSet whole = plan_commits(op)[0].request.changes;
  size_t total = 0;
  for (const auto& [dir, changes] : groups)
    for (const auto& [path, content] : changes) {
      ++total;
      CHECK(whole.count(dir + "/" + path));
    }
  CHECK(whole.size() == total);
}

TEST_CASE("layout end to end: instantiate, update, terminate in a bare repository", "[gitops][layout][file]") {
  using namespace gitops_test;
  TempDir tmp;
  fs::path bare = tmp.path() / "fleet.git";
  make_bare_repo(bare, true);
  const std::string url = "file://" + bare.string();
  auto make_op = [&](GitOpsOperationKind kind, const std::string& replicas) {
    auto deploy = object({{"apiVersion", "apps/v1"},
                          {"kind", "Deployment"},
                          {"metadata", {{"name", "web"}, {"labels", {{"emco/deployment-id", "5772429642747222531-app1"}}}}},
                          {"spec", {{"replicas", std::stoi(replicas)}}}});
    auto svc = object({{"apiVersion", "v1"}, {"kind", "Service"}, {"metadata", {{"name", "web"}}}});
    GitOpsOperation op;
    op.kind = kind;
    op.project = "p";
    op.composite_app = "ca";
    op.composite_app_version = "v1";
    op.dig = "d";
    op.context = meta();
    for (const char* name : {"c1", "c2"}) {
      ClusterWork w;
      w.cluster = flux_cluster(name, url);
      w.resources.push_back({"app1", "web", "Deployment", deploy});
      if (kind != GitOpsOperationKind::update) w.resources.push_back({"app1", "web", "Service", svc});
      op.clusters.push_back(w);
    }
    return op;
  };
  GitDelivery delivery(tmp.path() / "cache");
  auto deliver = [&](const GitOpsOperation& op) {
    auto commits = plan_commits(op);
    REQUIRE(commits.size() == 1);
    return delivery.deliver(commits[0].remote, commits[0].request);
  };

  auto first = deliver(make_op(GitOpsOperationKind::instantiate, "1"));
  REQUIRE(first.changed);
  const std::string ctx = "clusters/provider1flux+c1/context/5772429642747222531/app/app1/";
  CHECK(git(bare, {"ls-tree", "-r", "--name-only", "main", "clusters/provider1flux+c1"}) ==
        "clusters/provider1flux+c1/5772429642747222531.yaml\n" + ctx + "web+Deployment.yaml\n" + ctx +
            "web+Service.yaml\nclusters/provider1flux+c1/kust5772429642747222531.yaml\n");
  CHECK(json::parse(show(bare, "main", ctx + "web+Deployment.yaml"))["metadata"]["namespace"] == "default");
  CHECK_FALSE(deliver(make_op(GitOpsOperationKind::instantiate, "1")).changed);

  auto update = deliver(make_op(GitOpsOperationKind::update, "3"));
  REQUIRE(update.changed);
  CHECK(update.files_written == 2);
  CHECK(git(bare, {"diff", "--name-only", first.commit_id, update.commit_id}) ==
        ctx + "web+Deployment.yaml\nclusters/provider1flux+c2/context/5772429642747222531/app/app1/web+Deployment.yaml\n");
  CHECK(git(bare, {"log", "-1", "--format=%s", "main"}) == "emco: update p/ca/v1/d revision 1 (context 5772429642747222531)\n");

  auto term = deliver(make_op(GitOpsOperationKind::terminate, "3"));
  REQUIRE(term.changed);
  CHECK(git(bare, {"ls-tree", "-r", "--name-only", "main"}) == "README\n");
  CHECK(commit_count(bare, "main") == 4);
}
