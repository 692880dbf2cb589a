// One DIG over a mixed fleet, through the emco binary: a direct cluster
// (kubeconfig, simulated), a GitOps-only cluster and a GitOps cluster that
// also has a kubeconfig for reading back, all delivering into real git
// remotes (file://, git daemon, HTTPS via lighttpd + mod_openssl). Checked
// with the git CLI (clone, log, show, ls-tree) and the simulator's objects.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <thread>

#include "sim/sim.hpp"
#include "support.hpp"

using namespace gitops_test;
using nlohmann::json;

namespace {

const std::string k_dig = "quickstart/hello-app/v1/hello-dig";

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A workspace with clusters direct1 (kubeconfig of simulated edge1), git2
// (GitOps only) and git3 (GitOps + kubeconfig of simulated edge3), all
// labelled, and the quickstart app placed on every one of them.
struct Fleet {
  TempDir tmp;
  emco::sim::Simulator sim{[] {
    emco::sim::SimOptions o;
    o.names = {"edge1", "edge3"};
    o.clusters = 2;
    o.ready_delay_ms = 0;
    return o;
  }()};
  fs::path ws;
  std::map<std::string, std::string> env;

  // `reference_kv`: the git sync object's kv entries (YAML flow maps).
  explicit Fleet(const std::vector<std::string>& reference_kv) {
    sim.start();
    ws = tmp.path() / "ws";
    fs::create_directories(ws);
    // The system's libgit2 leaks a little at exit (see support.cpp).
    write_file(tmp.path() / "lsan.supp", "leak:libgit2.so\nleak:libpcre2-8.so\nleak:libssh2.so\nleak:libcrypto.so\n");
    env["LSAN_OPTIONS"] = "suppressions=" + (tmp.path() / "lsan.supp").string();
    env["HOME"] = tmp.path().string();
    // These tests decide when queued work is delivered (emco sync); a
    // background resume started by 'dig status' would race them for it.
    env["EMCO_AUTO_RESUME"] = "0";
    REQUIRE(emco({"init"}).status == 0);
    fs::create_directories(tmp.path() / "profile");
    write_file(tmp.path() / "profile/manifest.yaml", "version: v1\ntype:\n  values: \"override_values.yaml\"\n");
    set_message("hello from git");

    std::string kv;
    for (const auto& e : reference_kv) kv += "  - " + e + "\n";
    std::string clusters =
        "version: emco/v2\nresourceContext: {anchor: cluster-providers}\nmetadata: {name: edge}\n"
        "---\nversion: emco/v2\nresourceContext: {anchor: cluster-providers/edge/cluster-sync-objects}\n"
        "metadata: {name: gitrepo}\nspec:\n  kv:\n" + kv +
        "---\nversion: emco/v2\nresourceContext: {anchor: cluster-providers/edge/cluster-sync-objects}\n"
        "metadata: {name: fluxtiming}\nspec:\n  kv:\n  - {timeOut: \"120\"}\n  - {syncInterval: \"30\"}\n"
        "  - {retryInterval: \"15\"}\n"
        "---\nversion: emco/v2\nresourceContext: {anchor: cluster-providers/edge/clusters}\nmetadata: {name: direct1}\n"
        "file: " + sim.kubeconfig_path("edge1") + "\n"
        "---\nversion: emco/v2\nresourceContext: {anchor: cluster-providers/edge/clusters}\nmetadata: {name: git2}\n"
        "spec:\n  gitOps: {gitOpsType: fluxv2, gitOpsReferenceObject: gitrepo, gitOpsResourceObject: fluxtiming}\n"
        "---\nversion: emco/v2\nresourceContext: {anchor: cluster-providers/edge/clusters}\nmetadata: {name: git3}\n"
        "spec:\n  gitOps: {gitOpsType: fluxcd, gitOpsReferenceObject: gitrepo, gitOpsResourceObject: fluxtiming}\n"
        "file: " + sim.kubeconfig_path("edge3") + "\n";
    for (const char* c : {"direct1", "git2", "git3"})
      clusters += std::string("---\nversion: emco/v2\nresourceContext: {anchor: cluster-providers/edge/clusters/") + c +
                  "/labels}\nclusterLabel: edge-cluster\n";
    write_file(ws / "clusters.yaml", clusters);

    std::string project =
        "version: emco/v2\nresourceContext: {anchor: projects}\nmetadata: {name: quickstart}\n"
        "---\nversion: emco/v2\nresourceContext: {anchor: projects/quickstart/logical-clouds}\nmetadata: {name: admin}\n"
        "spec: {level: \"0\"}\n";
    for (const char* c : {"direct1", "git2", "git3"})
      project += std::string("---\nversion: emco/v2\nresourceContext: {anchor: projects/quickstart/logical-clouds/admin/"
                             "cluster-references}\nmetadata: {name: ") + c + "}\nspec: {clusterProvider: edge, cluster: " +
                 c + "}\n";
    project += "---\nversion: emco/v2\nresourceContext: {anchor: projects/quickstart/logical-clouds/admin/instantiate}\n";
    write_file(ws / "project.yaml", project);

    const std::string ca = "projects/quickstart/composite-apps/hello-app/v1";
    std::string app =
        "version: emco/v2\nresourceContext: {anchor: projects/quickstart/composite-apps}\nmetadata: {name: hello-app}\n"
        "spec: {compositeAppVersion: v1}\n"
        "---\nversion: emco/v2\nresourceContext: {anchor: " + ca + "/apps}\nmetadata: {name: hello}\n"
        "file: " + std::string(EMCO_SOURCE_DIR) + "/examples/quickstart/charts/hello\n"
        "---\nversion: emco/v2\nresourceContext: {anchor: " + ca + "/composite-profiles}\nmetadata: {name: prof}\n"
        "---\nversion: emco/v2\nresourceContext: {anchor: " + ca + "/composite-profiles/prof/profiles}\n"
        "metadata: {name: hello-profile}\nspec: {app: hello}\nfile: " + (tmp.path() / "profile").string() + "\n"
        "---\nversion: emco/v2\nresourceContext: {anchor: " + ca + "/deployment-intent-groups}\nmetadata: {name: hello-dig}\n"
        "spec: {compositeProfile: prof, version: r1, logicalCloud: admin}\n"
        "---\nversion: emco/v2\nresourceContext: {anchor: " + ca + "/deployment-intent-groups/hello-dig/intents}\n"
        "metadata: {name: intent}\nspec: {intent: {genericPlacementIntent: gpi}}\n"
        "---\nversion: emco/v2\nresourceContext: {anchor: " + ca + "/deployment-intent-groups/hello-dig/generic-placement-intents}\n"
        "metadata: {name: gpi}\n"
        "---\nversion: emco/v2\nresourceContext: {anchor: " + ca +
        "/deployment-intent-groups/hello-dig/generic-placement-intents/gpi/app-intents}\n"
        "metadata: {name: hello-placement}\nspec:\n  app: hello\n  intent:\n    allOf:\n"
        "      - {clusterProvider: edge, clusterLabel: edge-cluster}\n";
    write_file(ws / "app.yaml", app);
    for (const char* f : {"clusters.yaml", "project.yaml", "app.yaml"}) {
      auto r = emco({"apply", "-f", f});
      INFO(f << ": " << r.out << r.err);
      REQUIRE(r.status == 0);
    }
    auto r = emco({"dig", "approve", k_dig});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
  }

