// The libcurl transport and KubeClient error mapping against a real local
// server (plain HTTP and TLS).

#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <memory>
#include <mutex>
#include <vector>

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "pki.hpp"
#include "plugins/targets/kube/http.hpp"
#include "plugins/targets/kube/kube_client.hpp"
#include "test_server.hpp"
#include "kube_errors.hpp"

using namespace emco;
using namespace emco::kube;
using namespace emco::kube::test;
using namespace std::chrono_literals;

namespace {

TestResponse version_ok(const TestRequest&) { return {200, R"({"major":"1","minor":"32","gitVersion":"v1.32.0"})", {}}; }

}  // namespace

TEST_CASE("transport: keep-alive reuses one connection", "[transport]") {
  TestServer server(version_ok);
  auto client = make_curl_client({});
  for (int i = 0; i < 5; ++i) {
    HttpRequest req;
    req.url = server.url() + "/version";
    HttpResponse r = client->send(req);
    CHECK(r.status == 200);
    CHECK(r.header("content-type") == "application/json");
  }
  CHECK(server.connections() == 1);
  CHECK(client->stats().requests == 5);
  CHECK(client->stats().connections == 1);
}

TEST_CASE("transport: methods, bodies and headers reach the server", "[transport]") {
  TestRequest seen;
  TestServer server([&](const TestRequest& r) {
    seen = r;
    return TestResponse{201, "{}", {{"X-Test", "yes"}}};
  });
  auto client = make_curl_client({});
  HttpRequest req;
  req.method = "PATCH";
  req.url = server.url() + "/api/v1/namespaces/x?fieldManager=emco";
  req.body = "{\"a\":1}\n";
  req.headers = {{"Content-Type", "application/apply-patch+yaml"}};
  HttpResponse r = client->send(req);
  CHECK(r.status == 201);
  CHECK(r.header("x-test") == "yes");
  CHECK(seen.method == "PATCH");
  CHECK(seen.target == "/api/v1/namespaces/x?fieldManager=emco");
  CHECK(seen.body == "{\"a\":1}\n");
  CHECK(seen.headers["content-type"] == "application/apply-patch+yaml");
  CHECK(seen.headers.count("expect") == 0);
}

TEST_CASE("transport: TLS with the kubeconfig's CA, client certificate from memory", "[transport][tls]") {
  KeyPair ca = make_ca("sim-ca");
  KeyPair server_cert = make_cert(ca, "apiserver", {"localhost", "api.internal"}, {"127.0.0.1"});
  KeyPair client_cert = make_cert(ca, "admin");
  TestRequest seen;
  TestServer server(
      [&](const TestRequest& r) {
        seen = r;
        return version_ok(r);
      },
      server_cert, ca.cert_pem);
  TransportOptions opts;
  opts.tls.ca_pem = ca.cert_pem;
  opts.tls.client_cert_pem = client_cert.cert_pem;
  opts.tls.client_key_pem = client_cert.key_pem;
  auto client = make_curl_client(opts);
  HttpRequest req;
  req.url = server.url() + "/version";
  HttpResponse r = client->send(req);
  INFO(r.failure_detail);
  CHECK(r.status == 200);
  CHECK(seen.client_cn == "admin");

  SECTION("tls-server-name verifies another name than the URL's host") {
    TestServer named_server(version_ok, make_cert(ca, "apiserver", {"api.internal"}));  // no IP SAN
    HttpRequest by_ip;
    by_ip.url = named_server.url() + "/version";
    HttpResponse plain = make_curl_client({.tls = {.ca_pem = ca.cert_pem}})->send(by_ip);
    CHECK(plain.failure == TransportFailure::tls_verify);
    TransportOptions named;
    named.tls.ca_pem = ca.cert_pem;
    named.tls.server_name = "other.internal";
    CHECK(make_curl_client(named)->send(by_ip).failure == TransportFailure::tls_verify);
    named.tls.server_name = "api.internal";
    HttpResponse ok = make_curl_client(named)->send(by_ip);
    INFO(ok.failure_detail);
    CHECK(ok.status == 200);
  }
  SECTION("a client certificate followed by its chain presents the leaf") {
    opts.tls.client_cert_pem = client_cert.cert_pem + ca.cert_pem;
    HttpResponse chained = make_curl_client(opts)->send(req);
    INFO(chained.failure_detail);
    CHECK(chained.status == 200);
    CHECK(seen.client_cn == "admin");
  }
  SECTION("insecure-skip-tls-verify accepts an unknown CA") {
    TransportOptions insecure;
    insecure.tls.insecure_skip_verify = true;
    CHECK(make_curl_client(insecure)->send(req).status == 200);
  }
}

