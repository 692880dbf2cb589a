// examples/logical-cloud through the emco binary on simulated clusters:
// `emco apply -f` of every file, `emco lc status`, `emco lc kubeconfig`
// (refused without --show-secrets), the issued kubeconfig used by kubectl,
// and `emco delete -f` back to nothing.

#include "world.hpp"

using namespace emco;
using namespace emco::lctest;

TEST_CASE("the logical-cloud example applies and deletes with the emco binary", "[logical_cloud][sim][example]") {
  World w(2);  // its workspace is the one the binary uses
  const fs::path example = fs::path(EMCO_SOURCE_DIR) / "examples/logical-cloud";
  // Under ASan the binary's LSan must not fail it for the system libgit2's leaks.
  std::ofstream(w.dir / "lsan.supp") << "leak:libgit2.so\nleak:libpcre2-8.so\nleak:libssh2.so\nleak:libcrypto.so\n";
  const std::string emco = "LSAN_OPTIONS=suppressions='" + (w.dir / "lsan.supp").string() + "' EMCO_WORKSPACE='" +
                           w.dir.string() + "' " + std::string(EMCO_BINARY_DIR) + "/emco";
  std::string values = "ProjectName: tenants\nClusterProvider: edge\nCloud: team-blue\nNamespace: team-blue\nUser: blue-admin\n"
                       "CompositeApp: hello-app\nCompositeProfile: hello-profile\nDeploymentIntent: hello-dig\nRelease: r1\n"
                       "Clusters:\n";
  for (const auto& n : w.names) values += "  - {Name: " + n + ", KubeConfig: " + w.sim.kubeconfig_path(n) + "}\n";
  const fs::path vfile = w.dir / "values.yaml";
  std::ofstream(vfile) << values;
  const std::string v = " -v '" + vfile.string() + "'";

  for (const char* f : {"01-clusters.yaml", "02-logical-cloud.yaml", "03-app.yaml", "04-deploy.yaml"}) {
    auto r = sh(example, emco + " apply -f " + f + v);
    INFO(f << ": " << r.out);
    REQUIRE(r.code == 0);
  }
  for (const auto& n : w.names) {
    CHECK(w.sim.get(n, "v1", "ConfigMap", "team-blue", "r1-hello")["data"]["message"] == "hello from a logical cloud");
    CHECK(w.sim.get(n, "v1", "ResourceQuota", "team-blue", "small")["spec"]["hard"]["pods"] == "20");
  }

  auto status = sh(example, emco + " lc status tenants/team-blue -o json");
  REQUIRE(status.code == 0);
  json s = json::parse(status.out);
  CHECK(s["deployedStatus"] == "Instantiated");
  REQUIRE(s["clusters"].size() == 2);
  for (const auto& c : s["clusters"]) {
    CHECK(c["credentials"] == "issued");
    CHECK(c["resources"].size() == 5);
  }
  auto table = sh(example, emco + " lc status tenants/team-blue");
  CHECK(table.code == 0);
  CHECK(table.out.find("issued") != std::string::npos);

  // The kubeconfig: refused without --show-secrets (and no key material printed).
  const std::string cluster = " --cluster edge+" + w.names[0];
  auto refused = sh(example, emco + " lc kubeconfig tenants/team-blue" + cluster);
  CHECK(refused.code != 0);
  CHECK(refused.out.find("--show-secrets") != std::string::npos);
  CHECK(refused.out.find("client-key-data") == std::string::npos);
  CHECK(refused.out.find("PRIVATE KEY") == std::string::npos);
  CHECK(sh(example, emco + " lc kubeconfig tenants/team-blue --cluster edge+nowhere --show-secrets").code != 0);
  const fs::path kc = w.dir / "user.kubeconfig";
  auto shown = sh(example, emco + " lc kubeconfig tenants/team-blue" + cluster + " --show-secrets > '" + kc.string() + "'");
  REQUIRE(shown.code == 0);

  // kubectl with the user's kubeconfig: confined to the cloud's namespace.
  const std::string kubectl = "kubectl --kubeconfig '" + kc.string() + "' ";
  auto get = sh(example, kubectl + "get configmap r1-hello -o jsonpath='{.data.message}'");
  CHECK(get.code == 0);
  CHECK(get.out == "hello from a logical cloud");
  CHECK(sh(example, kubectl + "auth can-i create deployments.apps").out == "yes\n");
  CHECK(sh(example, kubectl + "auth can-i create secrets").out.rfind("no", 0) == 0);
  auto other = sh(example, kubectl + "get configmaps -n default");
  CHECK(other.code != 0);
  CHECK(other.out.find("forbidden") != std::string::npos);

  for (const char* f : {"04-deploy.yaml", "03-app.yaml", "02-logical-cloud.yaml"}) {
    auto r = sh(example, emco + " delete -f " + f + v);
    INFO(f << ": " << r.out);
    CHECK(r.code == 0);
  }
  for (const auto& n : w.names) {
    CHECK(w.sim.get(n, "v1", "Namespace", "", "team-blue").is_null());
    CHECK(w.sim.get(n, "certificates.k8s.io/v1", "CertificateSigningRequest", "", "team-blue-team-blue-user-csr").is_null());
  }
  CHECK_FALSE(w.st->get(resource::Key::parse("project=tenants/logicalCloud=team-blue")));
}
