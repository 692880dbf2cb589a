#include <catch2/catch.hpp>

#include <cstdlib>

#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "helpers.hpp"
#include "pki.hpp"
#include "plugins/targets/kube/kubeconfig.hpp"
#include "plugins/targets/kube/pem.hpp"

using namespace emco;
using namespace emco::kube;
using namespace emco::kube::test;

namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.message() + (e.hint().empty() ? "" : " | hint: " + e.hint());
  }
  return "<no error>";
}

struct EnvGuard {
  std::string name;
  std::string old;
  bool had;
  EnvGuard(std::string n, const std::string& value) : name(std::move(n)) {
    const char* o = std::getenv(name.c_str());
    had = o != nullptr;
    if (had) old = o;
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~EnvGuard() {
    if (had) ::setenv(name.c_str(), old.c_str(), 1);
    else ::unsetenv(name.c_str());
  }
};

}  // namespace

TEST_CASE("kubeconfig: every field of clusters, users and contexts is read", "[kubeconfig]") {
  const char* text = R"(
apiVersion: v1
kind: Config
current-context: edge
clusters:
- name: c1
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority: ca.crt
    certificate-authority-data: QUJD
    insecure-skip-tls-verify: true
    tls-server-name: api.internal
    proxy-url: socks5://proxy:1080
users:
- name: u1
  user:
    client-certificate: certs/u1.crt
    client-certificate-data: Q0VSVA==
    client-key: /abs/u1.key
    client-key-data: S0VZ
    token: tok-123
    tokenFile: token.txt
    username: admin
    password: hunter2
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./bin/plugin
      args: [get-token, --cluster, c1]
      env:
      - {name: FOO, value: bar}
      installHint: install the plugin
      provideClusterInfo: true
contexts:
- name: edge
  context: {cluster: c1, user: u1, namespace: apps}
)";
  Kubeconfig k = parse_kubeconfig(text, "k.yaml", "/etc/kube");
  REQUIRE(k.current_context == "edge");
  const auto& c = k.clusters.at("c1");
  CHECK(c.server == "https://10.0.0.1:6443/");
  CHECK(c.certificate_authority == "/etc/kube/ca.crt");
  CHECK(c.certificate_authority_data == "QUJD");
  CHECK(c.insecure_skip_tls_verify);
  CHECK(c.tls_server_name == "api.internal");
  CHECK(c.proxy_url == "socks5://proxy:1080");
  const auto& u = k.users.at("u1");
  CHECK(u.client_certificate == "/etc/kube/certs/u1.crt");
  CHECK(u.client_certificate_data == "Q0VSVA==");
  CHECK(u.client_key == "/abs/u1.key");
  CHECK(u.client_key_data == "S0VZ");
  CHECK(u.token == "tok-123");
  CHECK(u.token_file == "/etc/kube/token.txt");
  CHECK(u.username == "admin");
  CHECK(u.password == "hunter2");
  REQUIRE(u.exec);
  CHECK(u.exec->api_version == "client.authentication.k8s.io/v1");
  CHECK(u.exec->command == "/etc/kube/bin/plugin");
  CHECK(u.exec->args == std::vector<std::string>{"get-token", "--cluster", "c1"});
  REQUIRE(u.exec->env.size() == 1);
  CHECK(u.exec->env[0] == std::pair<std::string, std::string>{"FOO", "bar"});
  CHECK(u.exec->install_hint == "install the plugin");
  CHECK(u.exec->provide_cluster_info);
  const auto& ctx = k.contexts.at("edge");
  CHECK(ctx.cluster == "c1");
  CHECK(ctx.user == "u1");
  CHECK(ctx.ns == "apps");
}

TEST_CASE("kubeconfig: exec command without a slash is left for PATH lookup", "[kubeconfig]") {
  Kubeconfig k = parse_kubeconfig(R"(users:
- name: u
  user: {exec: {command: aws, args: [eks, get-token]}}
)",
                                  "k", "/etc/kube");
  CHECK(k.users.at("u").exec->command == "aws");
}