TEST_CASE("transport: TLS material is parsed once per client and checked before connecting", "[transport][tls][bad]") {
  KeyPair ca = make_ca("sim-ca");
  KeyPair server_cert = make_cert(ca, "apiserver", {"localhost"}, {"127.0.0.1"});
  KeyPair client_cert = make_cert(ca, "admin");
  KeyPair other = make_cert(ca, "someone-else");
  TestServer server(version_ok, server_cert, ca.cert_pem);
  HttpRequest req;
  req.url = server.url() + "/version";

  SECTION("many connections of one client all verify with the parsed CA and present the certificate") {
    TransportOptions opts;
    opts.tls.ca_pem = ca.cert_pem;
    opts.tls.client_cert_pem = client_cert.cert_pem;
    opts.tls.client_key_pem = client_cert.key_pem;
    auto client = make_curl_client(opts);
    std::vector<std::thread> workers;
    std::vector<HttpResponse> answers(4);
    for (size_t i = 0; i < answers.size(); ++i) workers.emplace_back([&, i] { answers[i] = client->send(req); });
    for (auto& w : workers) w.join();
    for (const auto& a : answers) {
      INFO(a.failure_detail);
      CHECK(a.status == 200);
    }
    CHECK(client->stats().connections >= 1);
  }
  SECTION("CA data without a certificate") {
    HttpResponse r = make_curl_client({.tls = {.ca_pem = "not a certificate\n"}})->send(req);
    CHECK(r.failure == TransportFailure::tls_verify);
    CHECK(r.failure_detail == "the certificate-authority data holds no PEM certificate");
    CHECK(server.connections() == 0);
  }
  SECTION("client certificate or key data that does not parse, or do not belong together") {
    REQUIRE(encrypted_key(client_cert.key_pem, "secret").find("BEGIN ENCRYPTED PRIVATE KEY") != std::string::npos);
    struct Case {
      std::string cert, key, detail;
    };
    for (const Case& c : {Case{"garbage", client_cert.key_pem, "the client-certificate data holds no PEM certificate"},
                          Case{client_cert.cert_pem, "garbage", "the client-key data holds no PEM private key"},
                          // never a password prompt on the terminal: an encrypted key does not load
                          Case{client_cert.cert_pem, encrypted_key(client_cert.key_pem, "secret"),
                               "the client-key data holds no PEM private key"},
                          Case{client_cert.cert_pem, other.key_pem, "the client key does not match the client certificate"}}) {
      TransportOptions opts;
      opts.tls.ca_pem = ca.cert_pem;
      opts.tls.client_cert_pem = c.cert;
      opts.tls.client_key_pem = c.key;
      HttpResponse r = make_curl_client(opts)->send(req);
      CHECK(r.failure == TransportFailure::tls);
      CHECK(r.failure_detail == c.detail);
    }
    CHECK(server.connections() == 0);
  }
}

