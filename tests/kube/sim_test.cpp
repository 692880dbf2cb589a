// KubeTarget and cluster check against the in-process simulator (sim).

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <thread>

#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "helpers.hpp"
#include "pki.hpp"
#include "sim/sim.hpp"
#include "plugins/targets/kube/cluster_check.hpp"
#include "plugins/targets/kube/kube_target.hpp"
#include "plugins/targets/kube/pem.hpp"
#include "kube_errors.hpp"

using namespace emco;
using namespace emco::kube;
using emco::kube::test::kube_error_of;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

struct Fleet {
  sim::Simulator sim;
  explicit Fleet(int clusters, sim::AuthMode auth = sim::AuthMode::token, int crd_delay_ms = 0)
      : sim([&] {
          sim::SimOptions o;
          o.clusters = clusters;
          o.ready_delay_ms = 200;
          o.auth = auth;
          o.crd_establish_delay_ms = crd_delay_ms;
          return o;
        }()) {
    sim.start();
  }
  std::string name(size_t i) const { return sim.cluster_names().at(i); }
  std::string kubeconfig(size_t i) const { return slurp(sim.kubeconfig_path(name(i))); }
};

KubeTargetOptions fast_options() {
  KubeTargetOptions o;
  o.client.max_retry_wait = 50ms;
  o.client.establish_timeout = 10s;
  o.probe_timeout = 2s;
  return o;
}

const char* k_app = R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, labels: {app: web}}
data: {color: blue}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx:1.25}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 80}]
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1}
spec: {size: 3}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
apiVersion: v1
kind: Namespace
metadata: {name: apps}
)";

}  // namespace

TEST_CASE("sim: apply an app with a CRD and its CR, re-apply, update, read, ready, delete", "[sim]") {
  Fleet fleet(1, sim::AuthMode::token, 300);
  const std::string c = fleet.name(0);
  KubeTarget target("p+" + c, fleet.kubeconfig(0), "apps", fast_options());

  ProbeResult probe = target.probe();
  CHECK(probe.reachable);
  CHECK(probe.version.rfind("v1.32", 0) == 0);
  CHECK_FALSE(probe.error);

  std::vector<ApplyResult> first = target.apply_all(k_app);
  REQUIRE(first.size() == 6);
  // Namespace first, CRD second (waited for Established), then file order.
  CHECK(first[0].ref.gvk.kind == "Namespace");
  CHECK(first[1].ref.gvk.kind == "CustomResourceDefinition");
  CHECK(first[2].ref.gvk.kind == "ConfigMap");
  CHECK(first[5].ref.gvk.kind == "Widget");
  for (const auto& r : first) CHECK(r.action == ApplyAction::created);
  CHECK(first[2].ref.ns == "apps");
  CHECK(first[1].ref.ns.empty());

  json cm = fleet.sim.get(c, "v1", "ConfigMap", "apps", "web-config");
  REQUIRE(cm.is_object());
  CHECK(cm["data"]["color"] == "blue");
  bool emco_manages = false;
  for (const auto& mf : cm["metadata"]["managedFields"])
    if (mf["manager"] == "emco" && mf["operation"] == "Apply") emco_manages = true;
  CHECK(emco_manages);
  CHECK(fleet.sim.get(c, "example.com/v1", "Widget", "apps", "w1")["spec"]["size"] == 3);

  SECTION("re-applying unchanged content does not write") {
    // Let the workload controller finish its status writes first.
    ObjectRef deploy{{"apps", "v1", "Deployment"}, "", "web"};
    for (int i = 0; i < 100 && !target.ready(deploy).ready; ++i) std::this_thread::sleep_for(50ms);
    std::vector<std::string> live_versions;
    for (const auto& r : first) live_versions.push_back(target.read(r.ref)["metadata"]["resourceVersion"]);
    std::vector<ApplyResult> again = target.apply_all(k_app);
    REQUIRE(again.size() == 6);
    CHECK(again[1].action == ApplyAction::exists);  // CRD: create-if-absent
    for (size_t i : {0, 2, 3, 4, 5}) {
      INFO(again[i].ref.gvk.kind);
      CHECK(again[i].action == ApplyAction::configured);
      CHECK(again[i].resource_version == live_versions[i]);
    }
  }
  SECTION("an update changes the live object") {
    ApplyResult r = target.apply(std::string_view(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web-config"},"data":{"color":"green"}})"));
    CHECK(r.action == ApplyAction::configured);
    CHECK(r.resource_version != first[2].resource_version);
    json live = target.read({{"", "v1", "ConfigMap"}, "", "web-config"});
    CHECK(live["data"]["color"] == "green");
    CHECK(fleet.sim.get(c, "v1", "ConfigMap", "apps", "web-config")["data"]["color"] == "green");
  }
  SECTION("workloads become ready, list by label") {
    ObjectRef deploy{{"apps", "v1", "Deployment"}, "", "web"};
    Readiness ready = target.ready(deploy);
    for (int i = 0; i < 100 && !ready.ready; ++i) {
      std::this_thread::sleep_for(50ms);
      ready = target.ready(deploy);
    }
    CHECK(ready.ready);
    CHECK(target.ready({{"", "v1", "Service"}, "", "web"}).ready);
    CHECK(target.ready({{"", "v1", "ConfigMap"}, "", "absent"}).reason == "not present");
    auto items = target.client().list({"", "v1", "ConfigMap"}, "apps", "app=web");
    REQUIRE(items.size() == 1);
    CHECK(items[0]["metadata"]["name"] == "web-config");
    CHECK(target.client().list({"", "v1", "ConfigMap"}, "apps", "app=other").empty());
  }
  SECTION("delete with propagation; deleting again reports absence") {
    CHECK(target.remove({{"apps", "v1", "Deployment"}, "", "web"}, Propagation::foreground));
    CHECK(fleet.sim.get(c, "apps/v1", "Deployment", "apps", "web").is_null());
    CHECK_FALSE(target.remove({{"apps", "v1", "Deployment"}, "", "web"}));
    CHECK(target.remove({{"", "v1", "Namespace"}, "", "apps"}));
    // The namespace's contents went with it.
    for (int i = 0; i < 100 && !fleet.sim.get(c, "v1", "ConfigMap", "apps", "web-config").is_null(); ++i)
      std::this_thread::sleep_for(20ms);
    CHECK(fleet.sim.get(c, "v1", "ConfigMap", "apps", "web-config").is_null());
  }
  SECTION("one connection carries everything (keep-alive)") {
    for (int i = 0; i < 20; ++i) target.read({{"", "v1", "ConfigMap"}, "", "web-config"});
    HttpStats s = target.client().stats();
    CHECK(s.requests > 30);
    CHECK(s.connections == 1);
  }
}

