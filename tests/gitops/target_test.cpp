// The sync-engine Target for GitOps clusters: registration from sync-object
// kv, and batches that commit every staged cluster and app at once into a
// real bare repository (checked with the git CLI).

#include <catch2/catch.hpp>

#include <tuple>

#include "core/util/error.hpp"
#include "plugins/targets/gitops/gitops_target.hpp"
#include "support.hpp"

using namespace emco;
using namespace emco::gitops;
using namespace gitops_test;

namespace {

std::map<std::string, std::string> kv(std::initializer_list<std::pair<const std::string, std::string>> items) {
  return std::map<std::string, std::string>(items);
}

GitOpsOperation op_of(GitOpsOperationKind kind, long revision) {
  GitOpsOperation op;
  op.kind = kind;
  op.project = "p";
  op.composite_app = "ca";
  op.composite_app_version = "v1";
  op.dig = "dig";
  op.revision = revision;
  op.context.app_context_id = "4242";
  return op;
}

const char* k_cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n";

}  // namespace

TEST_CASE("registration reads the sync objects' kv", "[gitops][target]") {
  auto flux = kv({{"timeOut", "120"}, {"syncInterval", "30"}, {"retryInterval", "15"}});
  SECTION("fluxv2 is an alias of fluxcd; https gets the token, flux the timing") {
    auto c = registered_cluster("p", "c1", "fluxv2", "git", kv({{"url", "https://example.com/r.git"}, {"branch", "edge"},
                                                              {"userName", "bot"}, {"gitToken", "t0ken"}}),
                                "flux", flux);
    CHECK(c.type == GitOpsType::fluxcd);
    CHECK(c.id() == "p+c1");
    CHECK(c.remote.branch == "edge");
    auto* token = std::get_if<HttpsToken>(&c.remote.credentials);
    REQUIRE(token);
    CHECK(token->user == "bot");
    CHECK(token->token == "t0ken");
    CHECK(c.flux.sync_interval == 30);
    CHECK(c.flux.retry_interval == 15);
    CHECK(c.flux.timeout == 120);
  }
  SECTION("user and password") {
    auto c = registered_cluster("p", "c1", "anthos", "git",
                                kv({{"url", "https://example.com/r.git"}, {"userName", "u"}, {"password", "pw"}}), "git", {});
    CHECK(c.type == GitOpsType::anthos);
    CHECK(std::holds_alternative<UserPassword>(c.remote.credentials));
    CHECK(c.remote.branch == "main");
  }
  SECTION("file:// and git:// need no credentials: a token is not used there") {
    auto c = registered_cluster("p", "c1", "fluxcd", "git", kv({{"url", "file:///srv/r.git"}, {"gitToken", "t"}}), "git", {});
    CHECK(std::holds_alternative<NoCredentials>(c.remote.credentials));
  }
  SECTION("ssh key and known_hosts come from files") {
    TempDir dir;
    write_file(dir.path() / "key", "KEY TEXT", 0600);
    write_file(dir.path() / "kh", "[127.0.0.1]:2222 ssh-ed25519 AAAA\n");
    auto c = registered_cluster("p", "c1", "fluxcd", "git",
                                kv({{"url", "ssh://git@127.0.0.1:2222/r.git"},
                                    {"sshKeyFile", (dir.path() / "key").string()},
                                    {"knownHostsFile", (dir.path() / "kh").string()}}),
                                "git", {});
    auto* key = std::get_if<SshKey>(&c.remote.credentials);
    REQUIRE(key);
    CHECK(key->private_key == "KEY TEXT");
    CHECK(key->user == "git");
    CHECK(c.remote.known_hosts == "[127.0.0.1]:2222 ssh-ed25519 AAAA\n");
  }
  SECTION("ssh key, known_hosts and CA inline") {
    auto c = registered_cluster("p", "c1", "fluxcd", "git",
                                kv({{"url", "ssh://git@127.0.0.1:2222/r.git"},
                                    {"sshKey", "INLINE KEY"},
                                    {"sshPassphrase", "pp"},
                                    {"knownHosts", "[127.0.0.1]:2222 ssh-ed25519 BBBB\n"}}),
                                "git", {});
    auto* key = std::get_if<SshKey>(&c.remote.credentials);
    REQUIRE(key);
    CHECK(key->private_key == "INLINE KEY");
    CHECK(key->passphrase == "pp");
    CHECK(c.remote.known_hosts == "[127.0.0.1]:2222 ssh-ed25519 BBBB\n");
    auto https = registered_cluster("p", "c1", "fluxcd", "git",
                                    kv({{"url", "https://h/r.git"}, {"caCert", "-----BEGIN CERTIFICATE-----\n"}}), "git", {});
    CHECK(https.remote.ca_pem == "-----BEGIN CERTIFICATE-----\n");
  }
  SECTION("inline material and a file for the same thing are refused") {
    for (const auto& [inline_key, file_key, url] :
         std::vector<std::tuple<std::string, std::string, std::string>>{{"sshKey", "sshKeyFile", "ssh://git@h/r.git"},
                                                                        {"knownHosts", "knownHostsFile", "ssh://git@h/r.git"},
                                                                        {"caCert", "caFile", "https://h/r.git"}}) {
      try {
        registered_cluster("p", "c1", "fluxcd", "gitobj",
                           kv({{"url", url}, {inline_key, "secret-value"}, {file_key, "/some/file"}}), "gitobj", {});
        FAIL("no error for " << inline_key);
      } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::invalid);
        CHECK(std::string(e.message()) == "cluster sync object 'gitobj' of cluster 'p/c1' has both '" + inline_key +
                                              "' and '" + file_key + "'");
        CHECK(std::string(e.message() + e.hint()).find("secret-value") == std::string::npos);
      }
    }
  }
  SECTION("errors name the sync object and never a secret") {
    try {
      registered_cluster("p", "c1", "fluxcd", "gitobj", kv({{"gitToken", "very-secret"}}), "git", {});
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::invalid);
      CHECK(std::string(e.message()).find("gitobj") != std::string::npos);
      CHECK(std::string(e.message()).find("very-secret") == std::string::npos);
    }
    CHECK_THROWS_AS(registered_cluster("p", "c1", "azureArcV2", "g", kv({{"url", "file:///r"}}), "g", {}), Error);
    CHECK_THROWS_AS(registered_cluster("p", "c1", "fluxcd", "g", kv({{"url", "file:///r"}}), "t",
                                       kv({{"syncInterval", "soon"}})),
                    Error);
    CHECK_THROWS_AS(registered_cluster("p", "c1", "fluxcd", "g",
                                       kv({{"url", "https://h/r.git"}, {"caFile", "/nonexistent/ca.pem"}}), "g", {}),
                    Error);
  }
}