  void set_message(const std::string& message) {
    write_file(tmp.path() / "profile/override_values.yaml", "message: \"" + message + "\"\n");
  }

  RunResult emco(std::vector<std::string> args) {
    args.insert(args.begin(), (fs::path(EMCO_BINARY_DIR) / "emco").string());
    return run(args, ws, env);
  }

  json status(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"dig", "status", k_dig, "-o", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = emco(args);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return json::parse(r.out);
  }

  // The resources of `cluster` in a status document.
  static json resources(const json& status, const std::string& cluster) {
    for (const auto& a : status.value("apps", json::array()))
      for (const auto& c : a["clusters"])
        if (c.value("cluster", "") == cluster) return c["resources"];
    return json::array();
  }

  // The simulated cluster's ConfigMap the chart renders, or null.
  json configmap(const std::string& sim_cluster) {
    for (const auto& cm : sim.list(sim_cluster, "v1", "ConfigMap"))
      if (contains(cm["metadata"].value("name", ""), "-hello")) return cm;
    return nullptr;
  }
};

std::vector<std::string> files_at(const fs::path& bare, const std::string& rev) {
  return lines(git(bare, {"ls-tree", "-r", "--name-only", rev}));
}

std::vector<std::string> with(const std::vector<std::string>& files, const std::string& part) {
  std::vector<std::string> out;
  for (const auto& f : files)
    if (contains(f, part)) out.push_back(f);
  return out;
}

}  // namespace