TEST_CASE("sim: a missing target namespace is created, and CSR approval", "[sim]") {
  Fleet fleet(1, sim::AuthMode::client_cert);
  const std::string c = fleet.name(0);
  KubeTarget target(c, fleet.kubeconfig(0), "fresh-ns", fast_options());
  ApplyResult r = target.apply(std::string_view("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\n"));
  CHECK(r.action == ApplyAction::created);
  CHECK(fleet.sim.get(c, "v1", "Namespace", "", "fresh-ns").is_object());
  CHECK(fleet.sim.get(c, "v1", "ConfigMap", "fresh-ns", "x").is_object());

  // A CSR from a fresh key, approved by emco and signed by the simulator's CA;
  // the issued certificate then authenticates.
  test::KeyPair csr = test::make_csr("edge-agent");
  std::string csr_yaml = "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata: {name: edge-csr}\n"
                         "spec: {signerName: kubernetes.io/kube-apiserver-client, usages: [client auth], request: " +
                         base64_encode(csr.cert_pem) + "}\n";
  CHECK(target.apply(std::string_view(csr_yaml)).action == ApplyAction::created);
  target.client().approve_csr("edge-csr");
  target.client().approve_csr("edge-csr");  // already approved: no-op
  json live = target.read({{"certificates.k8s.io", "v1", "CertificateSigningRequest"}, "", "edge-csr"});
  int approvals = 0;
  for (const auto& cond : live["status"]["conditions"])
    if (cond["type"] == "Approved" && cond["status"] == "True") ++approvals;
  CHECK(approvals == 1);
  REQUIRE(live["status"].contains("certificate"));
  std::string issued = *base64_decode(live["status"]["certificate"].get<std::string>());
  CHECK(inspect_certificates(issued, "issued").subject == "CN=edge-agent");
  ClusterAccess agent = target.client().access();
  agent.client_cert_pem = issued;
  agent.client_key_pem = csr.key_pem;
  KubeClient as_agent(agent);
  CHECK(as_agent.server_version(2s).contains("gitVersion"));
  // The new user has no permissions until RBAC grants them.
  KubeError denied = kube_error_of([&] { as_agent.get({"", "v1", "Namespace"}, "", "fresh-ns"); });
  CHECK(denied.category() == KubeErrorCategory::forbidden);
  CHECK(denied.http_status() == 403);
  CHECK_THAT(denied.message(), Catch::Contains("namespaces \"fresh-ns\" is forbidden: User \"edge-agent\" cannot get "
                                               "resource \"namespaces\" in API group \"\" in the namespace \"fresh-ns\""));
  target.apply(std::string_view(
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: reader}\n"
      "rules: [{apiGroups: [''], resources: [namespaces, configmaps], verbs: [get]}]\n"));
  target.apply(std::string_view(
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: reader}\n"
      "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}\n"
      "subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: edge-agent}]\n"));
  CHECK(as_agent.get({"", "v1", "Namespace"}, "", "fresh-ns").is_object());
  CHECK(as_agent.get({"", "v1", "ConfigMap"}, "fresh-ns", "x").is_object());
}