TEST_CASE("transport: clients of the same CA share its parsed store, and each CA verifies only its own servers",
          "[transport][tls]") {
  KeyPair ca_a = make_ca("fleet-a");
  KeyPair ca_b = make_ca("fleet-b");
  TestServer server_a(version_ok, make_cert(ca_a, "apiserver", {"localhost"}, {"127.0.0.1"}));
  TestServer server_b(version_ok, make_cert(ca_b, "apiserver", {"localhost"}, {"127.0.0.1"}));
  HttpRequest to_a, to_b;
  to_a.url = server_a.url() + "/version";
  to_b.url = server_b.url() + "/version";
  auto client_of = [](const KeyPair& ca) { return make_curl_client({.tls = {.ca_pem = ca.cert_pem}}); };

  // Many clients of one CA at once (a fan-out), with clients of the other
  // CA alive beside them: every one verifies its own server only.
  std::vector<std::unique_ptr<HttpClient>> clients;
  for (int i = 0; i < 8; ++i) clients.push_back(client_of(i % 2 ? ca_b : ca_a));
  std::vector<std::thread> workers;
  std::vector<int> own(clients.size()), other(clients.size());
  for (size_t i = 0; i < clients.size(); ++i)
    workers.emplace_back([&, i] {
      const bool b = i % 2;
      own[i] = clients[i]->send(b ? to_b : to_a).status;
      other[i] = static_cast<int>(clients[i]->send(b ? to_a : to_b).failure);
    });
  for (auto& w : workers) w.join();
  for (size_t i = 0; i < clients.size(); ++i) {
    CAPTURE(i);
    CHECK(own[i] == 200);
    CHECK(other[i] == static_cast<int>(TransportFailure::tls_verify));
  }
  // After every client of a CA is gone, a new one parses it again and still verifies.
  clients.clear();
  CHECK(client_of(ca_a)->send(to_a).status == 200);
  CHECK(client_of(ca_b)->send(to_a).failure == TransportFailure::tls_verify);
}

TEST_CASE("transport: clients of one endpoint and TLS identity share connections, and no other CA or client "
          "certificate gets one",
          "[transport][tls]") {
  KeyPair ca = make_ca("fleet");
  KeyPair other_ca = make_ca("other");
  KeyPair alice = make_cert(ca, "alice");
  KeyPair bob = make_cert(ca, "bob");
  std::mutex mutex;
  std::vector<std::string> authenticated;  // the client certificate's CN of each request
  TestServer server(
      [&](const TestRequest& r) {
        std::lock_guard lock(mutex);
        authenticated.push_back(r.client_cn);
        return version_ok(r);
      },
      make_cert(ca, "apiserver", {"localhost"}, {"127.0.0.1"}), ca.cert_pem);
  HttpRequest req;
  req.url = server.url() + "/version";
  const TransportOptions fleet{.tls = {.ca_pem = ca.cert_pem}};

  // Two clusters behind one endpoint (one proxy for a fleet): the second
  // makes no handshake of its own.
  auto first = make_curl_client(fleet);
  auto second = make_curl_client(fleet);
  REQUIRE(first->send(req).status == 200);
  CHECK(second->send(req).status == 200);
  CHECK(first->stats().connections == 1);
  CHECK(second->stats().connections == 0);
  CHECK(server.connections() == 1);

  // A client of another CA does not get the connection (or the TLS session)
  // this CA verified: it verifies for itself, and fails.
  CHECK(make_curl_client({.tls = {.ca_pem = other_ca.cert_pem}})->send(req).failure == TransportFailure::tls_verify);

  // Each request is authenticated as its own client's certificate, never as
  // the one whose connection happens to be idle.
  auto as = [&](const KeyPair& who) {
    TransportOptions o = fleet;
    o.tls.client_cert_pem = who.cert_pem;
    o.tls.client_key_pem = who.key_pem;
    return make_curl_client(o);
  };
  auto alice_1 = as(alice);
  auto bob_1 = as(bob);
  auto alice_2 = as(alice);
  {
    std::lock_guard lock(mutex);
    authenticated.clear();
  }
  for (HttpClient* client : {alice_1.get(), bob_1.get(), alice_2.get(), first.get(), bob_1.get()})
    CHECK(client->send(req).status == 200);
  CHECK(authenticated == std::vector<std::string>{"alice", "bob", "alice", "", "bob"});
  CHECK(alice_1->stats().connections == 1);
  CHECK(alice_2->stats().connections == 0);
  CHECK(bob_1->stats().connections == 1);

  // Clients at once share as many connections as are busy at once, no more.
  std::vector<std::unique_ptr<HttpClient>> fan_out;
  for (int i = 0; i < 16; ++i) fan_out.push_back(make_curl_client(fleet));
  const int before = server.connections();
  std::vector<std::thread> workers;
  std::atomic<int> answered{0};
  for (int w = 0; w < 4; ++w)
    workers.emplace_back([&, w] {
      for (int round = 0; round < 5; ++round)
        for (size_t i = static_cast<size_t>(w); i < fan_out.size(); i += 4)
          if (fan_out[i]->send(req).status == 200) ++answered;
    });
  for (auto& t : workers) t.join();
  CHECK(answered == 80);
  CHECK(server.connections() - before <= 4);

  // The idle connections of an origin close with the last client that sent
  // there: a client made afterwards connects again.
  first.reset();
  second.reset();
  fan_out.clear();
  auto later = make_curl_client(fleet);
  CHECK(later->send(req).status == 200);
  CHECK(later->stats().connections == 1);
}

