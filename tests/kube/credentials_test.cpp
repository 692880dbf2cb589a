#include <catch2/catch.hpp>

#include <chrono>

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "helpers.hpp"
#include "pki.hpp"
#include "plugins/targets/kube/credentials.hpp"
#include "plugins/targets/kube/pem.hpp"

using namespace emco;
using namespace emco::kube;
using namespace emco::kube::test;
using namespace std::chrono_literals;

namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.message();
  }
  return "<no error>";
}

ExecConfig plugin(const TempDir& dir, const std::string& script, const std::string& api = "client.authentication.k8s.io/v1") {
  write_file(dir.file("plugin.sh"), "#!/bin/sh\n" + script, true);
  ExecConfig e;
  e.api_version = api;
  e.command = dir.file("plugin.sh");
  return e;
}

}  // namespace

TEST_CASE("exec plugin: token with args, env and KUBERNETES_EXEC_INFO", "[exec]") {
  TempDir dir;
  ExecConfig e = plugin(dir, R"(echo "$1 $FOO" > ")" + dir.file("seen") + R"("
echo "$KUBERNETES_EXEC_INFO" > ")" + dir.file("info") + R"("
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-1","expirationTimestamp":"2099-01-01T00:00:00Z"}}'
)");
  e.args = {"hello"};
  e.env = {{"FOO", "bar"}};
  e.provide_cluster_info = true;
  Credentials c = run_exec_plugin(e, "edge", "https://h:1", "CA-PEM", 5s);
  CHECK(c.token == "tok-1");
  REQUIRE(c.expiry);
  CHECK(format_rfc3339(*c.expiry) == "2099-01-01T00:00:00Z");
  std::ifstream seen(dir.file("seen"));
  std::string line;
  std::getline(seen, line);
  CHECK(line == "hello bar");
  std::ifstream info(dir.file("info"));
  std::getline(info, line);
  CHECK(line.find("\"kind\":\"ExecCredential\"") != std::string::npos);
  CHECK(line.find("\"server\":\"https://h:1\"") != std::string::npos);
  CHECK(line.find("\"interactive\":false") != std::string::npos);
}

TEST_CASE("exec plugin: v1beta1 client certificate", "[exec]") {
  TempDir dir;
  KeyPair ca = make_ca("ca");
  KeyPair client = make_cert(ca, "admin");
  // Build the JSON with escaped newlines.
  auto esc = [](std::string s) {
    std::string out;
    for (char ch : s) out += ch == '\n' ? std::string("\\n") : std::string(1, ch);
    return out;
  };
  write_file(dir.file("cred.json"), R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"clientCertificateData":")" +
                                        esc(client.cert_pem) + R"(","clientKeyData":")" + esc(client.key_pem) + "\"}}");
  ExecConfig e = plugin(dir, "cat '" + dir.file("cred.json") + "'\n", "client.authentication.k8s.io/v1beta1");
  Credentials c = run_exec_plugin(e, "edge", "https://h", "", 5s);
  CHECK(c.token.empty());
  CHECK(c.client_cert_pem == client.cert_pem);
  CHECK(c.client_key_pem == client.key_pem);
  CHECK_FALSE(c.expiry);
}

TEST_CASE("exec plugin: failures name the cluster and the problem", "[exec][bad]") {
  TempDir dir;
  CHECK(error_of([&] {
          run_exec_plugin(plugin(dir, "echo 'token expired, run login' >&2\nexit 3\n"), "p+edge", "https://h", "", 5s);
        }) == "cluster 'p+edge': exec credential plugin '" + dir.file("plugin.sh") +
                  "' failed with exit code 3: token expired, run login");
  CHECK(error_of([&] { run_exec_plugin(plugin(dir, "echo not-json\n"), "e", "https://h", "", 5s); }) ==
        "cluster 'e': exec credential plugin '" + dir.file("plugin.sh") +
            "' printed something that is not an ExecCredential JSON object");
  CHECK(error_of([&] {
          run_exec_plugin(plugin(dir, "echo '{\"kind\":\"ExecCredential\",\"status\":{}}'\n"), "e", "https://h", "", 5s);
        }) == "cluster 'e': exec credential plugin '" + dir.file("plugin.sh") +
                  "' returned neither a token nor a client certificate and key");
  ExecConfig missing;
  missing.command = dir.file("no-such-plugin");
  missing.install_hint = "install it with 'apt install foo'";
  try {
    run_exec_plugin(missing, "e", "https://h", "", 5s);
    FAIL("no error");
  } catch (const Error& err) {
    CHECK(err.kind() == ErrorKind::unreachable);
    CHECK(err.message() == "cluster 'e': exec credential plugin '" + missing.command +
                               "' cannot be started: No such file or directory");
    CHECK(err.hint() == "install it with 'apt install foo'");
  }
}