TEST_CASE("sim: a namespace still Terminating is not applied until it is gone, then made again", "[sim]") {
  Fleet fleet(1);  // a deleted Namespace stays Terminating for the simulator's default 500 ms
  const std::string c = fleet.name(0);
  KubeTarget target(c, fleet.kubeconfig(0), "lc1-ns", fast_options());
  const std::string ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: lc1-ns}\n";
  const std::string quota = "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: small}\nspec: {hard: {pods: '2'}}\n";
  target.apply(std::string_view(ns));
  target.apply(std::string_view(quota));
  REQUIRE(target.remove({{"", "v1", "Namespace"}, "", "lc1-ns"}));
  // The apply reaches a Terminating namespace: a transient error, not "applied".
  KubeError again = kube_error_of([&] { target.apply(std::string_view(ns)); });
  CHECK(again.category() == KubeErrorCategory::terminating);
  CHECK(again.transient());
  CHECK_THAT(again.message(), Catch::Contains("is being deleted (Terminating)"));
  // New content for it is refused the same way (the API server's
  // NamespaceTerminating; updates of what is there are still allowed).
  const std::string other = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fresh}\ndata: {a: b}\n";
  KubeError content = kube_error_of([&] { target.apply(std::string_view(other)); });
  INFO(content.message() << " HTTP " << content.http_status());
  CHECK(content.category() == KubeErrorCategory::terminating);
  CHECK(content.transient());
  // Once it is gone, both go through: the namespace is made again, and
  // content whose namespace the client had seen before recreates it too.
  for (int i = 0; i < 100 && fleet.sim.get(c, "v1", "Namespace", "", "lc1-ns").is_object(); ++i) std::this_thread::sleep_for(50ms);
  REQUIRE_FALSE(fleet.sim.get(c, "v1", "Namespace", "", "lc1-ns").is_object());
  CHECK(target.apply(std::string_view(quota)).action == ApplyAction::created);
  CHECK(fleet.sim.get(c, "v1", "Namespace", "", "lc1-ns").is_object());
  CHECK(target.apply(std::string_view(ns)).action == ApplyAction::configured);
}