TEST_CASE("a mixed fleet: direct clusters applied and GitOps clusters committed in one commit per operation",
          "[mixed][gitops]") {
  TempDir remote_dir;
  fs::path bare = remote_dir.path() / "fleet.git";
  make_bare_repo(bare, true);
  Fleet f({"{url: \"file://" + bare.string() + "\"}", "{branch: main}", "{userName: emco}", "{repoName: fleet}"});

  // ---- instantiate ----
  auto r = f.emco({"dig", "instantiate", k_dig, "--timeout", "60s"});
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  // The direct cluster got the objects; the GitOps cluster with a kubeconfig did not (git delivers).
  REQUIRE_FALSE(f.configmap("edge1").is_null());
  CHECK(f.configmap("edge3").is_null());
  auto log = lines(git(bare, {"log", "--format=%s", "main"}));
  REQUIRE(log.size() == 2);  // seed + one commit for both GitOps clusters and every resource
  CHECK(contains(log[0], "instantiate"));
  CHECK(contains(log[0], "hello-dig"));
  CHECK(contains(log[0], "revision 1"));
  auto files = files_at(bare, "main");
  CHECK(with(files, "direct1").empty());
  for (const std::string c : {"clusters/edge+git2/", "clusters/edge+git3/"}) {
    auto mine = with(files, c);
    CHECK(with(mine, "/app/hello/").size() == 3);  // ConfigMap, Deployment, Service
    CHECK(with(mine, "/kust").size() == 1);         // Flux Kustomization
    CHECK(mine.size() == 5);                        // + GitRepository
  }
  std::string cm_path = with(with(files, "clusters/edge+git2/"), "+ConfigMap.yaml").at(0);
  json cm = json::parse(show(bare, "main", cm_path));
  CHECK(cm["data"]["message"] == "hello from git");
  std::string kust_path = with(with(files, "clusters/edge+git2/"), "/kust").at(0);
  std::string kust = show(bare, "main", kust_path);
  CHECK(contains(kust, "interval: 30s"));
  CHECK(contains(kust, "retryInterval: 15s"));
  CHECK(contains(kust, "timeout: 2m0s"));
  // The secret-free sync object reference leaves nothing of the workspace in the repository.
  CHECK_FALSE(contains(git(bare, {"log", "-p", "main"}), f.ws.string()));

  const std::string head1 = lines(git(bare, {"rev-parse", "main"})).at(0);
  json st = f.status();
  for (const auto& res : Fleet::resources(st, "direct1")) CHECK(res["deployedStatus"] == "Applied");
  for (const std::string c : {"git2", "git3"}) {
    auto res = Fleet::resources(st, c);
    REQUIRE(res.size() == 3);
    for (const auto& x : res) {
      CHECK(x["deployedStatus"] == "Committed");
      CHECK(x.value("commit", "") == head1);
    }
  }
  // Read back: a GitOps cluster without a kubeconfig is Unknown; direct ones are read.
  json ready = f.status({"--status", "ready"});
  for (const auto& x : Fleet::resources(ready, "git2")) CHECK(x["readyStatus"] == "Unknown");
  for (const auto& x : Fleet::resources(ready, "direct1")) CHECK(x["readyStatus"] != "Unknown");

  // ---- update changing one value: one commit, only the ConfigMaps ----
  f.set_message("hello again");
  r = f.emco({"apply", "-f", "app.yaml"});
  REQUIRE(r.status == 0);
  r = f.emco({"dig", "update", k_dig, "--timeout", "60s"});
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  log = lines(git(bare, {"log", "--format=%s", "main"}));
  REQUIRE(log.size() == 3);
  CHECK(contains(log[0], "update"));
  CHECK(contains(log[0], "revision 2"));
  auto changed = lines(git(bare, {"show", "--name-only", "--format=", "main"}));
  REQUIRE(changed.size() == 2);
  for (const auto& c : changed) CHECK(contains(c, "+ConfigMap.yaml"));
  CHECK(json::parse(show(bare, "main", cm_path))["data"]["message"] == "hello again");
  CHECK(f.configmap("edge1")["data"]["message"] == "hello again");
  const std::string head2 = lines(git(bare, {"rev-parse", "main"})).at(0);
  st = f.status();
  for (const auto& x : Fleet::resources(st, "git2")) {
    CHECK(x["deployedStatus"] == "Committed");
    // Unchanged resources keep the commit that delivered them.
    CHECK(x.value("commit", "") == (x["GVK"]["Kind"] == "ConfigMap" ? head2 : head1));
  }

  // ---- terminate: one commit removing every file of the deployment ----
  r = f.emco({"dig", "terminate", k_dig, "--timeout", "60s"});
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  log = lines(git(bare, {"log", "--format=%s", "main"}));
  REQUIRE(log.size() == 4);
  CHECK(contains(log[0], "terminate"));
  CHECK(files_at(bare, "main") == std::vector<std::string>{"README"});
  CHECK(f.configmap("edge1").is_null());
}

