// examples/drop-in through the emco binary (issue 16 item 6): an EMCO
// user's flow with two simulated clusters and a GitOps cluster registered
// with a placeholder file (pushing to a local bare repository), a level-1
// logical cloud over all three, a chart with a pre-install hook and an app
// dependency; applied file by file with -v, then deleted in reverse.

#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/sim.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Ran {
  int code = -1;
  std::string out;
};

// Runs a shell line in `cwd`, stdout and stderr together.
Ran sh(const fs::path& cwd, const std::string& line) {
  const fs::path out = fs::temp_directory_path() / ("emco-dropin-" + std::to_string(::getpid()) + ".out");
  int status = std::system(("cd '" + cwd.string() + "' && (" + line + ") > '" + out.string() + "' 2>&1").c_str());
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  fs::remove(out);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

}  // namespace

TEST_CASE("the drop-in example: GitOps placeholder cluster, level-1 cloud, hooks and dependencies", "[compat][example]") {
  emco::sim::SimOptions o;
  o.names = {"edge1", "edge2"};
  o.clusters = 2;
  o.ready_delay_ms = 100;
  emco::sim::Simulator sim(o);
  sim.start();
  const fs::path dir =
      fs::temp_directory_path() / ("emco-dropin-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  const fs::path example = fs::path(EMCO_SOURCE_DIR) / "examples/drop-in";
  // Under ASan the binary's LSan must not fail it for the system libgit2's leaks.
  std::ofstream(dir / "lsan.supp") << "leak:libgit2.so\nleak:libpcre2-8.so\nleak:libssh2.so\nleak:libcrypto.so\n";
  const std::string emco = "LSAN_OPTIONS=suppressions='" + (dir / "lsan.supp").string() + "' EMCO_AUTO_RESUME=0 EMCO_WORKSPACE='" +
                           dir.string() + "' " + std::string(EMCO_BINARY_DIR) + "/emco";
  const std::string git = "git -c user.name=t -c user.email=t@example.com ";
  REQUIRE(sh(dir, "git init -q --bare -b main fleet.git").code == 0);
  REQUIRE(sh(dir, git + "init -q -b main seed && cd seed && echo seed > README && " + git + "add README && " + git +
                      "commit -q -m seed && " + git + "push -q ../fleet.git main").code == 0);
  REQUIRE(sh(dir, emco + " init .").code == 0);

  // The example's values, with this run's clusters and repository.
  std::ifstream base(example / "values.yaml");
  std::string values, line;
  while (std::getline(base, line))
    if (line.rfind("GitUrl:", 0) != 0 && line.rfind("Clusters:", 0) != 0) values += line + "\n";
  values += "GitUrl: file://" + (dir / "fleet.git").string() + "\nClusters:\n";
  for (const auto& n : o.names) values += "  - {Name: " + n + ", KubeConfig: " + sim.kubeconfig_path(n) + "}\n";
  std::ofstream(dir / "values.yaml") << values;
  const std::string v = " -v '" + (dir / "values.yaml").string() + "'";

  for (const char* f : {"01-clusters.yaml", "02-cloud.yaml", "03-app.yaml", "04-deploy.yaml"}) {
    Ran r = sh(example, emco + " apply -f " + f + v);
    INFO(f << ": " << r.out);
    REQUIRE(r.code == 0);
  }
  // The placeholder file of the GitOps cluster was not stored as a kubeconfig.
  Ran cluster = sh(dir, emco + " cluster get edge/store1 -o json");
  INFO(cluster.out);
  REQUIRE(cluster.code == 0);
  CHECK(cluster.out.find("\"gitOpsType\": \"fluxcd\"") != std::string::npos);

  // Direct clusters: both apps in the cloud's namespace, with the profiles'
  // values; the hook Job ran to completion before them (hooks stay until
  // terminate, as with EMCO's rsync).
  for (const auto& n : o.names) {
    CHECK(sim.get(n, "v1", "ConfigMap", "shop", "r1-db")["data"]["schemaVersion"] == "2");
    CHECK(sim.get(n, "v1", "ConfigMap", "shop", "r1-web")["data"]["greeting"] == "hello from emco");
    CHECK(sim.get(n, "batch/v1", "Job", "shop", "r1-db-schema")["status"]["succeeded"] == 1);
  }
  // The GitOps cluster: the apps (and the hook) committed to the repository.
  Ran files = sh(dir, "git --git-dir=fleet.git ls-tree -r --name-only main");
  REQUIRE(files.code == 0);
  for (const char* f : {"/app/db/r1-db+ConfigMap.yaml", "/app/db/r1-db-schema+Job.yaml", "/app/web/r1-web+ConfigMap.yaml"})
    CHECK(files.out.find(f) != std::string::npos);

  Ran status = sh(dir, emco + " dig status shop/shop-app/v1/shop-dig -o json -o summary");
  REQUIRE(status.code == 0);
  json s = json::parse(status.out);
  CHECK(s["deployedStatus"] == "Instantiated");
  CHECK(s["deployedCounts"] == json{{"Applied", 4}, {"Committed", 2}});

  // Deleting the files in reverse terminates the deployment and the cloud
  // and removes every resource.
  for (const char* f : {"04-deploy.yaml", "03-app.yaml", "02-cloud.yaml", "01-clusters.yaml"}) {
    Ran r = sh(example, emco + " delete -f " + f + v);
    INFO(f << ": " << r.out);
    REQUIRE(r.code == 0);
  }
  for (const auto& n : o.names) {
    CHECK(sim.get(n, "v1", "ConfigMap", "shop", "r1-web").is_null());
    CHECK(sim.get(n, "batch/v1", "Job", "shop", "r1-db-schema").is_null());
  }
  Ran left = sh(dir, "git --git-dir=fleet.git ls-tree -r --name-only main");
  CHECK(left.out == "README\n");
  Ran none = sh(dir, emco + " get cluster-providers -o name");
  CHECK(none.out.empty());
  sim.stop();
  std::error_code ec;
  fs::remove_all(dir, ec);
}