TEST_CASE("sim: errors are mapped (credentials, faults, wrong CA)", "[sim][bad]") {
  Fleet fleet(2);
  const std::string c = fleet.name(0);
  const std::string cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n";

  SECTION("a wrong token is unauthorised") {
    std::string text = fleet.kubeconfig(0);
    auto pos = text.find("token: ");
    text = text.substr(0, pos) + "token: wrong\n" + text.substr(text.find('\n', pos) + 1);
    KubeTarget bad("p+" + c, text, "default", fast_options());
    KubeError e = kube_error_of([&] { bad.apply(std::string_view(cm)); });
    CHECK(e.category() == KubeErrorCategory::unauthorized);
    CHECK(e.message().find("cluster 'p+" + c + "': unauthorised") == 0);
    CHECK(e.message().find("wrong") == std::string::npos);
  }
  SECTION("expired credentials, 503 with Retry-After, refused connections") {
    KubeTarget target(c, fleet.kubeconfig(0), "default", fast_options());
    CHECK(target.apply(std::string_view(cm)).action == ApplyAction::created);
    sim::Fault f;
    f.expired_credentials = true;
    fleet.sim.set_fault(c, f);
    CHECK(kube_error_of([&] { target.apply(std::string_view(cm)); }).category() == KubeErrorCategory::unauthorized);
    f = {};
    f.error_rate = 1.0;
    f.error_code = 503;
    fleet.sim.set_fault(c, f);
    uint64_t before = target.client().stats().requests;
    KubeError e = kube_error_of([&] { target.apply(std::string_view(cm)); });
    CHECK(e.category() == KubeErrorCategory::server_error);
    CHECK(e.http_status() == 503);
    CHECK(target.client().stats().requests - before == 4);  // 1 + 3 retries
    f = {};
    f.refuse = true;
    fleet.sim.set_fault(c, f);
    KubeError refused = kube_error_of([&] { target.read({{"", "v1", "ConfigMap"}, "", "x"}); });
    CHECK(refused.category() == KubeErrorCategory::unreachable);
    CHECK(refused.hint() == "did you specify the right host or port?");
    ProbeResult p = target.probe();
    CHECK_FALSE(p.reachable);
    CHECK(p.error == KubeErrorCategory::unreachable);
    fleet.sim.set_fault(c, {});
    CHECK(target.probe().reachable);
  }
  SECTION("a wrong CA is a TLS error naming the cluster") {
    std::string text = fleet.kubeconfig(1);
    auto pos = text.find("certificate-authority-data: ") + std::string("certificate-authority-data: ").size();
    text = text.substr(0, pos) + base64_encode(test::make_ca("impostor").cert_pem) + text.substr(text.find('\n', pos));
    KubeTarget target("p+" + fleet.name(1), text, "default", fast_options());
    KubeError e = kube_error_of([&] { target.apply(std::string_view(cm)); });
    CHECK(e.category() == KubeErrorCategory::tls);
    CHECK(e.message().find("cluster 'p+" + fleet.name(1) + "': TLS verification of 'https://") == 0);
  }
  SECTION("invalid objects and unknown kinds") {
    KubeTarget target(c, fleet.kubeconfig(0), "default", fast_options());
    KubeError e = kube_error_of([&] { target.apply(std::string_view("apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n")); });
    CHECK(e.category() == KubeErrorCategory::not_found);
    CHECK(e.message() == "cluster '" + c + "' does not serve kind 'Gadget' in 'example.com/v1'");
    e = kube_error_of([&] { target.apply(std::string_view("apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: x-}\n")); });
    CHECK(e.category() == KubeErrorCategory::invalid);
  }
}

TEST_CASE("sim: cluster check over a fleet", "[sim][check]") {
  Fleet fleet(3);
  sim::Fault down;
  down.refuse = true;
  fleet.sim.set_fault(fleet.name(2), down);
  std::vector<ClusterCheckInput> inputs;
  for (size_t i = 0; i < 3; ++i) inputs.push_back({"p+" + fleet.name(i), fleet.kubeconfig(i), "", "apps"});
  ClusterCheckOptions opts;
  opts.timeout = 2s;
  auto results = check_clusters(inputs, opts);
  for (size_t i = 0; i < 2; ++i) {
    INFO(format_check_table(results));
    CHECK(results[i].check("reachable").status == CheckStatus::ok);
    CHECK(results[i].check("tls").status == CheckStatus::ok);
    CHECK(results[i].check("credentials").status == CheckStatus::ok);
    CHECK(results[i].check("permissions").status == CheckStatus::ok);
    CHECK(results[i].version.rfind("v1.32", 0) == 0);
    CHECK_FALSE(results[i].failed());
  }
  CHECK(results[2].check("reachable").status == CheckStatus::failed);
  CHECK(check_exit_code(results) == 1);
}

