// A level-1 logical cloud over a direct cluster and a GitOps (Flux) cluster:
// the direct one gets the CSR and issued credentials; the GitOps one gets its
// objects committed to the repository in the layout of spec/gitops.md, with
// the ServiceAccount instead of a CSR and no user credentials.

#include "world.hpp"

#include "core/lifecycle/lc_dcm.hpp"

using namespace emco;
using namespace emco::lctest;

// The system's libgit2 (and what it loads) leaks a little at exit.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libgit2.so\nleak:libpcre2-8.so\nleak:libssh2.so\nleak:libcrypto.so\n";
}

TEST_CASE("a level-1 cloud on a GitOps cluster commits its objects", "[logical_cloud][sim][gitops]") {
  World w(1);
  const fs::path bare = w.dir / "fleet.git";
  const std::string git = "git -c user.name=t -c user.email=t@example.com ";
  REQUIRE(sh(w.dir, "git init -q --bare -b main fleet.git").code == 0);
  REQUIRE(sh(w.dir, git + "init -q -b main seed && cd seed && echo seed > README && " + git + "add README && " + git +
                        "commit -q -m seed && " + git + "push -q '" + bare.string() + "' main").code == 0);
  w.apply(doc("cluster-providers/p/cluster-sync-objects",
              "metadata: {name: gitrepo}\nspec:\n  kv:\n  - {url: \"file://" + bare.string() +
                  "\"}\n  - {branch: main}\n  - {userName: emco}\n  - {repoName: fleet}") +
          doc("cluster-providers/p/cluster-sync-objects", "metadata: {name: fluxtiming}\nspec:\n  kv:\n  - {timeOut: \"60\"}") +
          doc("cluster-providers/p/clusters",
              "metadata: {name: gitx}\nspec:\n  gitOps: {gitOpsType: fluxcd, gitOpsReferenceObject: gitrepo, "
              "gitOpsResourceObject: fluxtiming}"));
  w.permit_namespace();
  w.reference(w.names[0]);
  w.reference("gitx");

  auto r = w.op("instantiate");
  INFO((r.failures.empty() ? "" : r.failures.front()));
  REQUIRE(r.delivery == lifecycle::Delivery::done);
  CHECK(w.objects(w.names[0]) == std::set<std::string>{"Namespace /tenant-ns", "CertificateSigningRequest /tenant-tenant-ns-user-csr",
                                                       "Role tenant-ns/tenant-role0", "RoleBinding tenant-ns/tenant-roleBinding0"});
  CHECK(lifecycle::tenant_clusters(*w.st, w.lc()) == std::vector<std::string>{"p+" + w.names[0]});

  auto s = lifecycle::lc::status(*w.st, w.lc());
  const std::string dir = "clusters/p+gitx/context/" + s.context + "/app/logical-cloud/";
  auto files = sh(w.dir, "git --git-dir=fleet.git ls-tree -r --name-only main");
  REQUIRE(files.code == 0);
  for (const char* f : {"tenant-ns+Namespace.yaml", "tenant-ns-sa+ServiceAccount.yaml", "tenant-role0+Role.yaml",
                        "tenant-roleBinding0+RoleBinding.yaml"})
    CHECK(files.out.find(dir + f) != std::string::npos);
  CHECK(files.out.find("CertificateSigningRequest") == std::string::npos);
  // The cloud's own context: no GitRepository; its Kustomization in flux-system on the bootstrap source.
  CHECK(files.out.find("clusters/p+gitx/" + s.context + ".yaml") == std::string::npos);
  auto kust = sh(w.dir, "git --git-dir=fleet.git show 'main:clusters/p+gitx/kust" + s.context + ".yaml'");
  REQUIRE(kust.code == 0);
  CHECK(kust.out.find("namespace: flux-system") != std::string::npos);
  CHECK(kust.out.find("name: flux-system") != std::string::npos);
  auto binding = sh(w.dir, "git --git-dir=fleet.git show 'main:" + dir + "tenant-roleBinding0+RoleBinding.yaml'");
  REQUIRE(binding.code == 0);
  auto subjects = json::parse(binding.out)["subjects"];
  CHECK(subjects == json::parse(R"([{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"alice"},
                                    {"kind":"ServiceAccount","name":"tenant-sa","namespace":"tenant-ns"}])"));
  for (const auto& c : s.clusters) {
    if (c.cluster == "p+gitx") {
      CHECK(c.gitops == "fluxcd");
      CHECK_FALSE(c.credentials);
    } else {
      CHECK(c.credentials);
    }
  }

  // A DIG in the cloud over both clusters: the direct one deploys with the
  // user's kubeconfig, the GitOps one by git (it has no user credentials).
  auto write = [&](const std::string& path, const std::string& text) {
    fs::create_directories((w.dir / path).parent_path());
    std::ofstream(w.dir / path) << text;
  };
  write("charts/good/Chart.yaml", "apiVersion: v2\nname: good\nversion: 0.1.0\n");
  write("charts/good/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: good-cm\ndata:\n  a: b\n");
  write("profiles/good/manifest.yaml", "version: v1\ntype:\n  values: \"override_values.yaml\"\n");
  write("profiles/good/override_values.yaml", "note: x\n");
  const std::string ca = "projects/proj/composite-apps/ca/v1";
  const std::string gpi = ca + "/deployment-intent-groups/dig/generic-placement-intents";
  w.apply(doc("projects/proj/composite-apps", "metadata: {name: ca}\nspec: {compositeAppVersion: v1}") +
          doc(ca + "/composite-profiles", "metadata: {name: prof}") +
          doc(ca + "/apps", "metadata: {name: good}\nfile: charts/good") +
          doc(ca + "/composite-profiles/prof/profiles", "metadata: {name: good-profile}\nspec: {app: good}\nfile: profiles/good") +
          doc(ca + "/deployment-intent-groups",
              "metadata: {name: dig}\nspec: {compositeProfile: prof, version: r1, logicalCloud: tenant}") +
          doc(ca + "/deployment-intent-groups/dig/intents", "metadata: {name: intent}\nspec: {intent: {genericPlacementIntent: gpi}}") +
          doc(gpi, "metadata: {name: gpi}") +
          doc(gpi + "/gpi/app-intents", "metadata: {name: good-placement}\nspec: {app: good, intent: {allOf: [{clusterProvider: p, "
                                        "cluster: " + w.names[0] + "}, {clusterProvider: p, cluster: gitx}]}}"));
  const auto dig = resource::Key::parse("project=proj/compositeApp=ca/compositeAppVersion=v1/deploymentIntentGroup=dig");
  auto dig_op = [&](const std::string& name) {
    return lifecycle::run(*w.st, resource::kind("deploymentIntentGroup"), dig, name, json::object(), system_clock(), w.options());
  };
  dig_op("approve");
  auto d = dig_op("instantiate");
  INFO((d.failures.empty() ? "" : d.failures.front()));
  REQUIRE(d.delivery == lifecycle::Delivery::done);
  CHECK(w.sim.get(w.names[0], "v1", "ConfigMap", "tenant-ns", "good-cm")["data"]["a"] == "b");
  files = sh(w.dir, "git --git-dir=fleet.git ls-tree -r --name-only main");
  CHECK(files.out.find("clusters/p+gitx/context/" + d.context + "/app/good/good-cm+ConfigMap.yaml") != std::string::npos);
  REQUIRE(dig_op("terminate").delivery == lifecycle::Delivery::done);
  CHECK(w.sim.get(w.names[0], "v1", "ConfigMap", "tenant-ns", "good-cm").is_null());

  auto t = w.op("terminate");
  REQUIRE(t.delivery == lifecycle::Delivery::done);
  CHECK(w.objects(w.names[0]).empty());
  files = sh(w.dir, "git --git-dir=fleet.git ls-tree -r --name-only main");
  CHECK(files.out.find(dir) == std::string::npos);
}
