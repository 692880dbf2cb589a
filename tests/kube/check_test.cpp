// cluster check against a local TLS server.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "helpers.hpp"
#include "pki.hpp"
#include "plugins/targets/kube/cluster_check.hpp"
#include "plugins/targets/kube/pem.hpp"
#include "test_server.hpp"

using namespace emco;
using namespace emco::kube;
using namespace emco::kube::test;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

struct FakeApi {
  KeyPair ca = make_ca("check-ca");
  KeyPair cert = make_cert(ca, "apiserver", {"localhost"}, {"127.0.0.1"});
  std::string token = "good-token";
  bool review = true;
  std::set<std::string> denied;  // "delete deployments"
  TestServer server{[this](const TestRequest& r) { return handle(r); }, cert};

  TestResponse handle(const TestRequest& r) {
    if (r.target.rfind("/version", 0) == 0) return {200, R"({"major":"1","minor":"32","gitVersion":"v1.32.0"})", {}};
    if (r.headers.count("authorization") == 0 || r.headers.at("authorization") != "Bearer " + token)
      return {401, R"({"kind":"Status","code":401,"reason":"Unauthorized","message":"Unauthorized"})", {}};
    if (r.target == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" && r.method == "POST") {
      if (!review) return {404, R"({"kind":"Status","code":404,"message":"the server could not find the requested resource"})", {}};
      json req = json::parse(r.body);
      auto attrs = req["spec"]["resourceAttributes"];
      bool allowed = !denied.count(attrs["verb"].get<std::string>() + " " + attrs["resource"].get<std::string>());
      req["status"] = {{"allowed", allowed}};
      return {201, req.dump(), {}};
    }
    if (r.target.rfind("/api/v1/namespaces/", 0) == 0) return {200, R"({"kind":"Namespace"})", {}};
    return {404, R"({"kind":"Status","code":404})", {}};
  }

  std::string kubeconfig(const std::string& user_yaml, const std::string& ca_pem = {}) const {
    return "apiVersion: v1\nkind: Config\ncurrent-context: x\nclusters:\n- name: c\n  cluster:\n    server: " +
           server.url() + "\n    certificate-authority-data: " + base64_encode(ca_pem.empty() ? ca.cert_pem : ca_pem) +
           "\nusers:\n- name: u\n  user: " + user_yaml + "\ncontexts:\n- name: x\n  context: {cluster: c, user: u, namespace: apps}\n";
  }
};

}  // namespace

TEST_CASE("cluster check: healthy, denied, bad token, wrong CA, unreachable, broken kubeconfig", "[check]") {
  FakeApi api;
  api.denied = {"delete deployments"};
  int closed_port;
  {
    TestServer gone([](const TestRequest&) { return TestResponse{}; });
    closed_port = gone.port();
  }
  KeyPair client = make_cert(api.ca, "admin", {}, {}, -3600, 3 * 86400);  // expires in 3 days
  TempDir dir;
  write_file(dir.file("plugin.sh"), "#!/bin/sh\necho '{\"kind\":\"ExecCredential\",\"status\":{\"token\":\"good-token\",\"expirationTimestamp\":\"2099-01-02T00:00:00Z\"}}'\n", true);
  std::vector<ClusterCheckInput> inputs = {
      {"p+good", api.kubeconfig("{token: good-token}"), "", "team"},
      {"p+badtoken", api.kubeconfig("{token: wrong}"), "", ""},
      {"p+wrongca", api.kubeconfig("{token: good-token}", make_ca("other").cert_pem), "", ""},
      {"p+down", "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:" + std::to_string(closed_port) +
                     "'}}]\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n", "", ""},
      {"p+broken", "clusters: [\n", "", ""},
      {"p+exec", api.kubeconfig("{exec: {apiVersion: client.authentication.k8s.io/v1, command: '" + dir.file("plugin.sh") + "'}}"), "", ""},
      {"p+cert", api.kubeconfig("{token: good-token, client-certificate-data: " + base64_encode(client.cert_pem) +
                                ", client-key-data: " + base64_encode(client.key_pem) + "}"), "", ""},
  };
  ClusterCheckOptions opts;
  opts.parallelism = 4;
  opts.timeout = 2s;
  auto results = check_clusters(inputs, opts);
  REQUIRE(results.size() == inputs.size());

  const auto& good = results[0];
  CHECK(good.version == "v1.32.0");
  CHECK(good.check("reachable").status == CheckStatus::ok);
  CHECK(good.check("tls").status == CheckStatus::ok);
  CHECK(good.check("credentials").status == CheckStatus::ok);
  CHECK(good.check("permissions").status == CheckStatus::failed);
  CHECK(good.check("permissions").detail == "not allowed in namespace 'team': delete deployments.apps");
  CHECK(good.failed());

  CHECK(results[1].check("credentials").status == CheckStatus::failed);
  CHECK(results[1].check("credentials").detail ==
        "cluster 'p+badtoken': unauthorised: the server rejected the credentials of user 'u'");
  CHECK(results[2].check("tls").status == CheckStatus::failed);
  CHECK(results[2].check("tls").detail.find("cluster 'p+wrongca': TLS verification") == 0);
  CHECK(results[3].check("reachable").status == CheckStatus::failed);
  CHECK(results[3].check("reachable").detail.find("cannot connect") != std::string::npos);
  CHECK(results[4].check("kubeconfig").status == CheckStatus::failed);
  CHECK(results[4].check("reachable").status == CheckStatus::skipped);

  const auto& exec = results[5];
  CHECK(exec.credential_kind == "exec token");
  REQUIRE(exec.credential_expiry);
  CHECK(format_rfc3339(*exec.credential_expiry) == "2099-01-02T00:00:00Z");
  CHECK(exec.check("permissions").status == CheckStatus::failed);

  const auto& cert = results[6];
  CHECK(cert.credential_kind == "client certificate");
  CHECK(cert.check("credentials").status == CheckStatus::warning);
  CHECK(cert.check("credentials").detail.find("client certificate expires on ") == 0);

  std::string table = format_check_table(results);
  CHECK(table.rfind("CLUSTER ", 0) == 0);
  CHECK(table.find("p+good") != std::string::npos);
  CHECK(table.find("p+badtoken: credentials: cluster 'p+badtoken': unauthorised") != std::string::npos);
  json doc = json::parse(check_results_json(results));
  CHECK(doc["clusters"].size() == inputs.size());
  CHECK(doc["clusters"][0]["checks"]["permissions"]["status"] == "failed");
  CHECK(doc["clusters"][5]["credentialExpiry"] == "2099-01-02T00:00:00Z");
  CHECK(doc["failed"] == 7);
  CHECK(check_exit_code(results) == 1);

  api.denied.clear();
  auto ok = check_clusters({inputs[0]}, opts);
  CHECK(ok[0].check("permissions").status == CheckStatus::ok);
  CHECK(check_exit_code(ok) == 0);

  api.review = false;  // a server without SelfSubjectAccessReview
  auto unknown = check_cluster(inputs[0], opts);
  CHECK(unknown.check("permissions").status == CheckStatus::unknown);
  CHECK(unknown.check("permissions").detail == "the server does not offer SelfSubjectAccessReview");
  CHECK(unknown.check("credentials").status == CheckStatus::ok);
  CHECK_FALSE(unknown.failed());
}