TEST_CASE("a repository batch commits all its clusters and apps at once", "[gitops][target]") {
  TempDir dir;
  fs::path bare = dir.path() / "r.git";
  make_bare_repo(bare, true);
  GitOpsOperation current = op_of(GitOpsOperationKind::instantiate, 1);
  GitOpsTargets targets(dir.path() / "cache", [&] { return current; });
  auto cluster = [&](const std::string& name) {
    return registered_cluster("p", name, "fluxcd", "git", kv({{"url", "file://" + bare.string()}}), "git", {});
  };
  auto run_once = [&](const std::vector<sync::Staged>& steps) {
    // One engine run: Targets made, steps staged, one commit, Targets dropped.
    auto t1 = targets.target(cluster("c1"), nullptr);
    auto t2 = targets.target(cluster("c2"), nullptr);
    REQUIRE(t1->batch() == t2->batch());  // one repository, one batch
    for (const auto& s : steps) t1->batch()->stage(s);
    return t1->batch()->commit(std::chrono::steady_clock::time_point::max());
  };
  std::string note = run_once({{"a1", "p+c1", "cm+ConfigMap", k_cm, false},
                               {"a2", "p+c1", "cm+ConfigMap", k_cm, false},
                               {"a1", "p+c2", "cm+ConfigMap", k_cm, false}});
  std::string head = git(bare, {"rev-parse", "main"}).substr(0, 40);
  CHECK(note == "commit " + head);
  CHECK(commit_count(bare, "main") == 2);
  CHECK(git(bare, {"log", "-1", "--format=%s", "main"}).find("instantiate p/ca/v1/dig revision 1") != std::string::npos);
  CHECK(show(bare, "main", "clusters/p+c2/context/4242/app/a1/cm+ConfigMap.yaml").find("\"k\":\"v\"") !=
        std::string::npos);
  CHECK_FALSE(show(bare, "main", "clusters/p+c1/kust4242.yaml").empty());

  SECTION("the same content again: no commit, the note names the head") {
    current = op_of(GitOpsOperationKind::update, 2);
    CHECK(run_once({{"a1", "p+c1", "cm+ConfigMap", k_cm, false}}) == "commit " + head);
    CHECK(commit_count(bare, "main") == 2);
  }
  SECTION("terminate removes every file of the context in one commit") {
    current = op_of(GitOpsOperationKind::terminate, 1);
    run_once({{"a1", "p+c1", "cm+ConfigMap", k_cm, true}, {"a2", "p+c1", "cm+ConfigMap", k_cm, true},
              {"a1", "p+c2", "cm+ConfigMap", k_cm, true}});
    CHECK(commit_count(bare, "main") == 3);
    CHECK(git(bare, {"ls-tree", "-r", "--name-only", "main"}) == "README\n");
  }
  SECTION("an unreachable remote is a transient error; a bad resource key a permanent one") {
    auto lost = registered_cluster("p", "c9", "fluxcd", "git", kv({{"url", "file:///nonexistent/r.git"}}), "git", {});
    auto t = targets.target(lost, nullptr);
    t->batch()->stage({"a1", "p+c9", "cm+ConfigMap", k_cm, false});
    try {
      t->batch()->commit(std::chrono::steady_clock::time_point::max());
      FAIL("no error");
    } catch (const sync::TargetError& e) {
      CHECK(e.transient());
    }
    try {
      t->batch()->stage({"a1", "p+c9", "no-kind", k_cm, false});
      FAIL("no error");
    } catch (const sync::TargetError& e) {
      CHECK_FALSE(e.transient());
    }
  }
}