TEST_CASE("kubeconfig: -data fields win over files and are decoded", "[kubeconfig]") {
  TempDir dir;
  KeyPair ca = make_ca("test-ca");
  KeyPair client = make_cert(ca, "admin");
  write_file(dir.file("ca.crt"), "not used");
  std::string text = "clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n"
                     "    certificate-authority: ca.crt\n    certificate-authority-data: " +
                     base64_encode(ca.cert_pem) +
                     "\nusers:\n- name: u\n  user:\n    client-certificate-data: " + base64_encode(client.cert_pem) +
                     "\n    client-key-data: " + base64_encode(client.key_pem) +
                     "\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n";
  ClusterAccess a = resolve_access(parse_kubeconfig(text, "k", dir.path()), "", "prov+edge");
  CHECK(a.label == "prov+edge");
  CHECK(a.server == "https://127.0.0.1:1");
  CHECK(a.ca_pem == ca.cert_pem);
  CHECK(a.client_cert_pem == client.cert_pem);
  CHECK(a.client_key_pem == client.key_pem);
  KubeconfigSummary s = validate_access(a);
  CHECK(s.auth == "client-certificate");
  CHECK(s.client_cert_not_after.has_value());
  CHECK(s.warnings.empty());
}

TEST_CASE("kubeconfig: files are read relative to the kubeconfig's directory", "[kubeconfig]") {
  TempDir dir;
  KeyPair ca = make_ca("test-ca");
  KeyPair client = make_cert(ca, "admin");
  std::filesystem::create_directories(dir.file("pki"));
  write_file(dir.file("pki/ca.crt"), ca.cert_pem);
  write_file(dir.file("pki/admin.crt"), client.cert_pem);
  write_file(dir.file("pki/admin.key"), client.key_pem);
  write_file(dir.file("token"), "  secret-token\n");
  write_file(dir.file("config"), R"(
clusters:
- name: c
  cluster: {server: "https://h:6443", certificate-authority: pki/ca.crt}
users:
- name: certs
  user: {client-certificate: pki/admin.crt, client-key: pki/admin.key}
- name: tf
  user: {tokenFile: token}
contexts:
- name: a
  context: {cluster: c, user: certs}
- name: b
  context: {cluster: c, user: tf, namespace: team}
current-context: a
)");
  Kubeconfig k = load_kubeconfig_file(dir.file("config"));
  ClusterAccess a = resolve_access(k);
  CHECK(a.context == "a");
  CHECK(a.label == "c");
  CHECK(a.ca_pem == ca.cert_pem);
  CHECK(a.client_cert_pem == client.cert_pem);
  ClusterAccess b = resolve_access(k, "b");
  CHECK(b.token == "secret-token");
  CHECK(b.ns == "team");
  CHECK(validate_access(b).auth == "token");
}

TEST_CASE("kubeconfig: KUBECONFIG merges files, first definition wins", "[kubeconfig]") {
  TempDir dir;
  write_file(dir.file("one"), R"(
current-context: first
clusters:
- {name: shared, cluster: {server: "https://one:1"}}
users:
- {name: u, user: {token: from-one}}
contexts:
- {name: first, context: {cluster: shared, user: u}}
)");
  write_file(dir.file("two"), R"(
current-context: second
clusters:
- {name: shared, cluster: {server: "https://two:2"}}
- {name: only-two, cluster: {server: "https://two:3", insecure-skip-tls-verify: true}}
users:
- {name: u, user: {token: from-two}}
- {name: basic, user: {username: admin, password: pw}}
contexts:
- {name: second, context: {cluster: only-two, user: basic}}
)");
  EnvGuard env("KUBECONFIG", dir.file("one") + "::" + dir.file("missing") + ":" + dir.file("two"));
  Kubeconfig k = load_default_kubeconfig();
  CHECK(k.current_context == "first");
  CHECK(k.clusters.at("shared").server == "https://one:1");
  CHECK(k.users.at("u").token == "from-one");
  CHECK(k.clusters.count("only-two") == 1);
  ClusterAccess a = resolve_access(k);
  CHECK(a.server == "https://one:1");
  CHECK(a.token == "from-one");
  ClusterAccess b = resolve_access(k, "second");
  CHECK(b.username == "admin");
  CHECK(b.password == "pw");
  CHECK(b.insecure_skip_tls_verify);
  KubeconfigSummary s = validate_access(b);
  CHECK(s.auth == "basic");
  REQUIRE(s.warnings.size() == 1);
  CHECK(s.warnings[0].find("insecure-skip-tls-verify") != std::string::npos);
}