TEST_CASE("an update that changes a value and leaves a cluster makes one commit with both", "[mixed][gitops]") {
  TempDir remote_dir;
  fs::path bare = remote_dir.path() / "fleet.git";
  make_bare_repo(bare, true);
  Fleet f({"{url: \"file://" + bare.string() + "\"}", "{branch: main}"});
  auto r = f.emco({"dig", "instantiate", k_dig, "--timeout", "60s"});
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  REQUIRE(commit_count(bare, "main") == 2);
  auto before = files_at(bare, "main");
  REQUIRE(with(before, "clusters/edge+git3/").size() == 5);

  // One value changes, and the placement drops git3 (named clusters instead of the label).
  f.set_message("hello once more");
  std::string app = read_file(f.ws / "app.yaml");
  const std::string by_label = "      - {clusterProvider: edge, clusterLabel: edge-cluster}\n";
  REQUIRE(app.find(by_label) != std::string::npos);
  app.replace(app.find(by_label), by_label.size(),
              "      - {clusterProvider: edge, cluster: direct1}\n      - {clusterProvider: edge, cluster: git2}\n");
  write_file(f.ws / "app.yaml", app);
  r = f.emco({"apply", "-f", "app.yaml"});
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  r = f.emco({"dig", "update", k_dig, "--timeout", "60s"});
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);

  // One commit: git2's ConfigMap changed; git3's three resources, its Flux
  // GitRepository and Kustomization deleted.
  CHECK(commit_count(bare, "main") == 3);
  auto stat = lines(git(bare, {"show", "--name-status", "--format=", "main"}));
  std::vector<std::string> modified, deleted, other;
  for (const auto& l : stat) {
    if (l.rfind("M\t", 0) == 0) modified.push_back(l.substr(2));
    else if (l.rfind("D\t", 0) == 0) deleted.push_back(l.substr(2));
    else other.push_back(l);
  }
  CHECK(other.empty());
  REQUIRE(modified.size() == 1);
  CHECK(contains(modified[0], "clusters/edge+git2/"));
  CHECK(contains(modified[0], "+ConfigMap.yaml"));
  std::sort(deleted.begin(), deleted.end());
  CHECK(deleted == with(before, "clusters/edge+git3/"));
  CHECK(with(files_at(bare, "main"), "clusters/edge+git3/").empty());
  CHECK(json::parse(show(bare, "main", modified[0]))["data"]["message"] == "hello once more");
  CHECK(f.configmap("edge1")["data"]["message"] == "hello once more");
  json st = f.status();
  for (const auto& x : Fleet::resources(st, "git2")) CHECK(x["deployedStatus"] == "Committed");

  // Terminate: one more commit, nothing of the deployment left.
  r = f.emco({"dig", "terminate", k_dig, "--timeout", "60s"});
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK(commit_count(bare, "main") == 4);
  CHECK(files_at(bare, "main") == std::vector<std::string>{"README"});
  CHECK(f.configmap("edge1").is_null());
}

// Needs core/manifest to keep the kubeconfig of a cluster registered with
// both spec.gitOps and file: (batch.cpp drops it today).
TEST_CASE("a GitOps cluster that also has a kubeconfig reads its status back through it", "[mixed][gitops]") {
  TempDir remote_dir;
  fs::path bare = remote_dir.path() / "fleet.git";
  make_bare_repo(bare, true);
  Fleet f({"{url: \"file://" + bare.string() + "\"}", "{branch: main}"});
  REQUIRE(f.emco({"dig", "instantiate", k_dig, "--timeout", "60s"}).status == 0);
  CHECK(f.configmap("edge3").is_null());  // delivered by git, not applied
  json ready = f.status({"--status", "ready"});
  auto res = Fleet::resources(ready, "git3");
  REQUIRE(res.size() == 3);
  for (const auto& x : res) CHECK(x["readyStatus"] == "NotPresent");
}

