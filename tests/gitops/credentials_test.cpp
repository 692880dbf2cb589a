// Credentials given inline in a cluster sync object (sshKey, knownHosts)
// reach the ssh transport as given: a push over ssh:// to sshd on loopback
// works with them, a wrong inline known_hosts is refused as a host-key
// mismatch, and no error names the key material.

#include <catch2/catch.hpp>

#include "core/util/error.hpp"
#include "plugins/targets/gitops/git_delivery.hpp"
#include "plugins/targets/gitops/gitops_target.hpp"
#include "support.hpp"

using namespace emco::gitops;
using namespace gitops_test;

TEST_CASE("an inline ssh key and known_hosts from the sync object push over ssh", "[gitops][ssh][credentials]") {
  TempDir tmp;
  fs::path bare = tmp.path() / "srv" / "repo.git";
  make_bare_repo(bare, true);
  REQUIRE(run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", (tmp.path() / "client").string()}).status == 0);
  SshServer sshd(tmp.path(), read_file(tmp.path() / "client.pub"));
  const std::string key = read_file(tmp.path() / "client");
  // Only the sync object holds the key from here on.
  fs::remove(tmp.path() / "client");
  const std::string key_piece = key.substr(key.find('\n') + 1, 40);
  auto registered = [&](const std::string& known_hosts) {
    return registered_cluster("p", "c", "fluxcd", "gitrepo",
                              {{"url", sshd.url(bare)}, {"sshKey", key}, {"knownHosts", known_hosts}}, "gitrepo", {});
  };
  GitDelivery delivery(tmp.path() / "cache");

  SECTION("the right known_hosts: the commit is pushed") {
    auto cluster = registered(sshd.known_hosts());
    auto result = delivery.deliver(cluster.remote, commit_request({{"clusters/p+c/a.yaml", "inline ssh"}}));
    REQUIRE(result.changed);
    fs::path work = clone(bare, "main", tmp.path() / "clone");
    CHECK(git(work, {"rev-parse", "HEAD"}) == result.commit_id + "\n");
    CHECK(show(work, "HEAD", "clusters/p+c/a.yaml") == "inline ssh");
  }
  SECTION("a known_hosts with another host key: a host-key error, nothing pushed") {
    REQUIRE(run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", (tmp.path() / "otherhost").string()}).status == 0);
    std::string other = read_file(tmp.path() / "otherhost.pub");
    auto cluster =
        registered("[127.0.0.1]:" + std::to_string(sshd.port()) + " " + other.substr(0, other.rfind(' ')) + "\n");
    const int commits = commit_count(bare, "main");
    try {
      delivery.deliver(cluster.remote, commit_request({{"b", "b"}}));
      FAIL("no error for a wrong host key");
    } catch (const emco::Error& e) {
      CHECK(e.kind() == emco::ErrorKind::unreachable);
      CHECK_THAT(e.message(), Catch::Contains("does not match known_hosts"));
      CHECK_THAT(e.message() + e.hint(), !Catch::Contains(key_piece));
    }
    CHECK(commit_count(bare, "main") == commits);
  }
}
