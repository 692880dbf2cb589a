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

  auto t = w.op("terminate");
  REQUIRE(t.delivery == lifecycle::Delivery::done);
  CHECK(w.objects(w.names[0]).empty());
  files = sh(w.dir, "git --git-dir=fleet.git ls-tree -r --name-only main");
  CHECK(files.out.find(dir) == std::string::npos);
}