TEST_CASE("kubeconfig: no file at all is a clear error", "[kubeconfig]") {
  TempDir dir;
  EnvGuard env("KUBECONFIG", dir.file("absent"));
  CHECK(error_of([] { load_default_kubeconfig(); }) ==
        "no kubeconfig found | hint: set KUBECONFIG or pass the kubeconfig file explicitly");
}

TEST_CASE("kubeconfig: malformed YAML names the place, not the content", "[kubeconfig][bad]") {
  std::string msg = error_of([] { parse_kubeconfig("clusters:\n- name: c\n  cluster: {server: [\n", "edge.yaml", ""); });
  CHECK(msg.find("cannot parse kubeconfig 'edge.yaml': line ") == 0);
  msg = error_of([] { parse_kubeconfig("clusters: 3\n", "edge.yaml", ""); });
  CHECK(msg == "invalid kubeconfig 'edge.yaml': 'clusters' must be a list");
  msg = error_of([] { parse_kubeconfig("- a\n- b\n", "edge.yaml", ""); });
  CHECK(msg == "invalid kubeconfig 'edge.yaml': not a kubeconfig (expected a mapping at the top)");
  msg = error_of([] { parse_kubeconfig("users:\n- name: u\n  user: {token: [x]}\n", "k", ""); });
  CHECK(msg == "invalid kubeconfig 'k': user 'u': field 'token' must be a string");
  CHECK(msg.find("x]") == std::string::npos);
}

TEST_CASE("kubeconfig: unknown context suggests the near one", "[kubeconfig][bad]") {
  Kubeconfig k = parse_kubeconfig(R"(
clusters: [{name: c, cluster: {server: "https://h"}}]
contexts: [{name: production, context: {cluster: c}}]
)",
                                  "k", "");
  CHECK(error_of([&] { resolve_access(k, "prodution", "p+edge"); }) ==
        "cluster 'p+edge': context 'prodution' not found in kubeconfig 'k' | hint: did you mean 'production'?");
  CHECK(error_of([&] { resolve_access(k); }) ==
        "kubeconfig 'k' sets no current-context | hint: name a context, or set current-context in the kubeconfig");
}

TEST_CASE("kubeconfig: contexts naming undefined clusters or users, no server", "[kubeconfig][bad]") {
  Kubeconfig k = parse_kubeconfig(R"(
clusters: [{name: c, cluster: {server: "https://h"}}, {name: noserver, cluster: {}}, {name: ftp, cluster: {server: "ftp://h"}}]
contexts:
- {name: a, context: {cluster: missing}}
- {name: b, context: {cluster: c, user: ghost}}
- {name: c, context: {cluster: noserver}}
- {name: d, context: {cluster: ftp}}
)",
                                  "k", "");
  CHECK(error_of([&] { resolve_access(k, "a", "e1"); }) ==
        "cluster 'e1': context 'a' names cluster 'missing', which the kubeconfig does not define");
  CHECK(error_of([&] { resolve_access(k, "b", "e1"); }) ==
        "cluster 'e1': context 'b' names user 'ghost', which the kubeconfig does not define");
  CHECK(error_of([&] { resolve_access(k, "c", "e1"); }) == "cluster 'e1': kubeconfig cluster 'noserver' has no server");
  CHECK(error_of([&] { resolve_access(k, "d", "e1"); }) == "cluster 'e1': server 'ftp://h' is not an http(s) URL");
}