TEST_CASE("sim: cluster check reports a tenant's permissions as RBAC grants them", "[sim][check]") {
  Fleet fleet(1);
  const std::string c = fleet.name(0);
  KubeTarget admin(c, fleet.kubeconfig(0), "team-a", fast_options());
  // The tenant: a key and CSR, approved by the admin, signed by the cluster CA.
  test::KeyPair key = test::make_csr("tenant");
  admin.apply(std::string_view("apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\n"
                               "metadata: {name: tenant}\nspec: {signerName: kubernetes.io/kube-apiserver-client, "
                               "usages: [client auth], request: " +
                               base64_encode(key.cert_pem) + "}\n"));
  admin.client().approve_csr("tenant");
  json csr = admin.read({{"certificates.k8s.io", "v1", "CertificateSigningRequest"}, "", "tenant"});
  REQUIRE(csr["status"].contains("certificate"));
  std::string kc = fleet.kubeconfig(0);
  std::string server = kc.substr(kc.find("server: ") + 8);
  server = server.substr(0, server.find('\n'));
  std::string ca = kc.substr(kc.find("certificate-authority-data: ") + 28);
  ca = ca.substr(0, ca.find('\n'));
  std::string tenant_kc = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " + server +
                          "\n    certificate-authority-data: " + ca +
                          "\nusers:\n- name: tenant\n  user:\n    client-certificate-data: " +
                          csr["status"]["certificate"].get<std::string>() +
                          "\n    client-key-data: " + base64_encode(key.key_pem) +
                          "\ncontexts:\n- name: t\n  context: {cluster: c, user: tenant, namespace: team-a}\n"
                          "current-context: t\n";
  // A standard logical cloud's kind of grant: everything emco deploys, in team-a only.
  admin.apply_all(std::string_view(
      "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n---\n"
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: tenant, namespace: team-a}\n"
      "rules:\n- {apiGroups: ['', apps], resources: [configmaps, deployments], verbs: [create, get, patch]}\n"
      "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: tenant, namespace: team-a}\n"
      "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: tenant}\n"
      "subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: tenant}]\n"));

  // emco's client with the tenant's kubeconfig: what RBAC grants works, the rest is forbidden.
  KubeTarget tenant("p+" + c, tenant_kc, "team-a", fast_options());
  CHECK(tenant.apply(std::string_view("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\ndata: {a: b}\n")).action ==
        ApplyAction::created);
  CHECK(fleet.sim.get(c, "v1", "ConfigMap", "team-a", "ok").is_object());
  KubeError denied =
      kube_error_of([&] { tenant.apply(std::string_view("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n")); });
  CHECK(denied.category() == KubeErrorCategory::forbidden);
  CHECK_FALSE(denied.transient());
  CHECK(denied.message() ==
        "cluster 'p+" + c + "': forbidden: secrets \"s\" is forbidden: User \"tenant\" cannot patch resource "
        "\"secrets\" in API group \"\" in the namespace \"team-a\"");
  CHECK(fleet.sim.get(c, "v1", "Secret", "team-a", "s").is_null());

  ClusterCheckOptions opts;
  opts.timeout = 2s;
  auto results = check_clusters({{"p+" + c, tenant_kc, "", ""}, {"p+" + c, tenant_kc, "", "team-b"}}, opts);
  INFO(format_check_table(results));
  CHECK(results[0].check("credentials").status == CheckStatus::ok);
  CHECK(results[0].credential_kind == "client certificate");
  CHECK(results[0].check("permissions").status == CheckStatus::failed);
  CHECK(results[0].check("permissions").detail ==
        "not allowed in namespace 'team-a': delete configmaps, delete deployments.apps");
  CHECK(results[1].check("permissions").detail ==
        "not allowed in namespace 'team-b': create configmaps, delete configmaps, create deployments.apps, delete "
        "deployments.apps");
  // With delete granted too, the tenant's own namespace checks out.
  admin.apply(std::string_view(
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: tenant, namespace: team-a}\n"
      "rules:\n- {apiGroups: ['', apps], resources: [configmaps, deployments], verbs: [create, get, patch, delete]}\n"));
  results = check_clusters({{"p+" + c, tenant_kc, "", ""}}, opts);
  INFO(format_check_table(results));
  CHECK(results[0].check("permissions").status == CheckStatus::ok);
  CHECK(results[0].check("permissions").detail == "create and delete allowed in namespace 'team-a'");
  CHECK_FALSE(results[0].failed());

  // Escalation: allowed to write Roles, the tenant may grant only what it holds.
  admin.apply(std::string_view(
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: tenant, namespace: team-a}\n"
      "rules:\n- {apiGroups: ['', apps], resources: [configmaps, deployments], verbs: [create, get, patch, delete]}\n"
      "- {apiGroups: [rbac.authorization.k8s.io], resources: [roles], verbs: [create, get, patch]}\n"));
  CHECK(tenant.apply(std::string_view("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n"
                                      "metadata: {name: reader}\nrules:\n"
                                      "- {apiGroups: [''], resources: [configmaps], verbs: [get]}\n"))
            .action == ApplyAction::created);
  KubeError escalation = kube_error_of([&] {
    tenant.apply(std::string_view("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: peek}\n"
                                  "rules:\n- {apiGroups: [''], resources: [secrets, configmaps], verbs: [get, list]}\n"));
  });
  CHECK(escalation.category() == KubeErrorCategory::forbidden);
  CHECK(escalation.http_status() == 403);
  CHECK(escalation.message() ==
        "cluster 'p+" + c + "': forbidden: roles.rbac.authorization.k8s.io \"peek\" is forbidden: user \"tenant\" "
        "(groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n"
        "{APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"list\"]}\n"
        "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"list\"]}");
  CHECK(fleet.sim.get(c, "rbac.authorization.k8s.io/v1", "Role", "team-a", "peek").is_null());
}