TEST_CASE("an unreachable remote leaves GitOps resources pending and emco sync pushes them later",
          "[mixed][gitops]") {
  TempDir remote_dir;
  fs::path bare = remote_dir.path() / "later.git";  // does not exist yet
  Fleet f({"{url: \"file://" + bare.string() + "\"}", "{branch: deploy}"});
  auto r = f.emco({"dig", "instantiate", k_dig, "--timeout", "3s"});
  INFO(r.out << r.err);
  CHECK(r.status != 0);
  json st = f.status();
  for (const auto& x : Fleet::resources(st, "direct1")) CHECK(x["deployedStatus"] == "Applied");
  for (const std::string c : {"git2", "git3"}) {
    auto res = Fleet::resources(st, c);
    REQUIRE(res.size() == 3);
    for (const auto& x : res) CHECK(x["deployedStatus"] == "Pending");
  }
  // The remote appears (without the branch: it is created); the queued work is delivered.
  make_bare_repo(bare, true);
  r = f.emco({"sync", "--timeout", "60s"});
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  auto log = lines(git(bare, {"log", "--format=%s", "deploy"}));
  REQUIRE(log.size() == 1);  // a new branch with no parent: only emco's commit
  CHECK(contains(log[0], "instantiate"));
  st = f.status();
  for (const std::string c : {"git2", "git3"})
    for (const auto& x : Fleet::resources(st, c)) CHECK(x["deployedStatus"] == "Committed");
  CHECK(lines(git(bare, {"log", "--format=%s", "main"})).size() == 1);  // main untouched
}

TEST_CASE("a push rejected by a server hook shows the server's reason and records nothing as committed",
          "[mixed][gitops]") {
  TempDir root;
  fs::path bare = root.path() / "repos" / "guarded.git";
  make_bare_repo(bare, true);
  write_file(bare / "hooks" / "pre-receive", "#!/bin/sh\necho 'policy: deployments are frozen today' >&2\nexit 1\n",
             0755);
  GitDaemon daemon(root.path() / "repos");
  Fleet f({"{url: \"" + daemon.url("guarded.git") + "\"}", "{branch: main}"});
  auto r = f.emco({"dig", "instantiate", k_dig, "--timeout", "60s"});
  CHECK(r.status != 0);
  CHECK(contains(r.out + r.err, "deployments are frozen today"));
  CHECK(lines(git(bare, {"log", "--format=%s", "main"})).size() == 1);
  json st = f.status();
  for (const auto& x : Fleet::resources(st, "direct1")) CHECK(x["deployedStatus"] == "Applied");
  for (const auto& x : Fleet::resources(st, "git2")) CHECK(x["deployedStatus"] == "Failed");
}

TEST_CASE("a repository with unrelated history is refused and left alone", "[mixed][gitops]") {
  TempDir remote_dir;
  fs::path bare = remote_dir.path() / "fleet.git";
  make_bare_repo(bare, true);
  Fleet f({"{url: \"file://" + bare.string() + "\"}", "{branch: main}"});
  REQUIRE(f.emco({"dig", "instantiate", k_dig, "--timeout", "60s"}).status == 0);
  // Someone replaces the branch with an unrelated history.
  TempDir other;
  git(other.path(), {"init", "-q", "-b", "main"});
  write_file(other.path() / "OTHER", "x\n");
  git(other.path(), {"add", "OTHER"});
  git(other.path(), {"commit", "-q", "-m", "unrelated"});
  git(other.path(), {"push", "-q", "-f", bare.string(), "main"});
  const std::string foreign = lines(git(bare, {"rev-parse", "main"})).at(0);
  f.set_message("changed");
  REQUIRE(f.emco({"apply", "-f", "app.yaml"}).status == 0);
  auto r = f.emco({"dig", "update", k_dig, "--timeout", "60s"});
  CHECK(r.status != 0);
  CHECK(contains(r.out + r.err, "unrelated"));
  CHECK(lines(git(bare, {"rev-parse", "main"})).at(0) == foreign);
}

