// The real kubectl against the simulator, compared with what it holds.
// Skips (with a visible warning) only when no kubectl binary exists.

#include <catch2/catch.hpp>
#include <unistd.h>

#include <atomic>

#include "core/util/strings.hpp"
#include "helpers.hpp"
#include "tests/shell.hpp"

using nlohmann::json;
using namespace simtest;
using emco::sim::SimOptions;

namespace {

using emco::test::find_kubectl;

#define KUBECTL_OR_SKIP()                                                                          \
  const std::string kubectl = find_kubectl();                                                      \
  if (kubectl.empty()) {                                                                           \
    WARN("SKIPPED: no kubectl binary (see find_kubectl in tests/shell.hpp)");                      \
    return;                                                                                        \
  }

// Runs kubectl with a fresh cache directory (so that every command does its
// own discovery, as the surface notes advise).
struct Kubectl {
  std::string binary;
  std::string kubeconfig;
  std::string scratch;
  RunResult operator()(const std::string& args) const {
    static std::atomic<int> n{0};
    std::string cache = scratch + "/cache-" + std::to_string(++n);
    return run("KUBECONFIG=" + kubeconfig + " " + binary + " --cache-dir " + cache + " " + args);
  }
};

const char* k_manifests = R"(apiVersion: v1
kind: Namespace
metadata:
  name: ns
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  namespace: ns
data:
  a: "1"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ns
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        ports:
        - containerPort: 80
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, shortNames: [wd]}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
  namespace: ns
spec:
  size: 3
)";

bool has_manager(const json& obj, const std::string& manager, const std::string& operation) {
  for (const auto& e : obj["metadata"]["managedFields"])
    if (e["manager"] == manager && e["operation"] == operation) return true;
  return false;
}

std::string condition(const json& obj, const std::string& type) {
  for (const auto& c : obj["status"]["conditions"])
    if (c["type"] == type) return c["status"];
  return {};
}

}  // namespace

