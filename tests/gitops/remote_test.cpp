// Pure helpers of git_remote.hpp: URL parsing and redaction, validation,
// secret scrubbing, known_hosts lookup (checked against ssh-keygen's own
// hashed format).

#include <catch2/catch.hpp>

#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "plugins/targets/gitops/git_remote.hpp"
#include "support.hpp"

using namespace emco::gitops;

TEST_CASE("remote urls", "[gitops][remote]") {
  auto https = parse_remote_url("https://git@example.com/org/fleet.git");
  CHECK(https.scheme == "https");
  CHECK(https.user == "git");
  CHECK(https.host == "example.com");
  CHECK(https.port == 443);
  CHECK(https.path == "/org/fleet.git");
  auto ssh = parse_remote_url("ssh://root@127.0.0.1:2222/srv/repo.git");
  CHECK(ssh.port == 2222);
  CHECK(ssh.path == "/srv/repo.git");
  auto scp = parse_remote_url("git@github.com:org/fleet.git");
  CHECK(scp.scheme == "ssh");
  CHECK(scp.user == "git");
  CHECK(scp.host == "github.com");
  CHECK(scp.port == 22);
  CHECK(parse_remote_url("/srv/repo.git").scheme == "file");
  CHECK(parse_remote_url("file:///srv/repo.git").path == "/srv/repo.git");
  CHECK(parse_remote_url("git://[::1]:9418/r").host == "::1");
  CHECK(parse_remote_url("http://h/r").port == 80);
  CHECK_THROWS_AS(parse_remote_url(""), emco::Error);
  CHECK_THROWS_AS(parse_remote_url("ftp://h/r"), emco::Error);
  CHECK_THROWS_AS(parse_remote_url("http://h:99999/r"), emco::Error);
  CHECK_THROWS_AS(parse_remote_url("relative/path"), emco::Error);
  try {
    parse_remote_url("https://user:hunter2@example.com/r.git");
    FAIL("expected an error");
  } catch (const emco::Error& e) {
    CHECK(e.message() == "git remote url 'https://user:***@example.com/r.git' carries a password");
  }
  CHECK(redact_url("https://user:tok@example.com/r.git") == "https://user:***@example.com/r.git");
  CHECK(redact_url("https://user@example.com/r.git") == "https://user@example.com/r.git");
  CHECK(redact_url("git@github.com:org/r.git") == "git@github.com:org/r.git");
}

TEST_CASE("remote spec validation and scrubbing", "[gitops][remote]") {
  GitRemoteSpec spec;
  spec.url = "https://example.com/r.git";
  spec.credentials = HttpsToken{"tok-123", "x"};
  CHECK_NOTHROW(validate(spec));
  spec.branch = "bad..branch";
  CHECK_THROWS_AS(validate(spec), emco::Error);
  spec.branch = "provider+cluster";
  CHECK_NOTHROW(validate(spec));
  spec.url = "git://example.com/r.git";
  CHECK_THROWS_AS(validate(spec), emco::Error);  // a token over git:// would never be sent
  spec.url = "ssh://example.com/r.git";
  spec.credentials = SshKey{};
  CHECK_THROWS_AS(validate(spec), emco::Error);  // empty key
  spec.credentials = SshKey{"KEY", "phrase", "", ""};
  CHECK(secrets_of(spec) == std::vector<std::string>{"phrase", "KEY"});
  CHECK(cache_key("https://example.com/r.git").size() == 16);
  CHECK(cache_key("https://example.com/r.git") != cache_key("https://example.com/s.git"));
  CHECK(cache_key("abc") == "ba7816bf8f01cfea");  // the first 8 bytes of SHA-256("abc"), in hex
}

