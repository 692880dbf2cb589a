// GitDelivery against real servers on loopback: git daemon (git://),
// lighttpd + git http-backend with basic auth (http://), sshd (ssh://).
// Each test starts its servers on free ports and stops them at the end.

#include <catch2/catch.hpp>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <vector>
#include <cstdio>

#include "core/util/error.hpp"
#include "plugins/targets/gitops/git_delivery.hpp"
#include "plugins/targets/gitops/git_stream.hpp"
#include "support.hpp"
#include "tests/raw_server.hpp"

using namespace emco::gitops;
using namespace gitops_test;

namespace {

emco::Error expect_error(GitDelivery& delivery, const GitRemoteSpec& spec, const CommitRequest& req) {
  try {
    delivery.deliver(spec, req);
  } catch (const emco::Error& e) {
    return e;
  }
  FAIL("expected deliver() to fail");
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("git daemon: push, update and verify with git clone", "[gitops][daemon]") {
  TempDir tmp;
  fs::path root = tmp.path() / "srv";
  make_bare_repo(root / "repo.git", true);
  GitDaemon daemon(root);
  GitRemoteSpec spec;
  spec.url = daemon.url("repo.git");
  GitDelivery delivery(tmp.path() / "cache");

  auto first = delivery.deliver(spec, commit_request({{"clusters/p+c/a.yaml", "a1"}, {"clusters/p+c/b.yaml", "b1"}}));
  REQUIRE(first.changed);
  auto same = delivery.deliver(spec, commit_request({{"clusters/p+c/a.yaml", "a1"}}));
  CHECK_FALSE(same.changed);
  auto second = delivery.deliver(spec, commit_request({{"clusters/p+c/a.yaml", "a2"}}, "emco: update"));
  REQUIRE(second.changed);

  fs::path work = clone(spec.url, "main", tmp.path() / "clone");
  CHECK(git(work, {"log", "--format=%H %s"}) ==
        second.commit_id + " emco: update\n" + first.commit_id + " emco: test\n" +
            git(work, {"log", "-1", "--format=%H %s", "HEAD~2"}));
  CHECK(show(work, "HEAD", "clusters/p+c/a.yaml") == "a2");
  CHECK(show(work, "HEAD", "clusters/p+c/b.yaml") == "b1");
}

TEST_CASE("git daemon: a branch that does not exist yet is created", "[gitops][daemon]") {
  TempDir tmp;
  fs::path root = tmp.path() / "srv";
  make_bare_repo(root / "repo.git", true);
  GitDaemon daemon(root);
  GitRemoteSpec spec;
  spec.url = daemon.url("repo.git");
  spec.branch = "provider1+cluster1";
  GitDelivery delivery(tmp.path() / "cache");
  auto result = delivery.deliver(spec, commit_request({{"x.yaml", "x"}}));
  REQUIRE(result.changed);
  fs::path work = clone(spec.url, "provider1+cluster1", tmp.path() / "clone");
  CHECK(git(work, {"rev-parse", "HEAD"}) == result.commit_id + "\n");
  CHECK(git(work, {"ls-tree", "--name-only", "HEAD"}) == "x.yaml\n");
}

TEST_CASE("git daemon: a pre-receive hook that rejects is reported with its message", "[gitops][daemon]") {
  TempDir tmp;
  fs::path root = tmp.path() / "srv";
  fs::path bare = root / "repo.git";
  make_bare_repo(bare, true);
  write_file(bare / "hooks" / "pre-receive",
             "#!/bin/sh\necho 'policy: commits from emco need a ticket number' >&2\nexit 1\n", 0755);
  GitDaemon daemon(root);
  GitRemoteSpec spec;
  spec.url = daemon.url("repo.git");
  GitDelivery delivery(tmp.path() / "cache");
  std::string before = git(bare, {"rev-parse", "main"});

  auto e = expect_error(delivery, spec, commit_request({{"a", "a"}}));
  CHECK(e.kind() == emco::ErrorKind::failed);
  CHECK_THAT(e.message(), Catch::Contains("rejected"));
  CHECK_THAT(e.message(), Catch::Contains("pre-receive hook declined"));
  CHECK_THAT(e.message(), Catch::Contains("policy: commits from emco need a ticket number"));
  CHECK(git(bare, {"rev-parse", "main"}) == before);
  CHECK(delivery.cached_head(spec) + "\n" == before);
}

TEST_CASE("git daemon: unreachable remote is an unreachable error and records nothing", "[gitops][daemon]") {
  TempDir tmp;
  GitRemoteSpec spec;
  spec.url = "git://127.0.0.1:" + std::to_string(free_port()) + "/repo.git";
  GitDelivery delivery(tmp.path() / "cache");
  auto e = expect_error(delivery, spec, commit_request({{"a", "a"}}));
  CHECK(e.kind() == emco::ErrorKind::unreachable);
  CHECK_THAT(e.message(), Catch::Contains("cannot fetch branch 'main' from 'git://127.0.0.1:"));
  CHECK(delivery.cached_head(spec).empty());
}

TEST_CASE("git daemon: concurrent pushes from two workspaces lose nothing", "[gitops][daemon][race]") {
  TempDir tmp;
  fs::path root = tmp.path() / "srv";
  make_bare_repo(root / "repo.git", true);
  GitDaemon daemon(root);
  GitRemoteSpec spec;
  spec.url = daemon.url("repo.git");
  constexpr int k_rounds = 6;
  std::atomic<int> total_attempts{0};
  auto worker = [&](const std::string& name) {
    DeliveryOptions options;
    options.max_attempts = 50;
    GitDelivery delivery(tmp.path() / name, options);
    for (int i = 0; i < k_rounds; ++i)
      total_attempts += delivery.deliver(spec, commit_request({{name + "/" + std::to_string(i), name}})).attempts;
  };
  std::thread a(worker, "a"), b(worker, "b");
  a.join();
  b.join();
  fs::path work = clone(spec.url, "main", tmp.path() / "clone");
  CHECK(commit_count(work, "HEAD") == 1 + 2 * k_rounds);
  std::string files = git(work, {"ls-tree", "-r", "--name-only", "HEAD"});
  for (int i = 0; i < k_rounds; ++i) {
    CHECK_THAT(files, Catch::Contains("a/" + std::to_string(i) + "\n"));
    CHECK_THAT(files, Catch::Contains("b/" + std::to_string(i) + "\n"));
  }
  CHECK(total_attempts >= 2 * k_rounds);
}

TEST_CASE("git daemon: a forced race is fetched, rebuilt and retried", "[gitops][daemon][race]") {
  TempDir tmp;
  fs::path root = tmp.path() / "srv";
  make_bare_repo(root / "repo.git", true);
  GitDaemon daemon(root);
  GitRemoteSpec spec;
  spec.url = daemon.url("repo.git");
  GitDelivery other(tmp.path() / "other");
  DeliveryOptions options;
  options.before_push = [&](int attempt) {
    if (attempt == 1) other.deliver(spec, commit_request({{"other", "o"}}));
  };
  GitDelivery delivery(tmp.path() / "ws", options);
  auto result = delivery.deliver(spec, commit_request({{"mine", "m"}}));
  CHECK(result.attempts == 2);
  fs::path work = clone(spec.url, "main", tmp.path() / "clone");
  CHECK(git(work, {"ls-tree", "--name-only", "HEAD"}) == "README\nmine\nother\n");
}

TEST_CASE("smart http with basic auth: push, wrong and missing credentials", "[gitops][http]") {
  TempDir tmp;
  fs::path root = tmp.path() / "srv";
  make_bare_repo(root / "repo.git", true);
  const std::string password = "s3cret-Pa55word";
  HttpServer http(root, tmp.path() / "http", "emco", password);
  GitRemoteSpec spec;
  spec.url = http.url("repo.git");
  spec.credentials = UserPassword{"emco", password};
  GitDelivery delivery(tmp.path() / "cache");

  auto result = delivery.deliver(spec, commit_request({{"clusters/p+c/a.yaml", "over http"}}));
  REQUIRE(result.changed);
  fs::path work = clone(root / "repo.git", "main", tmp.path() / "clone");
  CHECK(git(work, {"rev-parse", "HEAD"}) == result.commit_id + "\n");
  CHECK(show(work, "HEAD", "clusters/p+c/a.yaml") == "over http");
  CHECK_FALSE(delivery.deliver(spec, commit_request({{"clusters/p+c/a.yaml", "over http"}})).changed);

  SECTION("a token is sent as the password") {
    GitRemoteSpec token = spec;
    token.credentials = HttpsToken{password, "emco"};
    CHECK(delivery.deliver(token, commit_request({{"b", "token"}})).changed);
    CHECK(show(root / "repo.git", "main", "b") == "token");
  }
  SECTION("wrong password") {
    const std::string wrong = "WrongPassw0rd-xyz";
    GitRemoteSpec bad = spec;
    bad.credentials = UserPassword{"emco", wrong};
    GitDelivery other(tmp.path() / "other");
    auto e = expect_error(other, bad, commit_request({{"c", "c"}}));
    CHECK(e.kind() == emco::ErrorKind::unreachable);
    CHECK_THAT(e.message(), Catch::StartsWith("authentication failed for 'http://127.0.0.1:"));
    CHECK_THAT(e.message() + e.hint(), !Catch::Contains(wrong) && !Catch::Contains(password));
    CHECK(other.cached_head(bad).empty());
  }
  SECTION("no credentials") {
    GitRemoteSpec anonymous = spec;
    anonymous.credentials = NoCredentials{};
    auto e = expect_error(delivery, anonymous, commit_request({{"c", "c"}}));
    CHECK(e.kind() == emco::ErrorKind::unreachable);
    CHECK_THAT(e.message(), Catch::Contains("no credentials are configured"));
  }
  // Nothing of the credentials lands in the cache or the repository.
  for (const fs::path& dir : {delivery.cache_path(spec), root / "repo.git"}) {
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (!entry.is_regular_file() || entry.path().string().find("/objects/") != std::string::npos) continue;
      INFO(entry.path());
      CHECK(read_file(entry.path()).find(password) == std::string::npos);
    }
  }
}

TEST_CASE("ssh with an ed25519 key and known_hosts checking", "[gitops][ssh]") {
  TempDir tmp;
  fs::path bare = tmp.path() / "srv" / "repo.git";
  make_bare_repo(bare, true);
  REQUIRE(run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", (tmp.path() / "client").string()}).status == 0);
  SshServer sshd(tmp.path(), read_file(tmp.path() / "client.pub"));
  GitRemoteSpec spec;
  spec.url = sshd.url(bare);
  spec.credentials = SshKey{read_file(tmp.path() / "client"), "", "", ""};
  spec.known_hosts = sshd.known_hosts();
  GitDelivery delivery(tmp.path() / "cache");

  auto result = delivery.deliver(spec, commit_request({{"clusters/p+c/a.yaml", "over ssh"}}));
  REQUIRE(result.changed);
  fs::path work = clone(bare, "main", tmp.path() / "clone");
  CHECK(git(work, {"rev-parse", "HEAD"}) == result.commit_id + "\n");
  CHECK(show(work, "HEAD", "clusters/p+c/a.yaml") == "over ssh");

  SECTION("host key not in known_hosts") {
    GitRemoteSpec unknown = spec;
    unknown.known_hosts = "[127.0.0.1]:1 " + sshd.known_hosts().substr(sshd.known_hosts().find(' ') + 1);
    auto e = expect_error(delivery, unknown, commit_request({{"b", "b"}}));
    CHECK(e.kind() == emco::ErrorKind::unreachable);
    CHECK_THAT(e.message(), Catch::Contains("is not in known_hosts"));
  }
  SECTION("host key differs from known_hosts") {
    REQUIRE(run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", (tmp.path() / "otherhost").string()}).status == 0);
    std::string other = read_file(tmp.path() / "otherhost.pub");
    GitRemoteSpec wrong = spec;
    wrong.known_hosts = "[127.0.0.1]:" + std::to_string(sshd.port()) + " " + other.substr(0, other.rfind(' ')) + "\n";
    auto e = expect_error(delivery, wrong, commit_request({{"b", "b"}}));
    CHECK(e.kind() == emco::ErrorKind::unreachable);
    CHECK_THAT(e.message(), Catch::Contains("does not match known_hosts"));
  }
  SECTION("a key the server does not accept") {
    REQUIRE(run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", (tmp.path() / "stranger").string()}).status == 0);
    GitRemoteSpec stranger = spec;
    stranger.credentials = SshKey{read_file(tmp.path() / "stranger"), "", "", ""};
    GitDelivery other(tmp.path() / "other");
    auto e = expect_error(other, stranger, commit_request({{"b", "b"}}));
    CHECK(e.kind() == emco::ErrorKind::unreachable);
    CHECK_THAT(e.message(), Catch::Contains("authentication failed"));
    CHECK_THAT(e.message(), !Catch::Contains("PRIVATE KEY"));
  }
  SECTION("a passphrase-protected ECDSA key") {
    REQUIRE(run({"ssh-keygen", "-q", "-t", "ecdsa", "-N", "pass phrase", "-f", (tmp.path() / "ec").string()}).status == 0);
    write_file(tmp.path() / "authorized_keys",
               read_file(tmp.path() / "client.pub") + read_file(tmp.path() / "ec.pub"), 0600);
    GitRemoteSpec ec = spec;
    ec.credentials = SshKey{read_file(tmp.path() / "ec"), "pass phrase", "", ""};
    CHECK(delivery.deliver(ec, commit_request({{"ec", "ecdsa"}})).changed);
    CHECK(show(bare, "main", "ec") == "ecdsa");
  }
}

TEST_CASE("https: an untrusted certificate is refused by default", "[gitops][https]") {
  TempDir tmp;
  const fs::path dir = tmp.path();
  RunResult cert = run({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", (dir / "key.pem").string(),
                        "-out", (dir / "cert.pem").string(), "-days", "2", "-subj", "/CN=localhost", "-addext",
                        "subjectAltName=DNS:localhost"});
  if (cert.status != 0) FAIL("openssl cannot make a test certificate: " << cert.err);
  // Any TLS server will do: the certificate check happens before HTTP.
  int port = free_port();
  Process server({"/usr/bin/openssl", "s_server", "-quiet", "-www", "-accept", "127.0.0.1:" + std::to_string(port),
                  "-cert", (dir / "cert.pem").string(), "-key", (dir / "key.pem").string()},
                 dir / "s_server.log");
  REQUIRE(wait_for_port(port));
  GitRemoteSpec spec;
  spec.url = "https://localhost:" + std::to_string(port) + "/repo.git";
  spec.credentials = HttpsToken{"tok-abc-123", "emco"};
  GitDelivery delivery(dir / "cache");
  auto e = expect_error(delivery, spec, commit_request({{"a", "a"}}));
  CHECK(e.kind() == emco::ErrorKind::unreachable);
  CHECK(e.message() == "tls certificate of 'localhost:" + std::to_string(port) + "' is not trusted");

  // Opting out of verification gets past TLS (this server does not speak git).
  spec.tls_verify = TlsVerify::insecure_skip;
  auto past = expect_error(delivery, spec, commit_request({{"a", "a"}}));
  CHECK_THAT(past.message(), !Catch::Contains("tls certificate"));
  CHECK_THAT(past.message(), !Catch::Contains("tok-abc-123"));
}

namespace {

// Accepts and then never answers (or, with `trickle`, answers an HTTP status
// line one byte every 100 ms, for ever).
emco::test::RawServer::Behaviour silent_or_trickling(bool trickle) {
  return [trickle](int fd, const std::atomic<bool>& stop) {
    const std::string line = "HTTP/1.1 200 OK\r\nX-Slow: ";
    for (size_t sent = 0; !stop; ++sent) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (trickle) (void)::send(fd, &line[sent % line.size()], 1, MSG_NOSIGNAL);
    }
  };
}

}  // namespace

TEST_CASE("a git remote that never answers or trickles ends at the deadline, for every transport", "[gitops][hostile]") {
  TempDir tmp;
  // Silent on every transport; trickling an HTTP status line on http://
  // (the other protocols refuse those bytes at once).
  for (bool trickle : {false, true})
    for (const std::string scheme : {"git", "http", "https", "ssh"}) {
      if (trickle && scheme != "http") continue;
      CAPTURE(scheme, trickle);
      emco::test::RawServer server(silent_or_trickling(trickle));
      GitRemoteSpec spec;
      spec.url = scheme + "://" + (scheme == "ssh" ? "git@" : "") + "127.0.0.1:" + std::to_string(server.port()) +
                 "/repo.git";
      if (scheme == "ssh") spec.host_key_check = HostKeyCheck::insecure_accept_any;
      GitDelivery delivery(tmp.path() / ("cache-" + scheme + (trickle ? "-t" : "")));
      const auto start = std::chrono::steady_clock::now();
      NetworkDeadline deadline(start + std::chrono::seconds(2));
      auto e = expect_error(delivery, spec, commit_request({{"a", "a"}}));
      const auto took = std::chrono::steady_clock::now() - start;
      INFO(e.message());
      CHECK(e.kind() == emco::ErrorKind::unreachable);
      CHECK(took >= std::chrono::milliseconds(1900));
      CHECK(took < std::chrono::seconds(10));
      CHECK_THAT(e.message(), Catch::Contains("deadline"));
      CHECK(delivery.cached_head(spec).empty());
    }
}

namespace {

// A smart-HTTP ref advertisement that does not end: the service line, then
// ref lines (valid pkt-lines naming ever new branches) until `limit` bytes
// were sent or the client goes; `sent` counts them.
emco::test::RawServer::Behaviour endless_advertisement(size_t limit, std::atomic<size_t>& sent) {
  return [limit, &sent](int fd, const std::atomic<bool>& stop) {
    auto pkt = [](const std::string& payload) {
      char len[5];
      std::snprintf(len, sizeof len, "%04zx", payload.size() + 4);
      return len + payload;
    };
    const std::string oid(40, 'a');
    std::string out =
        "HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-advertisement\r\nCache-Control: no-cache\r\n"
        "Connection: close\r\n\r\n" +
        pkt("# service=git-upload-pack\n") + "0000" +
        pkt(oid + " refs/heads/main" + std::string(1, '\0') + "side-band-64k ofs-delta\n");
    for (size_t branch = 0; !stop && sent < limit; out.clear()) {
      while (out.size() < (1 << 16)) out += pkt(oid + " refs/heads/flood-" + std::to_string(branch++) + "\n");
      if (!emco::test::send_all(fd, out)) return;  // the client went
      sent += out.size();
    }
  };
}

}  // namespace

TEST_CASE("a git remote that sends a 1 GiB answer does not grow memory past a bound", "[gitops][hostile]") {
  TempDir tmp;
  // With the default bound (256 MiB, as a Kubernetes API answer), and with a smaller one: the remote's
  // answer is a ref advertisement that never ends, which libgit2 would keep
  // in memory at about twice its size.
  // The smaller bound first: the peak only grows. Under ASan every small
  // allocation carries redzones and freed ones wait in quarantine: the
  // smaller bound only, with more room.
#ifdef __SANITIZE_ADDRESS__
  const std::vector<long> bounds{64L};
  const long room = 16;  // measured: 677 MiB of growth for the 64 MiB bound
#else
  const std::vector<long> bounds{64L, k_default_max_answer_mib};
  const long room = 3;
#endif
  for (const long bound_mib : bounds) {
    CAPTURE(bound_mib);
    if (bound_mib != k_default_max_answer_mib) ::setenv("EMCO_GIT_MAX_ANSWER_MIB", std::to_string(bound_mib).c_str(), 1);
    std::atomic<size_t> sent{0};
    emco::test::RawServer flood(endless_advertisement(size_t{1} << 30, sent));
    GitRemoteSpec spec;
    spec.url = flood.url() + "/repo.git";
    GitDelivery delivery(tmp.path() / ("cache-" + std::to_string(bound_mib)));
    const long before = emco::test::peak_rss_mib();
    NetworkDeadline deadline(std::chrono::steady_clock::now() + std::chrono::seconds(120));
    auto e = expect_error(delivery, spec, commit_request({{"a", "a"}}));
    ::unsetenv("EMCO_GIT_MAX_ANSWER_MIB");
    const long after = emco::test::peak_rss_mib();
    INFO(e.message());
    INFO("peak RSS before " << before << " MiB, after " << after << " MiB; the remote sent " << (sent >> 20)
                            << " MiB");
    CHECK(e.kind() == emco::ErrorKind::unreachable);
    CHECK_THAT(e.message(), Catch::Contains("sent more than " + std::to_string(bound_mib) + " MiB in one answer"));
    // Reading stopped at the bound (plus what the sockets held), not at the
    // end of the GiB, and memory grew by less than `room` times the bound.
    CHECK(sent < (static_cast<size_t>(bound_mib) << 20) + (size_t{16} << 20));
    CHECK(after - before < room * bound_mib);
  }
  // A bound that is not a number of MiB is named, not ignored.
  ::setenv("EMCO_GIT_MAX_ANSWER_MIB", "lots", 1);
  std::atomic<size_t> sent{0};
  emco::test::RawServer flood(endless_advertisement(1 << 20, sent));
  GitRemoteSpec spec;
  spec.url = flood.url() + "/repo.git";
  GitDelivery delivery(tmp.path() / "cache-bad");
  auto e = expect_error(delivery, spec, commit_request({{"a", "a"}}));
  ::unsetenv("EMCO_GIT_MAX_ANSWER_MIB");
  CHECK_THAT(e.message(), Catch::Contains("EMCO_GIT_MAX_ANSWER_MIB='lots' is not a positive number of MiB"));
}