TEST_CASE("client: clusters behind one endpoint share connections, each request with its own token", "[transport]") {
  std::mutex mutex;
  std::vector<std::string> tokens;
  TestServer server([&](const TestRequest& r) {
    std::lock_guard lock(mutex);
    tokens.push_back(r.headers.at("authorization"));
    return version_ok(r);
  });
  ClusterAccess edge1 = access_for(server.url() + "/clusters/edge1", {}, "p+edge1");
  ClusterAccess edge2 = access_for(server.url() + "/clusters/edge2", {}, "p+edge2");
  edge1.token = "token-1";
  edge2.token = "token-2";
  KubeClient one(edge1);
  KubeClient two(edge2);
  one.server_version(2s);
  two.server_version(2s);
  one.server_version(2s);
  CHECK(tokens == std::vector<std::string>{"Bearer token-1", "Bearer token-2", "Bearer token-1"});
  CHECK(server.connections() == 1);
  CHECK(one.stats().connections == 1);
  CHECK(two.stats().connections == 0);
}

TEST_CASE("client: a wrong or expired CA is a TLS error naming the cluster", "[transport][tls][bad]") {
  KeyPair ca = make_ca("real-ca");
  KeyPair other_ca = make_ca("other-ca");
  KeyPair expired_ca = make_ca("expired-ca", -7200, -3600);
  KeyPair good = make_cert(ca, "apiserver", {"localhost"}, {"127.0.0.1"});
  KeyPair under_expired = make_cert(expired_ca, "apiserver", {"localhost"}, {"127.0.0.1"});
  {
    TestServer server(version_ok, good);
    KubeClient client(access_for(server.url(), other_ca.cert_pem));
    KubeError e = kube_error_of([&] { client.server_version(2s); });
    CHECK(e.category() == KubeErrorCategory::tls);
    CHECK(e.kind() == ErrorKind::unreachable);
    CHECK(e.message().find("cluster 'p+edge': TLS verification of '" + server.url() + "' failed: ") == 0);
    CHECK(e.message().find("certificate") != std::string::npos);
    // Verification is on by default: no CA in the kubeconfig means the system
    // store, which does not know the test CA either.
    KubeClient no_ca(access_for(server.url()));
    CHECK(kube_error_of([&] { no_ca.server_version(2s); }).category() == KubeErrorCategory::tls);
  }
  {
    TestServer server(version_ok, under_expired);
    KubeClient client(access_for(server.url(), expired_ca.cert_pem));
    KubeError e = kube_error_of([&] { client.server_version(2s); });
    CHECK(e.category() == KubeErrorCategory::tls);
    CHECK(e.message().find("expired") != std::string::npos);
  }
}

TEST_CASE("client: unreachable servers give the host-or-port hint", "[transport][bad]") {
  int port;
  {
    TestServer gone(version_ok);
    port = gone.port();
  }
  KubeClient client(access_for("http://127.0.0.1:" + std::to_string(port)));
  KubeError e = kube_error_of([&] { client.server_version(2s); });
  CHECK(e.category() == KubeErrorCategory::unreachable);
  CHECK(e.kind() == ErrorKind::unreachable);
  CHECK(e.message().find("cluster 'p+edge': cannot connect to 'http://127.0.0.1:") == 0);
  CHECK(e.hint() == "did you specify the right host or port?");
  CHECK(e.transient());

  KubeClient dns(access_for("https://no-such-host.invalid:6443"));
  KubeError d = kube_error_of([&] { dns.server_version(2s); });
  CHECK(d.category() == KubeErrorCategory::unreachable);
  // Normally "cannot resolve the host"; a machine whose DNS does not answer times out instead.
  CHECK(d.message().find("'https://no-such-host.invalid:6443'") != std::string::npos);

  TestServer slow([](const TestRequest& r) {
    TestResponse res = version_ok(r);
    res.delay_ms = 1500;
    return res;
  });
  KubeClient hung(access_for(slow.url()));
  KubeError t = kube_error_of([&] { hung.server_version(300ms); });
  CHECK(t.category() == KubeErrorCategory::unreachable);
  CHECK(t.message().find("timed out") != std::string::npos);
}