TEST_CASE("known_hosts lookup: plain, port, wildcard, hashed, revoked", "[gitops][remote]") {
  using namespace gitops_test;
  TempDir tmp;
  REQUIRE(run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", (tmp.path() / "k1").string()}).status == 0);
  REQUIRE(run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", (tmp.path() / "k2").string()}).status == 0);
  auto fields = [](const std::string& pub) {
    auto a = pub.find(' ');
    auto b = pub.find(' ', a + 1);
    return std::make_pair(pub.substr(0, a), pub.substr(a + 1, b - a - 1));
  };
  auto [type, k1] = fields(read_file(tmp.path() / "k1.pub"));
  auto k2 = fields(read_file(tmp.path() / "k2.pub")).second;
  std::string blob1 = *emco::base64_decode(k1), blob2 = *emco::base64_decode(k2);

  std::string text = "# comment\n\n[127.0.0.1]:2222 " + type + " " + k1 + "\n*.example.com,!bad.example.com " + type +
                     " " + k1 + "\n";
  CHECK(known_hosts_lookup(text, "127.0.0.1", 2222, blob1) == KnownHostMatch::matches);
  CHECK(known_hosts_lookup(text, "127.0.0.1", 22, blob1) == KnownHostMatch::unknown);
  CHECK(known_hosts_lookup(text, "127.0.0.1", 2222, blob2) == KnownHostMatch::mismatch);
  CHECK(known_hosts_lookup(text, "git.example.com", 22, blob1) == KnownHostMatch::matches);
  CHECK(known_hosts_lookup(text, "bad.example.com", 22, blob1) == KnownHostMatch::unknown);
  CHECK(known_hosts_lookup("@revoked * " + type + " " + k1 + "\n" + text, "127.0.0.1", 2222, blob1) ==
        KnownHostMatch::revoked);

  // ssh-keygen -H writes the hashed form OpenSSH uses with HashKnownHosts.
  write_file(tmp.path() / "kh", "[127.0.0.1]:2222 " + type + " " + k1 + "\ngit.example.org " + type + " " + k2 + "\n");
  REQUIRE(run({"ssh-keygen", "-q", "-H", "-f", (tmp.path() / "kh").string()}).status == 0);
  std::string hashed = read_file(tmp.path() / "kh");
  REQUIRE(hashed.find("|1|") != std::string::npos);
  REQUIRE(hashed.find("127.0.0.1") == std::string::npos);
  CHECK(known_hosts_lookup(hashed, "127.0.0.1", 2222, blob1) == KnownHostMatch::matches);
  CHECK(known_hosts_lookup(hashed, "git.example.org", 22, blob2) == KnownHostMatch::matches);
  CHECK(known_hosts_lookup(hashed, "git.example.org", 22, blob1) == KnownHostMatch::mismatch);
  CHECK(known_hosts_lookup(hashed, "other.example.org", 22, blob2) == KnownHostMatch::unknown);
}

// Found by tests/fuzz/git_remote_fuzz: host patterns matched by recursion took
// time exponential in the number of '*' (a 500-byte known_hosts held a lookup
// for minutes). Matching is now greedy with one backtrack point.
TEST_CASE("known_hosts lookup: wildcard patterns match in linear time", "[gitops][remote][fuzz]") {
  std::string blob = "\0\0\0\x0bssh-ed25519\0\0\0\x20" + std::string(32, 'k');
  std::string key = emco::base64_encode(blob);
  std::string stars;
  for (int i = 0; i < 40; ++i) stars += "*a";
  std::string host(60, 'a');
  // Every '*' may take any run of the host's a's, and none ends in 'b'.
  CHECK(known_hosts_lookup(stars + "b ssh-ed25519 " + key + "\n", host, 22, blob) == KnownHostMatch::unknown);
  CHECK(known_hosts_lookup(stars + " ssh-ed25519 " + key + "\n", host, 22, blob) == KnownHostMatch::matches);
  CHECK(known_hosts_lookup("*.EXAMPLE.c?m,!b*.example.com ssh-ed25519 " + key + "\n", "git.example.com", 22, blob) ==
        KnownHostMatch::matches);
  CHECK(known_hosts_lookup("*.EXAMPLE.c?m,!b*.example.com ssh-ed25519 " + key + "\n", "bad.example.com", 22, blob) ==
        KnownHostMatch::unknown);
  CHECK(known_hosts_lookup("g*t.example.com ssh-ed25519 " + key + "\n", "gt.example.com", 22, blob) ==
        KnownHostMatch::matches);
  CHECK(known_hosts_lookup("g?t.example.com ssh-ed25519 " + key + "\n", "gt.example.com", 22, blob) ==
        KnownHostMatch::unknown);
}

// What a git server says when it refuses a push reaches the user's terminal:
// its lines are made printable (no escape sequences, no forged lines) and
// bounded (tests/fuzz/git_remote_fuzz checks this on any input).
TEST_CASE("push answers: the server's words, printable, and races told from refusals", "[gitops][remote][fuzz]") {
  CHECK(remote_said("Enumerating objects: 5, done.\rCounting objects: 100% (5/5)\nremote: hook declined\n\n") ==
        "remote: hook declined");
  CHECK(remote_said("remote: \x1b]0;owned\x07 red \x1b[31mtext\r\nsecond") ==
        "remote: \xEF\xBF\xBD]0;owned\xEF\xBF\xBD red \xEF\xBF\xBD[31mtext; second");
  std::string many;
  for (int i = 0; i < 20; ++i) many += "line " + std::to_string(i) + "\n";
  CHECK(remote_said(many) == "line 10; line 11; line 12; line 13; line 14; line 15; line 16; line 17; line 18; line 19");
  std::string said = remote_said(std::string(100000, 'y'));
  CHECK(said.size() == 256 + 3);
  CHECK(is_race_status("refs/heads/main: failed to update ref"));
  CHECK(is_race_status("refs/heads/main: non-fast-forward"));
  CHECK_FALSE(is_race_status("refs/heads/main: pre-receive hook declined"));
}