TEST_CASE("kubectl: apply --server-side, get, label, patch, wait, delete") {
  KUBECTL_OR_SKIP();
  SimOptions o;
  o.clusters = 2;
  o.ready_delay_ms = 700;
  o.finalize_delay_ms = 1500;  // kubectl deletes the namespace's objects after the namespace itself
  Fleet f(o);
  Kubectl k{kubectl, f.sim->kubeconfig_path("cluster-2"), f.dir.path};
  std::string file = f.dir.path + "/manifests.yaml";
  write_file(file, k_manifests);

  // As against a real server: the custom resource cannot be mapped in the
  // same run that creates its CRD ...
  auto first = k("apply --server-side -f " + file);
  INFO(first.output);
  CHECK(first.rc == 1);
  CHECK_THAT(first.output, Catch::Contains("namespace/ns serverside-applied"));
  CHECK_THAT(first.output, Catch::Contains("deployment.apps/web serverside-applied"));
  CHECK_THAT(first.output,
             Catch::Contains("customresourcedefinition.apiextensions.k8s.io/widgets.example.com serverside-applied"));
  CHECK_THAT(first.output, Catch::Contains("ensure CRDs are installed first"));
  // ... and the next apply of the same file completes it.
  auto second = k("apply --server-side -f " + file);
  INFO(second.output);
  REQUIRE(second.rc == 0);
  CHECK_THAT(second.output, Catch::Contains("widget.example.com/w1 serverside-applied"));

  json widget = f.sim->get("cluster-2", "example.com/v1", "Widget", "ns", "w1");
  REQUIRE(widget.is_object());
  CHECK(widget["spec"]["size"] == 3);
  CHECK(has_manager(widget, "kubectl", "Apply"));
  json dep = f.sim->get("cluster-2", "apps/v1", "Deployment", "ns", "web");
  CHECK(dep["spec"]["template"]["spec"]["containers"][0]["ports"][0]["protocol"] == "TCP");
  CHECK(has_manager(dep, "kubectl", "Apply"));
  CHECK(f.sim->list("cluster-1", "apps/v1", "Deployment").empty());  // the other cluster is untouched

  auto get = k("get deploy web -n ns -o json");
  REQUIRE(get.rc == 0);
  json got = json::parse(get.output);
  dep = f.sim->get("cluster-2", "apps/v1", "Deployment", "ns", "web");
  CHECK(got["metadata"]["uid"] == dep["metadata"]["uid"]);
  CHECK(got["metadata"]["resourceVersion"] == dep["metadata"]["resourceVersion"]);
  CHECK(got["spec"] == dep["spec"]);
  auto list = k("get widgets -n ns -o json");
  REQUIRE(list.rc == 0);
  CHECK(json::parse(list.output)["items"][0]["metadata"]["name"] == "w1");
  auto by_label = k("get deploy -n ns -l app=web -o name");
  CHECK(by_label.output == "deployment.apps/web\n");
  auto table = k("get cm -n ns");
  CHECK_THAT(table.output, Catch::Contains("web-config"));

  auto label = k("label cm web-config -n ns tier=front");
  INFO(label.output);
  CHECK(label.rc == 0);
  json cm = f.sim->get("cluster-2", "v1", "ConfigMap", "ns", "web-config");
  CHECK(cm["metadata"]["labels"]["tier"] == "front");
  CHECK(has_manager(cm, "kubectl-label", "Update"));

  auto smp = k(R"(patch deploy web -n ns -p '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.26"}]}}}}')");
  INFO(smp.output);
  CHECK(smp.rc == 0);
  dep = f.sim->get("cluster-2", "apps/v1", "Deployment", "ns", "web");
  CHECK(dep["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26");
  CHECK(dep["spec"]["template"]["spec"]["containers"][0]["ports"].size() == 1);  // merged, not replaced
  CHECK(dep["metadata"]["generation"] == 2);
  CHECK(has_manager(dep, "kubectl-patch", "Update"));

  auto merge = k(R"(patch widget w1 -n ns --type=merge -p '{"spec":{"size":5}}')");
  INFO(merge.output);
  CHECK(merge.rc == 0);
  CHECK(f.sim->get("cluster-2", "example.com/v1", "Widget", "ns", "w1")["spec"]["size"] == 5);
  auto jp = k(R"(patch cm web-config -n ns --type=json -p '[{"op":"add","path":"/data/b","value":"2"}]')");
  CHECK(jp.rc == 0);
  CHECK(f.sim->get("cluster-2", "v1", "ConfigMap", "ns", "web-config")["data"]["b"] == "2");
  auto smp_cr = k(R"(patch widget w1 -n ns -p '{"spec":{"size":6}}')");
  CHECK(smp_cr.rc != 0);  // strategic merge is not defined for custom resources
  CHECK_THAT(smp_cr.output, Catch::Contains("strategic merge patch") || Catch::Contains("unknown format") ||
                                Catch::Contains("UnsupportedMediaType"));

  auto wait = k("wait --for=condition=Available deployment/web -n ns --timeout=30s");
  INFO(wait.output);
  CHECK(wait.rc == 0);
  CHECK_THAT(wait.output, Catch::Contains("deployment.apps/web condition met"));
  CHECK(condition(f.sim->get("cluster-2", "apps/v1", "Deployment", "ns", "web"), "Available") == "True");

  // Another manager changing a field kubectl owns conflicts, as the API reports it.
  std::string other = f.dir.path + "/other.yaml";
  write_file(other,
             "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: ns\nspec:\n  replicas: 5\n");
  auto conflict = k("apply --server-side --field-manager=helm -f " + other);
  INFO(conflict.output);
  CHECK(conflict.rc == 1);
  CHECK_THAT(conflict.output,
             Catch::Contains("Apply failed with 1 conflict: conflict with \"kubectl\": .spec.replicas"));
  CHECK(f.sim->get("cluster-2", "apps/v1", "Deployment", "ns", "web")["spec"]["replicas"] == 2);
  auto forced = k("apply --server-side --field-manager=helm --force-conflicts -f " + other);
  CHECK(forced.rc == 0);
  CHECK(f.sim->get("cluster-2", "apps/v1", "Deployment", "ns", "web")["spec"]["replicas"] == 5);

  auto scale = k("scale deploy web -n ns --replicas=3");
  INFO(scale.output);
  CHECK(scale.rc == 0);
  dep = f.sim->get("cluster-2", "apps/v1", "Deployment", "ns", "web");
  CHECK(dep["spec"]["replicas"] == 3);
  // kubectl scale sends no fieldManager: the API names the manager after the
  // User-Agent up to its first '/', i.e. the binary's name.
  CHECK(has_manager(dep, kubectl.substr(kubectl.rfind('/') + 1), "Update"));

  auto del = k("delete -f " + file);
  INFO(del.output);
  CHECK(del.rc == 0);
  CHECK_THAT(del.output, Catch::Contains("namespace \"ns\" deleted"));
  CHECK_THAT(del.output, Catch::Contains("deployment.apps \"web\" deleted"));
  CHECK(f.sim->get("cluster-2", "v1", "Namespace", "", "ns").is_null());
  CHECK(f.sim->get("cluster-2", "apps/v1", "Deployment", "ns", "web").is_null());
  CHECK(f.sim->get("cluster-2", "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.com")
            .is_null());
  auto missing = k("get deploy web -n default");
  CHECK(missing.rc == 1);
  CHECK_THAT(missing.output, Catch::Contains("Error from server (NotFound): deployments.apps \"web\" not found"));
  // kubectl itself checks the namespace when a get in it finds nothing.
  auto no_ns = k("get deploy web -n ns");
  CHECK(no_ns.rc == 1);
  CHECK_THAT(no_ns.output, Catch::Contains("Error from server (NotFound): namespaces \"ns\" not found"));
}