TEST_CASE("client: Retry-After is honoured for 429 and 503, bounded", "[transport]") {
  int calls = 0;
  TestServer server([&](const TestRequest& r) {
    ++calls;
    if (calls == 1 || calls < 0) return TestResponse{429, R"({"kind":"Status","code":429,"message":"slow down"})", {{"Retry-After", "2"}}};
    if (calls == 2) return TestResponse{503, R"({"kind":"Status","code":503,"message":"busy"})", {{"Retry-After", "1"}}};
    return version_ok(r);
  });
  std::vector<std::chrono::milliseconds> waits;
  KubeClientOptions opts;
  opts.sleep = [&](std::chrono::milliseconds d) { waits.push_back(d); };
  KubeClient client(access_for(server.url()), opts);
  CHECK(client.server_version(2s)["minor"] == "32");
  CHECK(waits == std::vector<std::chrono::milliseconds>{2000ms, 1000ms});
  CHECK(server.connections() == 1);

  calls = -100;  // always 429 from here on
  waits.clear();
  KubeError e = kube_error_of([&] { client.server_version(2s); });
  CHECK(waits.size() == 3);
  CHECK(e.category() == KubeErrorCategory::server_error);
  CHECK(e.http_status() == 429);
  CHECK(e.message() == "cluster 'p+edge': GET /version: server error 429: slow down");
}

TEST_CASE("client: token and basic auth headers", "[transport]") {
  TestRequest seen;
  TestServer server([&](const TestRequest& r) {
    seen = r;
    return version_ok(r);
  });
  ClusterAccess a = access_for(server.url());
  a.token = "tok";
  KubeClient(a).server_version(2s);
  CHECK(seen.headers["authorization"] == "Bearer tok");
  CHECK(seen.headers["user-agent"] == "emco/0.1");
  a.token.clear();
  a.username = "admin";
  a.password = "pw";
  KubeClient(a).server_version(2s);
  CHECK(seen.headers["authorization"] == "Basic YWRtaW46cHc=");
}

TEST_CASE("transport: the idle connections of many clients stay within the descriptor limit", "[transport]") {
  // An operation keeps a client per cluster. With every idle handle pooled
  // (three descriptors each), 200 clients needed 600 descriptors of a limit
  // of 512 and their requests failed; past the budget a client connects again.
  TestServer server(version_ok);
  rlimit saved{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &saved) == 0);
  struct Restore {
    rlimit limit;
    ~Restore() { setrlimit(RLIMIT_NOFILE, &limit); }
  } restore{saved};
  rlimit low = saved;
  low.rlim_cur = std::min<rlim_t>(saved.rlim_cur, 512);
  REQUIRE(setrlimit(RLIMIT_NOFILE, &low) == 0);
  std::vector<std::unique_ptr<HttpClient>> clients;
  // 200 clusters of distinct TLS identities (the server name is part of
  // one), so that each client keeps connections of its own.
  for (int i = 0; i < 200; ++i)
    clients.push_back(make_curl_client({.tls = {.server_name = "cluster-" + std::to_string(i) + ".test"}}));
  int answered = 0;
  for (int round = 0; round < 2; ++round) {
    for (auto& client : clients) {
      HttpRequest req;
      req.url = server.url() + "/version";
      if (client->send(req).status == 200) ++answered;
    }
  }
  auto open = std::distance(std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator());
  CHECK(answered == 400);
  CHECK(open < static_cast<long>(low.rlim_cur));
}