TEST_CASE("exec credential output of the wrong shape is the plugin's error, never an internal one", "[exec][bad]") {
  const std::string who = "cluster 'e': exec credential plugin 'p'";
  auto answer = [&](const std::string& out) { return error_of([&] { parse_exec_credential(out, who, "hint"); }); };
  // Every field of another JSON type than the API's (nlohmann's value() would
  // throw a type_error for these).
  CHECK(answer(R"({"kind":5,"status":{"token":"t"}})") == who + " printed an object whose kind is not 'ExecCredential'");
  CHECK(answer(R"({"kind":"ExecCredential","status":"t"})") == who + " printed an ExecCredential without a status");
  CHECK(answer(R"({"kind":"ExecCredential","status":[1]})") == who + " printed an ExecCredential without a status");
  CHECK(answer(R"({"kind":"ExecCredential","status":{"token":7}})") ==
        who + " returned neither a token nor a client certificate and key");
  CHECK(answer(R"([{"kind":"ExecCredential"}])") == who + " printed something that is not an ExecCredential JSON object");
  CHECK(answer(R"({"kind":"ExecCredential","status":{"token":"t","expirationTimestamp":"soon"}})") ==
        who + " returned an expirationTimestamp that is not RFC 3339");
  // A token with an expirationTimestamp of the wrong type: no expiry known.
  CHECK_FALSE(parse_exec_credential(R"({"kind":"ExecCredential","status":{"token":"t","expirationTimestamp":1}})", who, "")
                  .expiry);

  // Certificate material that is not PEM, or a certificate of another key.
  KeyPair ca = make_ca("ca");
  KeyPair one = make_cert(ca, "one"), two = make_cert(ca, "two");
  auto with_pair = [](const std::string& cert, const std::string& key) {
    return nlohmann::json{{"kind", "ExecCredential"},
                          {"status", {{"clientCertificateData", cert}, {"clientKeyData", key}}}}
        .dump();
  };
  CHECK(answer(with_pair("not a certificate", one.key_pem)) ==
        who + " returned a client certificate emco cannot use: its clientCertificateData is not a PEM certificate");
  CHECK(answer(with_pair(one.cert_pem, "not a key")).rfind(
            who + " returned a client certificate emco cannot use: its clientKeyData", 0) == 0);
  CHECK(answer(with_pair(one.cert_pem, two.key_pem)) ==
        who + " returned a client certificate emco cannot use: its client certificate does not match its key");
  Credentials good = parse_exec_credential(with_pair(one.cert_pem, one.key_pem), who, "");
  CHECK(good.client_cert_pem == one.cert_pem);
  // The output is never quoted: it holds the key.
  CHECK(answer(with_pair(one.cert_pem, two.key_pem)).find("PRIVATE KEY") == std::string::npos);
}

TEST_CASE("exec plugin: a plugin that hangs is stopped at the time limit", "[exec][bad]") {
  TempDir dir;
  // The child `sleep` keeps the pipe open: the whole process group must die.
  ExecConfig e = plugin(dir, "sleep 30 &\nsleep 30\n");
  auto start = std::chrono::steady_clock::now();
  std::string msg = error_of([&] { run_exec_plugin(e, "edge", "https://h", "", 300ms); });
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(msg == "cluster 'edge': exec credential plugin '" + dir.file("plugin.sh") +
                   "' did not finish within 0.3 s and was stopped");
  CHECK(took < 3s);
}

TEST_CASE("credential source: exec results are cached until they expire", "[exec]") {
  TempDir dir;
  // Each run appends a line to `count`; the token expires in the past+5s
  // window (< 10 s margin), so every get() must run the plugin again.
  std::string counter = dir.file("count");
  auto make = [&](const std::string& expiry) {
    ClusterAccess a;
    a.label = "edge";
    a.server = "https://h";
    a.exec = plugin(dir, "echo x >> '" + counter + "'\necho '{\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\"" +
                             (expiry.empty() ? "" : ",\"expirationTimestamp\":\"" + expiry + "\"") + "}}'\n");
    return a;
  };
  auto runs = [&] {
    std::ifstream in(counter);
    int n = 0;
    std::string l;
    while (std::getline(in, l)) ++n;
    return n;
  };
  {
    CredentialSource src(make("2099-01-01T00:00:00Z"));
    CHECK(src.get().token == "t");
    CHECK(src.get().token == "t");
    CHECK(runs() == 1);
    CHECK(src.invalidate());
    src.get();
    CHECK(runs() == 2);
  }
  {
    std::string soon = format_rfc3339(std::chrono::system_clock::now() + 5s);
    CredentialSource src(make(soon));
    src.get();
    src.get();
    CHECK(runs() == 4);
  }
  {
    CredentialSource src(make(""));  // no expiry: valid for the process lifetime
    src.get();
    src.get();
    CHECK(runs() == 5);
  }
  ClusterAccess plain;
  plain.token = "static";
  CredentialSource src(plain);
  CHECK(src.get().token == "static");
  CHECK_FALSE(src.invalidate());
}