TEST_CASE("a private CA is trusted only for certificates it signed for the host", "[gitops][target]") {
  TempDir dir;
  auto ok = [&](const std::vector<std::string>& argv) {
    auto r = run(argv, dir.path());
    INFO(r.err);
    REQUIRE(r.status == 0);
  };
  for (const char* name : {"ca", "other"})
    ok({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
        std::string(name) + ".key", "-out", std::string(name) + ".pem", "-days", "2", "-subj", "/CN=" + std::string(name)});
  ok({"openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "s.key", "-out",
      "s.csr", "-subj", "/CN=localhost"});
  write_file(dir.path() / "ext.cnf", "subjectAltName=DNS:localhost\n");
  ok({"openssl", "x509", "-req", "-in", "s.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "s.der",
      "-outform", "DER", "-days", "2", "-extfile", "ext.cnf"});
  std::string der = read_file(dir.path() / "s.der");
  std::string ca = read_file(dir.path() / "ca.pem");
  CHECK(certificate_trusted(der, ca, "localhost"));
  CHECK_FALSE(certificate_trusted(der, ca, "example.com"));
  CHECK_FALSE(certificate_trusted(der, read_file(dir.path() / "other.pem"), "localhost"));
  CHECK_FALSE(certificate_trusted("not der", ca, "localhost"));
  CHECK_FALSE(certificate_trusted(der, "", "localhost"));
}