TEST_CASE("kubeconfig: missing certificate files name the file and the cluster", "[kubeconfig][bad]") {
  TempDir dir;
  write_file(dir.file("config"), R"(
clusters: [{name: c, cluster: {server: "https://h", certificate-authority: nope/ca.crt}}]
users: [{name: u, user: {client-certificate: u.crt, client-key: u.key}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
)");
  std::string msg = error_of([&] { validate_kubeconfig(dir.file("config"), "", "prov+edge1"); });
  CHECK(msg == "cluster 'prov+edge1': " + dir.file("config") + ":2: cannot read certificate-authority '" +
                   dir.file("nope/ca.crt") + "': No such file or directory");
}

TEST_CASE("kubeconfig: registration inlines the files a kubeconfig names, and keeps a self-contained one as written",
          "[kubeconfig]") {
  TempDir dir;
  KeyPair ca = make_ca("test-ca");
  KeyPair client = make_cert(ca, "admin");
  std::filesystem::create_directories(dir.file("pki"));
  write_file(dir.file("pki/ca.crt"), ca.cert_pem);
  write_file(dir.file("pki/u.crt"), client.cert_pem);
  write_file(dir.file("pki/u.key"), client.key_pem);
  write_file(dir.file("pki/token"), "s3cr3t-token\n");
  const std::string text = R"(apiVersion: v1
kind: Config
current-context: edge
clusters:
- name: c
  cluster: {server: "https://h:6443", certificate-authority: pki/ca.crt}
users:
- name: u
  user: {client-certificate: pki/u.crt, client-key: pki/u.key}
- name: t
  user: {tokenFile: pki/token}
contexts:
- {name: edge, context: {cluster: c, user: u, namespace: apps}}
- {name: tok, context: {cluster: c, user: t}}
)";
  const std::string stored = prepare_kubeconfig(text, dir.file("edge.kubeconfig"), "p+edge");
  for (const char* path : {"pki/", "ca.crt", "u.key", "tokenFile"}) CHECK(stored.find(path) == std::string::npos);
  ClusterAccess a = resolve_access(parse_kubeconfig(stored, "stored", "/elsewhere"));
  CHECK(a.ca_pem == ca.cert_pem);
  CHECK(a.client_cert_pem == client.cert_pem);
  CHECK(a.client_key_pem == client.key_pem);
  CHECK(a.ns == "apps");
  CHECK(a.context == "edge");
  CHECK(stored.find("tok") == std::string::npos);  // minified: only the current context
  // A tokenFile is read once, at registration, and stored as the token.
  std::string with_token = text;
  with_token.replace(with_token.find("current-context: edge"), 21, "current-context: tok");
  ClusterAccess t = resolve_access(parse_kubeconfig(prepare_kubeconfig(with_token, dir.file("k"), "p+t"), "s", ""));
  CHECK(t.token == "s3cr3t-token");
  CHECK(t.ca_pem == ca.cert_pem);
  // The text kubectl prints for it: keys sorted, -data fields base64.
  CHECK(stored.rfind("apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: " +
                         base64_encode(ca.cert_pem) + "\n    server: https://h:6443\n  name: c\ncontexts:\n",
                     0) == 0);

  // Self-contained already: stored exactly as written.
  const std::string inline_text = "clusters: [{name: c, cluster: {server: 'https://h', certificate-authority-data: " +
                                  base64_encode(ca.cert_pem) + "}}]\nusers: [{name: u, user: {token: abc}}]\n" +
                                  "contexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n";
  CHECK(prepare_kubeconfig(inline_text, dir.file("k"), "p+c") == inline_text);

  // A file that is gone: refused with the kubeconfig's FILE:LINE and the path, never the content.
  std::filesystem::remove(dir.file("pki/u.key"));
  CHECK(error_of([&] { prepare_kubeconfig(text, dir.file("edge.kubeconfig"), "p+edge"); }) ==
        "cluster 'p+edge': " + dir.file("edge.kubeconfig") + ":9: cannot read client-key '" + dir.file("pki/u.key") +
            "': No such file or directory");
  CHECK(error_of([&] { prepare_kubeconfig("kind: Config\n", "", "p+e"); }) ==
        "cluster 'p+e': kubeconfig '<inline>' defines no contexts");
}

TEST_CASE("kubeconfig: registration refuses undecodable or mismatched material", "[kubeconfig][bad]") {
  KeyPair ca = make_ca("ca");
  KeyPair a = make_cert(ca, "a");
  KeyPair b = make_cert(ca, "b");
  KeyPair expired = make_cert(ca, "old", {}, {}, -7200, -3600);
  auto config = [&](const std::string& ca_data, const std::string& cert, const std::string& key) {
    return "clusters: [{name: c, cluster: {server: 'https://h', certificate-authority-data: '" + ca_data +
           "'}}]\nusers: [{name: u, user: {client-certificate-data: '" + cert + "', client-key-data: '" + key +
           "'}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n";
  };
  std::string good_ca = base64_encode(ca.cert_pem);
  CHECK_NOTHROW(validate_kubeconfig(config(good_ca, base64_encode(a.cert_pem), base64_encode(a.key_pem))));
  CHECK(error_of([&] { validate_kubeconfig(config("!!!", base64_encode(a.cert_pem), base64_encode(a.key_pem)), "", "e"); }) ==
        "cluster 'e': certificate-authority-data is not valid base64");
  CHECK(error_of([&] {
          validate_kubeconfig(config(base64_encode("garbage"), base64_encode(a.cert_pem), base64_encode(a.key_pem)), "", "e");
        }) == "cluster 'e': certificate authority is not a PEM certificate");
  std::string msg = error_of([&] {
    validate_kubeconfig(config(good_ca, base64_encode(a.cert_pem), base64_encode("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")), "", "e");
  });
  CHECK(msg.find("cluster 'e': client key is not a PEM private key") == 0);
  CHECK(error_of([&] {
          validate_kubeconfig(config(good_ca, base64_encode(a.cert_pem), base64_encode(b.key_pem)), "", "e");
        }) == "cluster 'e': client certificate does not match its key");
  msg = error_of([&] {
    validate_kubeconfig(config(good_ca, base64_encode(expired.cert_pem), base64_encode(expired.key_pem)), "", "e");
  });
  CHECK(msg.find("cluster 'e': client certificate expired on ") == 0);
  // Key material never appears in messages.
  CHECK(msg.find(base64_encode(expired.key_pem).substr(0, 20)) == std::string::npos);
}

TEST_CASE("kubeconfig: certificate without key, unsupported auth-provider, empty exec", "[kubeconfig][bad]") {
  CHECK(error_of([] {
          validate_kubeconfig("clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
                              "users: [{name: u, user: {client-certificate-data: QUJD}}]\n"
                              "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
                              "x");
        }) == "cluster 'c': client-certificate given without client-key");
  CHECK(error_of([] {
          validate_kubeconfig("clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
                              "users: [{name: u, user: {auth-provider: {name: gcp}}}]\n"
                              "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
                              "x");
        }) == "cluster 'c': auth-provider 'gcp' is not supported | hint: use an exec credential plugin instead "
              "(kubectl deprecated auth-provider)");
  CHECK(error_of([] {
          validate_kubeconfig("clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
                              "users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1}}}]\n"
                              "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
                              "x");
        }) == "cluster 'c': exec credential plugin names no command");
  CHECK(error_of([] { validate_kubeconfig("kind: Config\n"); }) == "kubeconfig '<inline>' defines no contexts");
  KubeconfigSummary s = validate_kubeconfig(
      "clusters: [{name: c, cluster: {server: 'https://h'}}]\n"
      "users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1beta1, command: get-token}}}]\n"
      "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
      "x");
  CHECK(s.auth == "exec");
  CHECK(s.server == "https://h");
}

TEST_CASE("pem: base64 round trip and rfc3339", "[pem]") {
  // kubeconfig data fields decode leniently: white space anywhere, padding optional
  auto decode = [](std::string_view s) { return base64_decode(s, {.lenient = true}); };
  for (const std::string& s : std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) CHECK(decode(base64_encode(s)) == s);
  CHECK(decode("QU JD\nRA==") == "ABCD");
  CHECK(decode("QUJDRA") == "ABCD");
  CHECK_FALSE(decode("QU*D"));
  CHECK_FALSE(decode("QUJD=A"));
  CHECK_FALSE(decode("QUJDR"));  // a lone trailing character
  auto t = parse_rfc3339("2026-11-22T03:04:05Z");
  REQUIRE(t);
  CHECK(format_rfc3339(*t) == "2026-11-22T03:04:05Z");
  CHECK(format_rfc3339(*parse_rfc3339("2026-11-22T05:04:05.123+02:00")) == "2026-11-22T03:04:05Z");
  CHECK_FALSE(parse_rfc3339("yesterday"));
  // Beyond what system_clock holds (found by exec_credential_fuzz: a signed
  // overflow): its latest and earliest points.
  CHECK(parse_rfc3339("4198-01-01T00:00:00Z") == std::chrono::system_clock::time_point::max());
  CHECK(parse_rfc3339("9999-12-31T23:59:59Z") == std::chrono::system_clock::time_point::max());
  CHECK(parse_rfc3339("0001-01-01T00:00:00Z") == std::chrono::system_clock::time_point::min());
  CHECK(format_rfc3339(*parse_rfc3339("2261-12-31T00:00:00Z")) == "2261-12-31T00:00:00Z");
}

TEST_CASE("kubeconfig: a certificate valid for thousands of years (RFC 5280's 'no expiry' is 9999) is read", "[kubeconfig]") {
  // Its notAfter is past system_clock's range: the latest point it has.
  const long until_9999 = 7900L * 365 * 86400;  // to about 9920
  KeyPair ca = make_ca("forever", -3600, until_9999);
  CertInfo info = inspect_certificates(ca.cert_pem, "ca");
  CHECK(info.not_after == std::chrono::system_clock::time_point::max());
  CHECK(info.not_before < std::chrono::system_clock::now());
}

TEST_CASE("kubeconfig: flatten inlines files and keeps one context", "[kubeconfig]") {
  TempDir dir;
  KeyPair ca = make_ca("test-ca");
  KeyPair client = make_cert(ca, "admin");
  write_file(dir.file("ca.crt"), ca.cert_pem);
  write_file(dir.file("u.crt"), client.cert_pem);
  write_file(dir.file("u.key"), client.key_pem);
  write_file(dir.file("config"), R"(
current-context: other
clusters:
- {name: c, cluster: {server: "https://h:6443", certificate-authority: ca.crt, tls-server-name: api, proxy-url: "http://p:3128"}}
- {name: unrelated, cluster: {server: "https://x"}}
users:
- {name: u, user: {client-certificate: u.crt, client-key: u.key}}
- name: e
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: ./get-token, args: [a, "b c"], env: [{name: K, value: "v: 1"}]}
contexts:
- {name: edge, context: {cluster: c, user: u, namespace: apps}}
- {name: via-exec, context: {cluster: c, user: e}}
- {name: other, context: {cluster: unrelated}}
)");
  Kubeconfig k = load_kubeconfig_file(dir.file("config"));
  std::string flat = flatten_kubeconfig(k, "edge");
  CHECK(flat.find("unrelated") == std::string::npos);
  CHECK(flat.find("ca.crt") == std::string::npos);
  Kubeconfig back = parse_kubeconfig(flat, "flat", "/elsewhere");
  CHECK(back.current_context == "edge");
  CHECK(back.contexts.size() == 1);
  ClusterAccess a = resolve_access(back);
  ClusterAccess orig = resolve_access(k, "edge");
  CHECK(a.server == orig.server);
  CHECK(a.ca_pem == orig.ca_pem);
  CHECK(a.client_cert_pem == orig.client_cert_pem);
  CHECK(a.client_key_pem == orig.client_key_pem);
  CHECK(a.tls_server_name == "api");
  CHECK(a.proxy_url == "http://p:3128");
  CHECK(a.ns == "apps");
  ClusterAccess e = resolve_access(parse_kubeconfig(flatten_kubeconfig(k, "via-exec"), "flat", "/elsewhere"));
  REQUIRE(e.exec);
  CHECK(e.exec->command == dir.file("get-token"));
  CHECK(e.exec->args == std::vector<std::string>{"a", "b c"});
  CHECK(e.exec->env == std::vector<std::pair<std::string, std::string>>{{"K", "v: 1"}});
}
