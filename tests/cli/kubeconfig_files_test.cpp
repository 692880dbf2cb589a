// Kubeconfigs that name certificate, key and token files by path are stored
// self-contained at registration (the files' contents inlined, as
// `kubectl config view --flatten --minify` does), so deploying keeps working
// after the files are gone; a file that cannot be read is refused naming the
// kubeconfig's FILE:LINE and the path, and the workspace is left unchanged.
// Credentials stay in the workspace: .emco is 0700 and its files 0600, and
// no key, token or ssh key is printed or logged.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "core/util/base64.hpp"

#include "sim/sim.hpp"
#include "plugins/targets/kube/kubeconfig.hpp"
#include "tests/cli/fixture.hpp"

namespace emco::test {
namespace {

struct Sim {
  sim::Simulator sim;
  explicit Sim(sim::AuthMode auth)
      : sim([auth] {
          sim::SimOptions o;
          o.clusters = 1;
          o.auth = auth;
          o.ready_delay_ms = 0;
          return o;
        }()) {
    sim.start();
  }
  ~Sim() { sim.stop(); }
  std::string name() const { return sim.cluster_names().at(0); }
  kube::ClusterAccess access() const {
    return kube::resolve_access(kube::load_kubeconfig_file(sim.kubeconfig_path(name())));
  }
};

// A provider with cluster `c1` (kubeconfig `kube/c1.kubeconfig`) and `c2`
// (`kube/c2.kubeconfig`), an admin cloud over both (instantiated) and a DIG placing app
// "web" (a ConfigMap) on both, approved.
std::string deployment_yaml() {
  const std::string ca = "projects/proj1/composite-apps/ca/v1";
  const std::string dig = ca + "/deployment-intent-groups";
  return "---\n" + doc("cluster-providers", "metadata:\n  name: p1\n") +
         "---\n" + doc("cluster-providers/p1/clusters", "metadata:\n  name: c1\nfile: kube/c1.kubeconfig\n") +
         "---\n" + doc("cluster-providers/p1/clusters", "metadata:\n  name: c2\nfile: kube/c2.kubeconfig\n") +
         "---\n" + doc("projects", "metadata:\n  name: proj1\n") +
         "---\n" + doc("projects/proj1/logical-clouds", "metadata:\n  name: lc0\nspec:\n  level: \"0\"\n") +
         "---\n" + doc("projects/proj1/logical-clouds/lc0/cluster-references",
                       "metadata:\n  name: c1\nspec:\n  clusterProvider: p1\n  cluster: c1\n") +
         "---\n" + doc("projects/proj1/logical-clouds/lc0/cluster-references",
                       "metadata:\n  name: c2\nspec:\n  clusterProvider: p1\n  cluster: c2\n") +
         "---\n" + doc("projects/proj1/logical-clouds/lc0/instantiate") +
         "---\n" + doc("projects/proj1/composite-apps", "metadata:\n  name: ca\nspec:\n  compositeAppVersion: v1\n") +
         "---\n" + doc(ca + "/apps", "metadata:\n  name: web\nfile: web.tgz\n") +
         "---\n" + doc(ca + "/composite-profiles", "metadata:\n  name: cprof\n") +
         "---\n" + doc(ca + "/composite-profiles/cprof/profiles", "metadata:\n  name: web-profile\nspec:\n  app: web\nfile: profile.tgz\n") +
         "---\n" + doc(dig, "metadata:\n  name: dig1\nspec:\n  compositeProfile: cprof\n  version: r1\n  logicalCloud: lc0\n") +
         "---\n" + doc(dig + "/dig1/intents", "metadata:\n  name: intent1\nspec:\n  intent:\n    genericPlacementIntent: gpi\n") +
         "---\n" + doc(dig + "/dig1/generic-placement-intents", "metadata:\n  name: gpi\n") +
         "---\n" + doc(dig + "/dig1/generic-placement-intents/gpi/app-intents",
                       "metadata:\n  name: web-placement\nspec:\n  app: web\n  intent:\n    allOf:\n"
                       "    - clusterProvider: p1\n      cluster: c1\n    - clusterProvider: p1\n      cluster: c2\n") +
         "---\n" + doc(dig + "/dig1/approve");
}

// A kubeconfig for `server` whose user part is `user` (indented by 4).
std::string kubeconfig(const std::string& server, const std::string& ca_path, const std::string& user) {
  return "apiVersion: v1\nkind: Config\nclusters:\n- name: sim\n  cluster:\n    server: " + server +
         "\n    certificate-authority: " + ca_path + "\nusers:\n- name: admin\n  user:\n" + user +
         "contexts:\n- name: sim\n  context: {cluster: sim, user: admin}\ncurrent-context: sim\n";
}

// A simulated cluster with client-certificate auth and one with token auth, and an
// initialised workspace.
struct TwoSims {
  Sim certs{sim::AuthMode::client_cert}, tokens{sim::AuthMode::token};
  kube::ClusterAccess a1 = certs.access(), a2 = tokens.access();
  Sandbox s;
  TwoSims() {
    REQUIRE_FALSE(a1.client_key_pem.empty());
    REQUIRE_FALSE(a2.token.empty());
    s.init();
  }
};

bool holds_web(sim::Simulator& sim, const std::string& cluster) {
  for (const auto& cm : sim.list(cluster, "v1", "ConfigMap", ""))
    if (cm["metadata"].value("name", "").find("web") != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("kubeconfigs naming files are stored self-contained: a deploy works after the files are deleted",
          "[kubeconfig][sim]") {
  TwoSims two;
  auto& [certs, tokens, a1, a2, s] = two;
  // c1: CA, certificate and key files, relative to the kubeconfig's directory and absolute.
  s.write("kube/certs/ca.crt", a1.ca_pem);
  s.write("kube/certs/admin.crt", a1.client_cert_pem);
  s.write("keys/admin.key", a1.client_key_pem);
  s.write("kube/c1.kubeconfig", kubeconfig(a1.server, "certs/ca.crt",
                                           "    client-certificate: certs/admin.crt\n    client-key: " +
                                               s.path("keys/admin.key").string() + "\n"));
  // c2: CA file and tokenFile.
  s.write("kube/other/ca.crt", a2.ca_pem);
  s.write("kube/other/token", a2.token + "\n");
  s.write("kube/c2.kubeconfig", kubeconfig(a2.server, "other/ca.crt", "    tokenFile: other/token\n"));
  make_chart(s.root(), "web");
  make_profile(s.root(), "profile.tgz");
  s.write("deploy.yaml", deployment_yaml());
  Run applied = s.emco({"apply", "-f", "deploy.yaml"});
  INFO(applied.out << applied.err);
  REQUIRE(applied.code == 0);

  // The workspace no longer depends on the files: none of their paths is
  // stored, and nothing their contents hold is printed.
  fs::remove_all(s.path("kube/certs"));
  fs::remove_all(s.path("kube/other"));
  fs::remove_all(s.path("keys"));
  const std::string db = s.dump();
  for (const char* path : {"certs/ca.crt", "admin.crt", "admin.key", "other/token"}) CHECK(db.find(path) == std::string::npos);

  const RunOptions quiet{.env = {{"EMCO_AUTO_RESUME", "0"}}};
  Run inst = s.emco({"dig", "instantiate", "proj1/ca/v1/dig1"}, quiet);
  INFO(inst.out << inst.err);
  REQUIRE(inst.code == 0);
  CHECK(holds_web(certs.sim, certs.name()));
  CHECK(holds_web(tokens.sim, tokens.name()));
  for (const Run& r : {applied, inst}) {
    CHECK(r.out.find("PRIVATE KEY") == std::string::npos);
    CHECK(r.err.find(a2.token) == std::string::npos);
  }
}

TEST_CASE("a kubeconfig naming a file that cannot be read is refused with its FILE:LINE and the path", "[kubeconfig][bad]") {
  Sandbox s;
  s.init();
  s.write("base.yaml", "---\n" + doc("cluster-providers", "metadata:\n  name: p1\n"));
  REQUIRE(s.emco({"apply", "-f", "base.yaml"}).code == 0);
  s.write("kube/ca.crt", "-----BEGIN CERTIFICATE-----\nSECRET-CONTENT\n-----END CERTIFICATE-----\n");
  s.write("kube/edge.kubeconfig", kubeconfig("https://127.0.0.1:6443", "ca.crt",
                                             "    client-certificate: certs/admin.crt\n    client-key: certs/admin.key\n"));
  s.write("bad.yaml", "---\n" + doc("cluster-providers/p1/clusters", "metadata:\n  name: c9\nfile: kube/edge.kubeconfig\n"));
  const std::string before = s.dump();
  Run r = s.emco({"apply", "-f", "bad.yaml"});
  CHECK(r.code == 3);
  INFO(r.err);
  const std::string kubeconfig_path = fs::absolute(s.path("kube/edge.kubeconfig")).string();
  CHECK(r.err.rfind("emco: error: bad.yaml:7: cluster 'p1+c9': " + kubeconfig_path + ":11: cannot read client-certificate '" +
                        s.path("kube/certs/admin.crt").string() + "': No such file or directory",
                    0) == 0);
  CHECK(r.err.find("SECRET-CONTENT") == std::string::npos);
  CHECK(s.dump() == before);
  // The noun command says the same.
  Run noun = s.emco({"cluster", "create", "p1/c9", "--kubeconfig", "kube/edge.kubeconfig"});
  CHECK(noun.code == 3);
  CHECK(noun.err.find(kubeconfig_path + ":11: cannot read client-certificate") != std::string::npos);
  CHECK(s.dump() == before);
}


namespace {

// Every directory below .emco is 0700 and every file 0600; the offenders otherwise.
std::vector<std::string> loose_modes(const fs::path& dir) {
  std::vector<std::string> out;
  auto check = [&](const fs::path& p, unsigned want) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return;  // gone meanwhile (a WAL checkpointed away)
    if ((st.st_mode & 0777) != want) out.push_back(p.string());
  };
  check(dir, 0700);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    check(it->path(), it->is_directory() ? 0700 : 0600);
  return out;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("secrets: .emco is 0700 and its files 0600, and no credential reaches sync.log, errors or -o json",
          "[kubeconfig][sim][secrets]") {
  TwoSims two;
  auto& [certs, tokens, a1, a2, s] = two;
  CHECK(loose_modes(s.path(".emco")).empty());
  // The simulator's kubeconfigs carry the key (client-key-data) and the token inline.
  const std::string kc1 = read_all(certs.sim.kubeconfig_path(certs.name()));
  const std::string kc2 = read_all(tokens.sim.kubeconfig_path(tokens.name()));
  s.write("kube/c1.kubeconfig", kc1);
  s.write("kube/c2.kubeconfig", kc2);
  make_chart(s.root(), "web");
  make_profile(s.root(), "profile.tgz");
  // An inline ssh key in a cluster sync object (stored only; nothing pushes with it).
  const std::string ssh_key =
      "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
      "-----END OPENSSH PRIVATE KEY-----\n";
  s.write("sync-object.yaml", "---\n" + doc("cluster-providers/p1/cluster-sync-objects",
                                            "metadata:\n  name: git\nspec:\n  kv:\n  - url: ssh://git@git.example/fleet.git\n"
                                            "  - sshKey: |\n" + [&] {
                                              std::string indented;
                                              for (const auto& l : lines(ssh_key)) indented += "      " + l + "\n";
                                              return indented;
                                            }()));
  s.write("deploy.yaml", deployment_yaml());
  const RunOptions quiet{.env = {{"EMCO_AUTO_RESUME", "0"}}};
  std::vector<Run> runs;
  runs.push_back(s.emco({"apply", "-f", "deploy.yaml"}, quiet));
  REQUIRE(runs.back().code == 0);
  runs.push_back(s.emco({"apply", "-f", "sync-object.yaml"}, quiet));
  REQUIRE(runs.back().code == 0);
  CHECK(loose_modes(s.path(".emco")).empty());

  // Instantiate without waiting; the next command resumes the delivery in the background
  // (an `emco sync` writing .emco/sync.log).
  runs.push_back(s.emco({"dig", "instantiate", "proj1/ca/v1/dig1", "--no-wait"}, quiet));
  REQUIRE(runs.back().code == 8);  // pending: the work is queued
  CHECK(loose_modes(s.path(".emco")).empty());
  Run list = s.emco({"dig", "list", "proj1/ca/v1"});
  runs.push_back(list);
  INFO(list.out << list.err);
  REQUIRE(list.code == 0);
  auto at = list.err.find("(pid ");
  REQUIRE(at != std::string::npos);
  const long pid = std::atol(list.err.c_str() + at + 5);
  for (int i = 0; i < 600 && ::kill(static_cast<pid_t>(pid), 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  REQUIRE(::kill(static_cast<pid_t>(pid), 0) != 0);
  CHECK(holds_web(certs.sim, certs.name()));
  CHECK(holds_web(tokens.sim, tokens.name()));
  CHECK(fs::exists(s.path(".emco/sync.log")));
  CHECK(loose_modes(s.path(".emco")).empty());

  // An error on the way: the token cluster refuses (its simulator is gone) and says so.
  tokens.sim.stop();
  runs.push_back(s.emco({"dig", "update", "proj1/ca/v1/dig1", "--timeout", "2s"}, quiet));
  runs.push_back(s.emco({"cluster", "check", "p1/c2"}, quiet));
  CHECK(runs.back().code != 0);
  CHECK_FALSE((runs.back().out + runs.back().err).empty());
  runs.push_back(s.emco({"sync", "--timeout", "2s"}, quiet));
  // Everything a user can read back, without --show-secrets.
  for (const std::vector<std::string>& get : std::vector<std::vector<std::string>>{
           {"cluster", "get", "p1/c1", "-o", "json"},
           {"cluster", "get", "p1/c2", "-o", "json"},
           {"cluster", "list", "p1", "-o", "json"},
           {"cluster", "sync-object", "get", "p1/git", "-o", "json"},
           {"get", "cluster-providers/p1/clusters/c1", "-o", "json"},
           {"lc", "get", "proj1/lc0", "-o", "json"},
           {"status", "-o", "json"},
       }) {
    runs.push_back(s.emco(get, quiet));
    INFO(get[0] << " " << get[1] << ": " << runs.back().err);
    CHECK(runs.back().code == 0);
  }
  CHECK(loose_modes(s.path(".emco")).empty());

  // The secret material and the forms it is stored in.
  const std::string key_body = a1.client_key_pem.substr(a1.client_key_pem.find('\n') + 1, 48);
  const std::string key_b64 = base64_encode(a1.client_key_pem).substr(0, 48);
  const std::string ssh_body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE";
  const std::string sync_log = read_all(s.path(".emco/sync.log"));
  CHECK_FALSE(sync_log.empty());
  for (const std::string& secret : {key_body, key_b64, a2.token, ssh_body}) {
    INFO("secret: " << secret);
    CHECK(sync_log.find(secret) == std::string::npos);
    for (const Run& r : runs) {
      INFO(r.out << r.err);
      CHECK(r.out.find(secret) == std::string::npos);
      CHECK(r.err.find(secret) == std::string::npos);
    }
  }
  // (with --show-secrets the sync object's key does come back, as asked)
  CHECK(s.emco({"cluster", "sync-object", "get", "p1/git", "-o", "json", "--show-secrets"}, quiet).out.find(ssh_body) !=
        std::string::npos);
}

}  // namespace emco::test