TEST_CASE("kubectl: the version dispatcher, client certificates, CSR approval, api-resources") {
  KUBECTL_OR_SKIP();
  SimOptions o;
  o.ready_delay_ms = 0;
  o.auth = emco::sim::AuthMode::client_cert;
  Fleet f(o);
  Kubectl k{kubectl, f.sim->kubeconfig_path("cluster-1"), f.dir.path};

  if (access("/usr/bin/kubectl", X_OK) == 0) {
    Kubectl dispatcher{"/usr/bin/kubectl", k.kubeconfig, f.dir.path};
    auto v = dispatcher("version -o json");
    INFO(v.output);
    CHECK(v.rc == 0);
    CHECK_THAT(v.output, Catch::Contains("\"gitVersion\": \"v1.32.4\""));
  } else {
    WARN("SKIPPED (part): no /usr/bin/kubectl dispatcher");
  }

  auto ns = k("get ns -o name");
  INFO(ns.output);
  CHECK(ns.rc == 0);
  CHECK_THAT(ns.output, Catch::Contains("namespace/default"));
  CHECK_THAT(ns.output, Catch::Contains("namespace/kube-system"));

  // Typed-client commands send protobuf bodies.
  auto create_ns = k("create namespace made");
  INFO(create_ns.output);
  CHECK(create_ns.rc == 0);
  auto create_cm = k("create configmap settings -n made --from-literal=a=b");
  INFO(create_cm.output);
  CHECK(create_cm.rc == 0);
  auto create_secret = k("create secret generic pw -n made --from-literal=p=q");
  INFO(create_secret.output);
  CHECK(create_secret.rc == 0);
  CHECK(f.sim->get("cluster-1", "v1", "Namespace", "", "made")["status"]["phase"] == "Active");
  CHECK(f.sim->get("cluster-1", "v1", "ConfigMap", "made", "settings")["data"] == json({{"a", "b"}}));
  json secret = f.sim->get("cluster-1", "v1", "Secret", "made", "pw");
  CHECK(secret["data"]["p"] == "cQ==");
  CHECK(secret["type"] == "Opaque");
  auto create_deploy = k("create deployment d --image=nginx:1.25 --port=8080 --replicas=0 -n made");
  INFO(create_deploy.output);
  CHECK(create_deploy.rc == 0);
  json d = f.sim->get("cluster-1", "apps/v1", "Deployment", "made", "d");
  REQUIRE(d.is_object());
  CHECK(d["spec"]["replicas"] == 0);  // a pointer field: zero is a value
  CHECK(d["metadata"]["labels"] == json({{"app", "d"}}));
  CHECK(d["spec"]["selector"] == json({{"matchLabels", {{"app", "d"}}}}));
  json c0 = d["spec"]["template"]["spec"]["containers"][0];
  CHECK(c0["name"] == "nginx");
  CHECK(c0["image"] == "nginx:1.25");
  CHECK(c0["ports"] == json::array({{{"containerPort", 8080}, {"protocol", "TCP"}}}));
  CHECK_FALSE(c0.contains("imagePullPolicy"));  // empty strings are not values
  auto create_job = k("create job j --image=busybox -n made -- echo hi");
  INFO(create_job.output);
  CHECK(create_job.rc == 0);
  CHECK(f.sim->get("cluster-1", "batch/v1", "Job", "made", "j")["spec"]["template"]["spec"]["containers"][0]["command"] ==
        json::array({"echo", "hi"}));
  auto create_cron = k("create cronjob cj --image=busybox --schedule='*/5 * * * *' -n made");
  INFO(create_cron.output);
  CHECK(create_cron.rc == 0);
  CHECK(f.sim->get("cluster-1", "batch/v1", "CronJob", "made", "cj")["spec"]["schedule"] == "*/5 * * * *");
  auto create_svc = k("create service clusterip s --tcp=80:8080 -n made");
  INFO(create_svc.output);
  CHECK(create_svc.rc == 0);
  json svc = f.sim->get("cluster-1", "v1", "Service", "made", "s");
  CHECK(svc["spec"]["ports"][0]["port"] == 80);
  CHECK(svc["spec"]["ports"][0]["targetPort"] == 8080);
  CHECK(svc["spec"]["selector"] == json({{"app", "s"}}));
  CHECK(k("create serviceaccount sa -n made").rc == 0);
  CHECK(f.sim->get("cluster-1", "v1", "ServiceAccount", "made", "sa").is_object());
  auto create_quota = k("create quota q --hard=pods=10,requests.cpu=2 -n made");
  INFO(create_quota.output);
  CHECK(create_quota.rc == 0);
  CHECK(f.sim->get("cluster-1", "v1", "ResourceQuota", "made", "q")["spec"]["hard"] ==
        json({{"pods", "10"}, {"requests.cpu", "2"}}));
  auto create_role = k("create role r --verb=get,list --resource=pods,deployments.apps -n made");
  INFO(create_role.output);
  CHECK(create_role.rc == 0);
  json rules = f.sim->get("cluster-1", "rbac.authorization.k8s.io/v1", "Role", "made", "r")["rules"];
  CHECK(rules == json::array({{{"verbs", {"get", "list"}}, {"apiGroups", {""}}, {"resources", {"pods"}}},
                              {{"verbs", {"get", "list"}}, {"apiGroups", {"apps"}}, {"resources", {"deployments"}}}}));
  auto create_rb = k("create rolebinding rb --role=r --user=bob --group=devs -n made");
  INFO(create_rb.output);
  CHECK(create_rb.rc == 0);
  json rb = f.sim->get("cluster-1", "rbac.authorization.k8s.io/v1", "RoleBinding", "made", "rb");
  CHECK(rb["roleRef"] == json({{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", "r"}}));
  CHECK(rb["subjects"].size() == 2);
  CHECK(k("create clusterrole cr --verb=get --non-resource-url=/metrics").rc == 0);
  CHECK(f.sim->get("cluster-1", "rbac.authorization.k8s.io/v1", "ClusterRole", "", "cr")["rules"][0]["nonResourceURLs"] ==
        json::array({"/metrics"}));
  CHECK(k("create clusterrolebinding crb --clusterrole=cr --user=bob").rc == 0);
  CHECK(f.sim->get("cluster-1", "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "crb")["subjects"][0]["name"] ==
        "bob");

  auto resources = k("api-resources --api-group=apps -o name");
  CHECK_THAT(resources.output, Catch::Contains("deployments.apps"));

  std::string key = f.dir.path + "/bob.key", csr = f.dir.path + "/bob.csr";
  REQUIRE(run("openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + key + " -out " +
              csr + " -subj '/CN=bob'")
              .rc == 0);
  std::string request = run("base64 -w0 " + csr).output;
  std::string file = f.dir.path + "/csr.yaml";
  write_file(file,
             "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata:\n  name: bob\nspec:\n"
             "  request: " + request + "\n  signerName: kubernetes.io/kube-apiserver-client\n  usages: [client auth]\n");
  auto created = k("apply --server-side -f " + file);
  INFO(created.output);
  CHECK(created.rc == 0);
  auto approve = k("certificate approve bob");
  INFO(approve.output);
  CHECK(approve.rc == 0);
  CHECK_THAT(approve.output, Catch::Contains("certificatesigningrequest.certificates.k8s.io/bob approved"));
  json stored = f.sim->get("cluster-1", "certificates.k8s.io/v1", "CertificateSigningRequest", "", "bob");
  CHECK(condition(stored, "Approved") == "True");
  auto cert = k("get csr bob -o jsonpath={.status.certificate}");
  CHECK(base64_decode(cert.output).rfind("-----BEGIN CERTIFICATE-----", 0) == 0);
}

TEST_CASE("kubectl: a tenant whose certificate came from an approved CSR is confined by RBAC") {
  KUBECTL_OR_SKIP();
  SimOptions o;
  o.ready_delay_ms = 0;
  o.finalize_delay_ms = 0;
  Fleet f(o);
  Kubectl admin{kubectl, f.sim->kubeconfig_path("cluster-1"), f.dir.path};
  REQUIRE(admin("create namespace ns1").rc == 0);
  REQUIRE(admin("create namespace ns2").rc == 0);

  // The user's side: a key and a CSR with CN (user) and O (group).
  std::string key = f.dir.path + "/alice.key", csr = f.dir.path + "/alice.csr";
  REQUIRE(run("openssl req -new -newkey rsa:2048 -nodes -keyout " + key + " -out " + csr +
              " -subj '/O=devs/CN=alice' 2>&1")
              .rc == 0);
  std::string csr_file = f.dir.path + "/csr.yaml";
  write_file(csr_file, "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata:\n  name: alice\n"
                       "spec:\n  request: " + run("base64 -w0 " + csr).output +
                           "\n  signerName: kubernetes.io/kube-apiserver-client\n  usages: [client auth]\n");
  REQUIRE(admin("apply --server-side -f " + csr_file).rc == 0);
  // The admin's side: approve; the cluster CA issues the certificate.
  auto approve = admin("certificate approve alice");
  INFO(approve.output);
  REQUIRE(approve.rc == 0);
  auto cert = admin("get csr alice -o jsonpath={.status.certificate}");
  REQUIRE(cert.rc == 0);
  REQUIRE(base64_decode(cert.output).rfind("-----BEGIN CERTIFICATE-----", 0) == 0);
  std::string tenant_kc = f.dir.path + "/tenant.yaml";
  write_file(tenant_kc, "apiVersion: v1\nkind: Config\nclusters:\n- name: c1\n  cluster:\n    server: " +
                            f.sim->server_url("cluster-1") + "\n    certificate-authority: " + f.sim->ca_path() +
                            "\nusers:\n- name: alice\n  user:\n    client-certificate-data: " + cert.output +
                            "\n    client-key-data: " + run("base64 -w0 " + key).output +
                            "\ncontexts:\n- name: alice@c1\n  context: {cluster: c1, user: alice, namespace: ns1}\n"
                            "current-context: alice@c1\n");
  Kubectl alice{kubectl, tenant_kc, f.dir.path};

  auto who = alice("auth whoami -o jsonpath={.status.userInfo.username}");
  INFO(who.output);
  CHECK(who.output == "alice");
  auto before = alice("auth can-i create deployments -n ns1");
  CHECK(before.rc == 1);
  CHECK(emco::trim(before.output) == "no");

  std::string rbac_file = f.dir.path + "/rbac.yaml";
  write_file(rbac_file, R"(apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: deployer, namespace: ns1}
rules:
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch, create, patch, update]
- apiGroups: [""]
  resources: [configmaps]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: deployer, namespace: ns1}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: deployer}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}
)");
  REQUIRE(admin("apply --server-side -f " + rbac_file).rc == 0);

  auto as_alice = admin("auth can-i create deployments -n ns1 --as alice");  // impersonation
  INFO(as_alice.output);
  CHECK(emco::trim(as_alice.output) == "yes");
  CHECK(emco::trim(admin("auth can-i create deployments -n ns2 --as alice").output) == "no");
  auto yes = alice("auth can-i create deployments -n ns1");
  INFO(yes.output);
  CHECK(yes.rc == 0);
  CHECK(emco::trim(yes.output) == "yes");
  auto other_ns = alice("auth can-i create deployments -n ns2");
  CHECK(other_ns.rc == 1);
  CHECK(emco::trim(other_ns.output) == "no");
  CHECK(emco::trim(alice("auth can-i delete deployments -n ns1").output) == "no");
  CHECK(emco::trim(alice("auth can-i list configmaps").output) == "yes");  // the context's namespace
  auto list = alice("auth can-i --list -n ns1");
  INFO(list.output);
  CHECK(list.rc == 0);
  CHECK_THAT(list.output, Catch::Contains("deployments.apps"));

  std::string app = f.dir.path + "/app.yaml";
  write_file(app, R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
)");
  auto allowed = alice("apply --server-side -f " + app);
  INFO(allowed.output);
  CHECK(allowed.rc == 0);
  CHECK_THAT(allowed.output, Catch::Contains("deployment.apps/web serverside-applied"));
  CHECK(f.sim->get("cluster-1", "apps/v1", "Deployment", "ns1", "web").is_object());
  auto denied_ns = alice("apply --server-side -n ns2 -f " + app);
  INFO(denied_ns.output);
  CHECK(denied_ns.rc == 1);
  CHECK_THAT(denied_ns.output,
             Catch::Contains("deployments.apps \"web\" is forbidden: User \"alice\" cannot patch resource "
                             "\"deployments\" in API group \"apps\" in the namespace \"ns2\""));
  CHECK(f.sim->get("cluster-1", "apps/v1", "Deployment", "ns2", "web").is_null());
  auto denied_create = alice("create configmap settings --from-literal=a=b");
  INFO(denied_create.output);
  CHECK(denied_create.rc == 1);
  CHECK_THAT(denied_create.output,
             Catch::Contains("configmaps is forbidden: User \"alice\" cannot create resource \"configmaps\" in API "
                             "group \"\" in the namespace \"ns1\""));
  CHECK(f.sim->get("cluster-1", "v1", "ConfigMap", "ns1", "settings").is_null());
  auto denied_delete = alice("delete deployment web");
  CHECK(denied_delete.rc == 1);
  CHECK_THAT(denied_delete.output, Catch::Contains("(Forbidden)"));
  CHECK(f.sim->get("cluster-1", "apps/v1", "Deployment", "ns1", "web").is_object());
  auto get = alice("get deploy web -o jsonpath={.metadata.name}");
  CHECK(get.rc == 0);
  CHECK(get.output == "web");
  auto get_ns = alice("get ns");
  CHECK(get_ns.rc == 1);
  CHECK_THAT(get_ns.output, Catch::Contains("cannot list resource \"namespaces\" in API group \"\" at the cluster scope"));
}

TEST_CASE("kubectl: escalation and bind checks refuse an impersonated user, aggregated roles grant the union") {
  KUBECTL_OR_SKIP();
  SimOptions o;
  o.ready_delay_ms = 0;
  o.finalize_delay_ms = 0;
  Fleet f(o);
  Kubectl admin{kubectl, f.sim->kubeconfig_path("cluster-1"), f.dir.path};
  REQUIRE(admin("create namespace ns1").rc == 0);
  REQUIRE(admin("create role manager -n ns1 --verb=create,get,list --resource=roles,rolebindings,configmaps").rc == 0);
  REQUIRE(admin("create rolebinding manager -n ns1 --role=manager --user=alice").rc == 0);

  // can-i's answer is its last line: kubectl before 1.32 warns first that
  // 'escalate' is not a verb it knows (the server does).
  auto can_i = [&admin](const std::string& args) {
    std::string out = emco::trim(admin("auth can-i " + args).output);
    return out.substr(out.find_last_of('\n') == std::string::npos ? 0 : out.find_last_of('\n') + 1);
  };
  CHECK(can_i("create roles -n ns1 --as alice") == "yes");
  CHECK(can_i("escalate roles -n ns1 --as alice") == "no");
  CHECK(can_i("bind roles -n ns1 --as alice") == "no");
  // What alice holds she may grant; more she may not.
  auto reader = admin("create role reader -n ns1 --verb=get,list --resource=configmaps --as alice");
  INFO(reader.output);
  CHECK(reader.rc == 0);
  auto peek = admin("create role peek -n ns1 --verb=get --resource=secrets,configmaps --as alice");
  CHECK(peek.rc == 1);
  CHECK(emco::trim(peek.output) ==
        "Error from server (Forbidden): roles.rbac.authorization.k8s.io \"peek\" is forbidden: user \"alice\" "
        "(groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n"
        "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}");
  CHECK(admin("get role peek -n ns1").rc == 1);
  auto bind = admin("create rolebinding admin-for-bob -n ns1 --clusterrole=admin --user=bob --as alice");
  CHECK(bind.rc == 1);
  CHECK_THAT(bind.output, Catch::Contains("error: failed to create rolebinding: rolebindings.rbac.authorization.k8s.io "
                                          "\"admin-for-bob\" is forbidden: user \"alice\" (groups=[\"system:authenticated\"]) "
                                          "is attempting to grant RBAC permissions not currently held:\n"));
  // The bind verb on that role lifts the check.
  REQUIRE(admin("create role binder -n ns1 --verb=bind --resource=clusterroles --resource-name=admin").rc == 0);
  REQUIRE(admin("create rolebinding binder -n ns1 --role=binder --user=alice").rc == 0);
  // (kubectl warns that clusterroles are not namespaced; the Role grants bind in ns1 only)
  CHECK_THAT(emco::trim(admin("auth can-i bind clusterroles/admin -n ns1 --as alice").output), Catch::EndsWith("\nyes"));
  auto bound = admin("create rolebinding admin-for-bob -n ns1 --clusterrole=admin --user=bob --as alice");
  INFO(bound.output);
  CHECK(bound.rc == 0);
  CHECK(emco::trim(admin("auth can-i delete secrets -n ns1 --as bob").output) == "yes");

  // Aggregation: a labelled ClusterRole's rules reach the aggregated one, and its users.
  REQUIRE(admin("create clusterrole monitoring --aggregation-rule=example.com/aggregate-to-monitoring=true").rc == 0);
  REQUIRE(admin("create clusterrolebinding monitoring --clusterrole=monitoring --user=carol").rc == 0);
  CHECK(emco::trim(admin("auth can-i list pods -A --as carol").output) == "no");
  REQUIRE(admin("create clusterrole pod-reader --verb=get,list,watch --resource=pods").rc == 0);
  REQUIRE(admin("label clusterrole pod-reader example.com/aggregate-to-monitoring=true").rc == 0);
  CHECK(emco::trim(admin("auth can-i list pods -A --as carol").output) == "yes");
  auto rules = admin("get clusterrole monitoring -o jsonpath={.rules[0].resources}");
  CHECK(rules.output == "[\"pods\"]");
  REQUIRE(admin("label clusterrole pod-reader example.com/aggregate-to-monitoring-").rc == 0);
  CHECK(emco::trim(admin("auth can-i list pods -A --as carol").output) == "no");
}