TEST_CASE("HTTPS remote with a private CA and a token and wrong credentials staying pending", "[mixed][gitops][https]") {
  const std::string lighttpd = "/usr/sbin/lighttpd";
  if (!have_program(lighttpd) || !fs::exists("/usr/lib/lighttpd/mod_openssl.so")) {
    WARN("skipped: lighttpd with mod_openssl is not installed");
    return;
  }
  TempDir srv;
  fs::path root = srv.path() / "repos";
  make_bare_repo(root / "fleet.git", true);
  // A private CA and a server certificate for localhost signed by it.
  auto ok = [&](const std::vector<std::string>& argv) {
    auto r = run(argv, srv.path());
    INFO(r.err);
    REQUIRE(r.status == 0);
  };
  ok({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
      "-subj", "/CN=emco test CA"});
  ok({"openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj",
      "/CN=localhost"});
  write_file(srv.path() / "ext.cnf", "subjectAltName=DNS:localhost\n");
  ok({"openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
      "server.crt", "-days", "2", "-extfile", "ext.cnf"});
  write_file(srv.path() / "server.pem", read_file(srv.path() / "server.crt") + read_file(srv.path() / "server.key"), 0600);
  write_file(srv.path() / "users", "emco:s3cret-token\n", 0600);
  fs::create_directories(srv.path() / "docroot");
  int port = free_port();
  std::ostringstream conf;
  conf << "server.bind = \"127.0.0.1\"\nserver.port = " << port << "\n"
       << "server.document-root = \"" << (srv.path() / "docroot").string() << "\"\n"
       << "server.errorlog = \"" << (srv.path() / "error.log").string() << "\"\n"
       << "server.modules = (\"mod_openssl\", \"mod_alias\", \"mod_setenv\", \"mod_auth\", \"mod_authn_file\", \"mod_cgi\")\n"
       << "ssl.engine = \"enable\"\nssl.pemfile = \"" << (srv.path() / "server.pem").string() << "\"\n"
       << "auth.backend = \"plain\"\nauth.backend.plain.userfile = \"" << (srv.path() / "users").string() << "\"\n"
       << "alias.url = (\"/git/\" => \"/usr/lib/git-core/git-http-backend/\")\n"
       << "$HTTP[\"url\"] =~ \"^/git/\" {\n  cgi.assign = (\"\" => \"\")\n"
       << "  setenv.set-environment = (\"GIT_PROJECT_ROOT\" => \"" << root.string() << "\", \"GIT_HTTP_EXPORT_ALL\" => \"1\")\n"
       << "  auth.require = (\"\" => (\"method\" => \"basic\", \"realm\" => \"git\", \"require\" => \"valid-user\"))\n}\n";
  write_file(srv.path() / "lighttpd.conf", conf.str());
  Process server({lighttpd, "-D", "-f", (srv.path() / "lighttpd.conf").string()}, srv.path() / "lighttpd.log");
  REQUIRE(wait_for_port(port));
  const std::string url = "https://localhost:" + std::to_string(port) + "/git/fleet.git";
  const std::string ca = "{caFile: \"" + (srv.path() / "ca.pem").string() + "\"}";

  SECTION("the right token: pushed, TLS verified against the remote's CA") {
    Fleet f({"{url: \"" + url + "\"}", "{branch: main}", "{userName: emco}", "{gitToken: s3cret-token}", ca});
    auto r = f.emco({"dig", "instantiate", k_dig, "--timeout", "60s"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    auto log = lines(git(root / "fleet.git", {"log", "--format=%s", "main"}));
    REQUIRE(log.size() == 2);
    CHECK(contains(log[0], "instantiate"));
    // The token is in no output and not in the repository.
    CHECK_FALSE(contains(r.out + r.err, "s3cret-token"));
    CHECK_FALSE(contains(f.emco({"get", "cluster-providers/edge/cluster-sync-objects/gitrepo", "-o", "yaml"}).out,
                         "s3cret-token"));
    CHECK_FALSE(contains(git(root / "fleet.git", {"log", "-p", "main"}), "s3cret-token"));
    // Readable by the git CLI trusting the same CA.
    TempDir clone_dir;
    clone("https://emco:s3cret-token@localhost:" + std::to_string(port) + "/git/fleet.git", "main",
          clone_dir.path() / "c", {{"GIT_SSL_CAINFO", (srv.path() / "ca.pem").string()}});
    CHECK_FALSE(with(lines(git(clone_dir.path() / "c", {"ls-files"})), "clusters/edge+git2/").empty());
  }
  SECTION("the CA inline in the sync object (caCert)") {
    const std::string pem = read_file(srv.path() / "ca.pem");
    Fleet f({"{url: \"" + url + "\"}", "{branch: main}", "{userName: emco}", "{gitToken: s3cret-token}",
             "{caCert: " + json(pem).dump() + "}"});
    auto r = f.emco({"dig", "instantiate", k_dig, "--timeout", "60s"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(lines(git(root / "fleet.git", {"log", "--format=%s", "main"})).size() == 2);
    CHECK_FALSE(contains(f.emco({"get", "cluster-providers/edge/cluster-sync-objects/gitrepo", "-o", "yaml"}).out,
                         "BEGIN CERTIFICATE"));
  }
  SECTION("without the CA the certificate is refused: pending") {
    Fleet f({"{url: \"" + url + "\"}", "{branch: main}", "{userName: emco}", "{gitToken: s3cret-token}"});
    auto r = f.emco({"dig", "instantiate", k_dig, "--timeout", "3s"});
    CHECK(r.status != 0);
    CHECK(contains(r.out + r.err, "not trusted"));
    CHECK(lines(git(root / "fleet.git", {"log", "--format=%s", "main"})).size() == 1);
  }
  SECTION("a wrong token: pending, nothing pushed, the token not shown") {
    Fleet f({"{url: \"" + url + "\"}", "{branch: main}", "{userName: emco}", "{gitToken: wrong-token}", ca});
    auto r = f.emco({"dig", "instantiate", k_dig, "--timeout", "3s"});
    CHECK(r.status != 0);
    CHECK(contains(r.out + r.err, "authentication failed"));
    CHECK_FALSE(contains(r.out + r.err, "wrong-token"));
    CHECK(lines(git(root / "fleet.git", {"log", "--format=%s", "main"})).size() == 1);
    for (const auto& x : Fleet::resources(f.status(), "git2")) CHECK(x["deployedStatus"] == "Pending");
  }
}

TEST_CASE("two workspaces pushing to one remote at once lose nothing", "[mixed][gitops]") {
  TempDir remote_dir;
  fs::path bare = remote_dir.path() / "shared.git";
  make_bare_repo(bare, true);
  // The same fleet registered in two workspaces: each deployment gets its own
  // context id, so both land side by side on one branch.
  Fleet a({"{url: \"file://" + bare.string() + "\"}", "{branch: main}"});
  Fleet b({"{url: \"file://" + bare.string() + "\"}", "{branch: main}"});
  RunResult ra, rb;
  std::thread ta([&] { ra = a.emco({"dig", "instantiate", k_dig, "--timeout", "60s"}); });
  std::thread tb([&] { rb = b.emco({"dig", "instantiate", k_dig, "--timeout", "60s"}); });
  ta.join();
  tb.join();
  INFO(ra.err << rb.err);
  REQUIRE(ra.status == 0);
  REQUIRE(rb.status == 0);
  auto log = lines(git(bare, {"log", "--format=%s", "main"}));
  CHECK(log.size() == 3);  // seed + one commit per workspace, neither lost
  // Both deployments' directories are there (their context ids differ).
  auto files = files_at(bare, "main");
  std::set<std::string> contexts;
  for (const auto& file : with(files, "clusters/edge+git2/context/")) contexts.insert(file.substr(0, file.find("/app/")));
  CHECK(contexts.size() == 2);
}

TEST_CASE("ssh with the key and known_hosts inline in the sync object, shown to no one", "[mixed][gitops][ssh]") {
  TempDir srv;
  fs::path bare = srv.path() / "fleet.git";
  make_bare_repo(bare, true);
  REQUIRE(run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "emco-test", "-f", (srv.path() / "client").string()})
              .status == 0);
  SshServer sshd(srv.path(), read_file(srv.path() / "client.pub"));
  const std::string key = read_file(srv.path() / "client");
  // The key lives only in the workspace: the file it came from is gone.
  fs::remove(srv.path() / "client");
  const std::string key_line = key.substr(key.find('\n') + 1, 40);  // a piece of the key's body
  Fleet f({"{url: \"" + sshd.url(bare) + "\"}", "{branch: main}", "{sshKey: " + json(key).dump() + "}",
           "{knownHosts: " + json(sshd.known_hosts()).dump() + "}"});
  auto r = f.emco({"dig", "instantiate", k_dig, "--timeout", "60s"});
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  auto log = lines(git(bare, {"log", "--format=%s", "main"}));
  REQUIRE(log.size() == 2);
  CHECK(contains(log[0], "instantiate"));
  CHECK_FALSE(with(files_at(bare, "main"), "clusters/edge+git2/context/").empty());

  // Not in any output, the repository or the git cache; --show-secrets shows it.
  std::string shown;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"get", "cluster-providers/edge/cluster-sync-objects/gitrepo", "-o", "yaml"},
           {"get", "cluster-providers/edge/cluster-sync-objects/gitrepo", "-o", "json"},
           {"cluster", "sync-object", "list", "edge", "-o", "yaml"},
           {"dig", "status", k_dig, "-o", "json"}})
    shown += f.emco(args).out;
  CHECK_FALSE(contains(shown + r.out + r.err, key_line));
  CHECK(contains(shown, "<redacted>"));
  CHECK_FALSE(contains(git(bare, {"log", "-p", "--all"}), key_line));
  for (const auto& entry : fs::recursive_directory_iterator(f.ws / ".emco" / "git"))
    if (entry.is_regular_file()) CHECK_FALSE(contains(read_file(entry.path()), key_line));
  auto revealed = f.emco({"get", "cluster-providers/edge/cluster-sync-objects/gitrepo", "-o", "json", "--show-secrets"});
  CHECK(contains(revealed.out, "OPENSSH PRIVATE KEY"));

  // A value longer than the 64 KiB a sync object holds is refused by name,
  // and the stored object stays as it was.
  write_file(f.ws / "big.yaml",
             "version: emco/v2\nresourceContext: {anchor: cluster-providers/edge/cluster-sync-objects}\n"
             "metadata: {name: gitrepo}\nspec:\n  kv:\n  - {sshKey: \"" + std::string(70000, 'k') + "\"}\n");
  auto big = f.emco({"apply", "-f", "big.yaml"});
  CHECK(big.status != 0);
  CHECK(contains(big.err, "big.yaml"));
  CHECK(contains(big.err, "is longer than 65536 characters"));
  CHECK(f.emco({"get", "cluster-providers/edge/cluster-sync-objects/gitrepo", "-o", "json", "--show-secrets"}).out ==
        revealed.out);
}

TEST_CASE("drift on a mixed fleet: a hand edit and a removed file in the GitOps repository are drift, and "
          "dig sync --repair commits the plan back",
          "[mixed][gitops][drift]") {
  TempDir remote_dir;
  fs::path bare = remote_dir.path() / "fleet.git";
  make_bare_repo(bare, true);
  Fleet f({"{url: \"file://" + bare.string() + "\"}", "{branch: main}"});
  auto r = f.emco({"dig", "instantiate", k_dig, "--timeout", "60s"});
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  r = f.emco({"dig", "diff", "--live", k_dig});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK(contains(r.out, "No drift: 9 objects on 3 clusters match the plan."));

  // By hand, in a clone: git2's ConfigMap edited, git3's Service removed.
  TempDir work;
  fs::path checkout = clone("file://" + bare.string(), "main", work.path() / "c");
  auto files = files_at(bare, "main");
  auto cm = with(with(files, "clusters/edge+git2/"), "r1-hello+ConfigMap");
  auto svc = with(with(files, "clusters/edge+git3/"), "r1-hello+Service");
  REQUIRE(cm.size() == 1);
  REQUIRE(svc.size() == 1);
  std::string text = show(bare, "main", cm[0]);
  auto at = text.find("hello from git");
  REQUIRE(at != std::string::npos);
  write_file(checkout / cm[0], text.replace(at, 14, "edited by hand"));
  git(checkout, {"rm", "-q", svc[0]});
  git(checkout, {"commit", "-qam", "a hand edit"});
  git(checkout, {"push", "-q", "origin", "main"});
  const int commits = commit_count(bare, "main");

  r = f.emco({"dig", "diff", "--live", k_dig, "-o", "json"});
  INFO(r.out << r.err);
  REQUIRE(r.status == 2);
  json report = json::parse(r.out);
  REQUIRE(report["objects"].size() == 2);
  std::map<std::string, json> by_cluster;
  for (const auto& o : report["objects"]) by_cluster[o["cluster"]] = o;
  CHECK(by_cluster["edge+git2"]["resource"] == "r1-hello+ConfigMap");
  CHECK(by_cluster["edge+git2"]["drift"] == "changed");
  CHECK(by_cluster["edge+git2"]["file"] == cm[0]);
  CHECK(by_cluster["edge+git3"]["resource"] == "r1-hello+Service");
  CHECK(by_cluster["edge+git3"]["drift"] == "deleted");
  for (const auto& c : report["clusters"]) CHECK(c["reachable"] == true);

  r = f.emco({"dig", "sync", "--repair", k_dig});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
  CHECK(contains(r.out, "Repaired: 1 re-applied, 1 recreated, 0 extra deleted."));
  CHECK(commit_count(bare, "main") == commits + 1);  // one commit for the repository
  CHECK(contains(show(bare, "main", cm[0]), "hello from git"));
  CHECK(with(files_at(bare, "main"), svc[0]).size() == 1);
  r = f.emco({"dig", "diff", "--live", k_dig});
  INFO(r.out << r.err);
  CHECK(r.status == 0);
}
