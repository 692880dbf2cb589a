// Standard and privileged logical clouds on simulated clusters: exactly the
// objects of logical-clouds.md on every cluster, the user's credentials
// (a certificate the cluster signed for CN=alice, the cloud's key, the
// cluster's own CA), update adding and removing a cluster, terminate leaving
// nothing behind, and the lifecycle errors.

#include "world.hpp"

#include "core/appcontext/appcontext.hpp"
#include "core/lifecycle/lc_dcm.hpp"
#include "plugins/targets/kube/kube_client.hpp"
#include "plugins/targets/kube/kubeconfig.hpp"
#include "plugins/targets/kube/pem.hpp"

using namespace emco;
using namespace emco::lctest;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Checks the stored kubeconfig of `cluster` and returns a client speaking as the user.
std::unique_ptr<kube::KubeClient> user_client(World& w, const std::string& name) {
  auto kc = lifecycle::tenant_kubeconfig(*w.st, w.lc(), "p+" + name);
  REQUIRE(kc);
  auto config = kube::parse_kubeconfig(*kc, "user", "");
  CHECK(config.current_context == "alice@" + name);
  auto access = kube::resolve_access(config, "", name);
  CHECK(access.server == w.sim.server_url(name));
  CHECK(access.ns == "tenant-ns");
  CHECK(access.ca_pem == read_file(w.sim.ca_path()));
  CHECK(kube::inspect_certificates(access.client_cert_pem, "user certificate").subject.find("CN=alice") != std::string::npos);
  kube::check_key_matches(access.client_cert_pem, access.client_key_pem, "user certificate");
  CHECK(access.client_key_pem.find("BEGIN RSA PRIVATE KEY") != std::string::npos);
  return std::make_unique<kube::KubeClient>(access);
}

std::string error_of(const std::function<void()>& f, ErrorKind* kind = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (kind) *kind = e.kind();
    return e.message();
  }
  return "";
}

}  // namespace

TEST_CASE("a standard logical cloud across two clusters", "[logical_cloud][sim]") {
  World w(2);
  w.permit_namespace();
  w.quota();
  for (const auto& n : w.names) w.reference(n);

  auto r = w.op("instantiate");
  INFO((r.failures.empty() ? "" : r.failures.front()));
  REQUIRE(r.delivery == lifecycle::Delivery::done);
  CHECK(r.status == "Instantiated");
  for (const auto& n : w.names) {
    CHECK(w.objects(n) == standard_objects());
    auto ns = w.sim.get(n, "v1", "Namespace", "", "tenant-ns");
    CHECK(ns["metadata"]["labels"]["team"] == "blue");
    auto quota = w.sim.get(n, "v1", "ResourceQuota", "tenant-ns", "q1");
    CHECK(quota["spec"]["hard"] == json{{"pods", "10"}, {"configmaps", "20"}});
    auto binding = w.sim.get(n, "rbac.authorization.k8s.io/v1", "RoleBinding", "tenant-ns", "tenant-roleBinding0");
    CHECK(binding["subjects"] == json::parse(R"([{"kind":"User","name":"alice","apiGroup":"rbac.authorization.k8s.io"}])"));
    CHECK(binding["roleRef"]["name"] == "tenant-role0");
    auto csr = w.sim.get(n, "certificates.k8s.io/v1", "CertificateSigningRequest", "", "tenant-tenant-ns-user-csr");
    CHECK(csr["spec"]["signerName"] == "kubernetes.io/kube-apiserver-client");
    CHECK(csr["status"]["conditions"][0]["type"] == "Approved");
    CHECK(csr["status"]["conditions"][0]["message"] == "Approved for Logical Cloud authentication");
    CHECK_FALSE(csr["status"].value("certificate", "").empty());
  }
  CHECK(lifecycle::tenant_clusters(*w.st, w.lc()) == std::vector<std::string>{"p+" + w.names[0], "p+" + w.names[1]});

  // One key per cloud: both kubeconfigs carry the same key; each works on
  // its cluster within the namespace and nowhere else.
  auto key0 = kube::resolve_access(kube::parse_kubeconfig(*lifecycle::tenant_kubeconfig(*w.st, w.lc(), "p+" + w.names[0]), "a", ""));
  auto key1 = kube::resolve_access(kube::parse_kubeconfig(*lifecycle::tenant_kubeconfig(*w.st, w.lc(), "p+" + w.names[1]), "b", ""));
  CHECK(key0.client_key_pem == key1.client_key_pem);
  for (const auto& n : w.names) {
    auto client = user_client(w, n);
    json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "by-alice"}}}, {"data", {{"a", "b"}}}};
    client->apply(cm, "tenant-ns");
    CHECK(w.sim.get(n, "v1", "ConfigMap", "tenant-ns", "by-alice")["data"]["a"] == "b");
    try {
      client->apply(cm, "default");
      FAIL("alice may not write to namespace default");
    } catch (const kube::KubeError& e) {
      CHECK(e.category() == kube::KubeErrorCategory::forbidden);
    }
    client->remove({"", "v1", "ConfigMap"}, "tenant-ns", "by-alice");
  }

  // Instantiate twice, delete while instantiated.
  ErrorKind kind{};
  CHECK(error_of([&] { w.op("instantiate"); }, &kind) == "logical cloud 'proj/tenant' is already instantiated");
  CHECK(kind == ErrorKind::conflict);
  std::string del = error_of([&] { w.batch(manifest::Verb::remove, doc("projects/proj/logical-clouds", "metadata: {name: tenant}")); });
  CHECK(del.find("it is Instantiated") != std::string::npos);

  // Status: per cluster, every object Applied and credentials issued.
  auto s = lifecycle::lc::status(*w.st, w.lc());
  CHECK(s.state == "Instantiated");
  REQUIRE(s.clusters.size() == 2);
  for (const auto& c : s.clusters) {
    CHECK(c.credentials);
    CHECK(c.objects.size() == 5);
    for (const auto& o : c.objects) CHECK(o.status == "Applied");
  }

  // Terminate: nothing left, credentials and key gone; then delete works.
  auto t = w.op("terminate");
  REQUIRE(t.delivery == lifecycle::Delivery::done);
  for (const auto& n : w.names) CHECK(w.objects(n).empty());
  CHECK(lifecycle::tenant_clusters(*w.st, w.lc()).empty());
  CHECK_FALSE(lifecycle::tenant_key(*w.st, w.lc()));
  CHECK(error_of([&] { w.op("terminate"); }, &kind) == "logical cloud 'proj/tenant' is not instantiated (state Terminated)");
  CHECK(kind == ErrorKind::conflict);

  // Instantiate again after terminate: a fresh key and certificates.
  auto again = w.op("instantiate");
  REQUIRE(again.delivery == lifecycle::Delivery::done);
  auto key2 = kube::resolve_access(kube::parse_kubeconfig(*lifecycle::tenant_kubeconfig(*w.st, w.lc(), "p+" + w.names[0]), "c", ""));
  CHECK(key2.client_key_pem != key0.client_key_pem);
  user_client(w, w.names[0]);
  REQUIRE(w.op("terminate").delivery == lifecycle::Delivery::done);

  // Deleting the terminated cloud takes its AppContexts and issued credentials with it.
  REQUIRE_FALSE(appcontext::list(*w.st, w.lc()).empty());
  w.st->write([&] { lifecycle::before_delete(*w.st, resource::kind("logicalCloud"), *w.st->get(w.lc())); });
  CHECK(appcontext::list(*w.st, w.lc()).empty());
  CHECK(lifecycle::tenant_clusters(*w.st, w.lc()).empty());
  CHECK_FALSE(lifecycle::tenant_key(*w.st, w.lc()));
}

TEST_CASE("a privileged logical cloud gets cluster roles and roles in other namespaces", "[logical_cloud][sim]") {
  World w(2);
  w.permit_namespace();
  w.permit_privileged();
  for (const auto& n : w.names) w.reference(n);
  auto r = w.op("instantiate");
  INFO((r.failures.empty() ? "" : r.failures.front()));
  REQUIRE(r.delivery == lifecycle::Delivery::done);
  // Permissions in listing order: perm-cluster (0), perm-kube (1), perm-ns (2).
  const std::set<std::string> expected = {"Namespace /tenant-ns",
                                          "CertificateSigningRequest /tenant-tenant-ns-user-csr",
                                          "ClusterRole /tenant-clusterRole0",
                                          "ClusterRoleBinding /tenant-clusterRoleBinding0",
                                          "Role kube-system/tenant-role1",
                                          "RoleBinding kube-system/tenant-roleBinding1",
                                          "Role tenant-ns/tenant-role2",
                                          "RoleBinding tenant-ns/tenant-roleBinding2"};
  for (const auto& n : w.names) {
    CHECK(w.objects(n) == expected);
    auto cr = w.sim.get(n, "rbac.authorization.k8s.io/v1", "ClusterRole", "", "tenant-clusterRole0");
    CHECK(cr["rules"] == json::parse(R"([{"apiGroups":[""],"resources":["nodes","namespaces"],"verbs":["get","list"]}])"));
    // The cluster-wide grant works with the issued credentials.
    auto client = user_client(w, n);
    CHECK_NOTHROW(client->list({"", "v1", "Namespace"}, ""));
    CHECK(client->get({"", "v1", "ConfigMap"}, "kube-system", "absent").is_null());
  }
  REQUIRE(w.op("terminate").delivery == lifecycle::Delivery::done);
  for (const auto& n : w.names) CHECK(w.objects(n).empty());
}

TEST_CASE("update adds a cluster, then removes it, touching only that cluster", "[logical_cloud][sim]") {
  World w(2);
  const std::string a = w.names[0], b = w.names[1];
  w.permit_namespace();
  w.quota();
  w.reference(a);
  REQUIRE(w.op("instantiate").delivery == lifecycle::Delivery::done);
  CHECK(w.objects(a) == standard_objects());
  CHECK(w.objects(b).empty());
  auto cred_a = *lifecycle::tenant_kubeconfig(*w.st, w.lc(), "p+" + a);

  // No change: nothing delivered.
  auto same = w.op("update");
  CHECK(same.message == "unchanged on clusters");

  w.reference(b);
  uint64_t before_a = w.sim.requests_served(a);
  auto u = w.op("update");
  INFO((u.failures.empty() ? "" : u.failures.front()));
  REQUIRE(u.delivery == lifecycle::Delivery::done);
  CHECK(u.message == "updated (1 cluster changed)");
  CHECK(w.sim.requests_served(a) == before_a);  // cluster a untouched
  CHECK(w.objects(a) == standard_objects());
  CHECK(w.objects(b) == standard_objects());
  CHECK(*lifecycle::tenant_kubeconfig(*w.st, w.lc(), "p+" + a) == cred_a);  // still valid, not reissued
  user_client(w, b);

  // Removing the reference takes effect at update.
  w.batch(manifest::Verb::remove,
          doc("projects/proj/logical-clouds/tenant/cluster-references", "metadata: {name: " + b + "}"));
  CHECK(w.objects(b) == standard_objects());
  before_a = w.sim.requests_served(a);
  auto d = w.op("update");
  REQUIRE(d.delivery == lifecycle::Delivery::done);
  CHECK(w.sim.requests_served(a) == before_a);
  CHECK(w.objects(b).empty());
  CHECK(w.objects(a) == standard_objects());
  CHECK(lifecycle::tenant_clusters(*w.st, w.lc()) == std::vector<std::string>{"p+" + a});

  // A quota change reaches the cloud's clusters.
  w.apply(doc("projects/proj/logical-clouds/tenant/cluster-quotas", "metadata: {name: q1}\nspec: {pods: '5'}"));
  REQUIRE(w.op("update").delivery == lifecycle::Delivery::done);
  CHECK(w.sim.get(a, "v1", "ResourceQuota", "tenant-ns", "q1")["spec"]["hard"] == json{{"pods", "5"}});

  auto history = json::parse(w.st->get(w.lc())->state_info)["actions"];
  CHECK(history.back()["state"] == "Instantiated");
  REQUIRE(w.op("terminate").delivery == lifecycle::Delivery::done);
  for (const auto& n : w.names) CHECK(w.objects(n).empty());
}

TEST_CASE("level-1 instantiate says what the cloud is missing and changes nothing", "[logical_cloud]") {
  World w(1);
  ErrorKind kind{};
  std::string before = w.st->dump();
  CHECK(error_of([&] { w.op("instantiate"); }, &kind) == "logical cloud 'proj/tenant' has no cluster references");
  CHECK(kind == ErrorKind::conflict);
  w.reference(w.names[0]);
  before = w.st->dump();
  CHECK(error_of([&] { w.op("instantiate"); }) == "logical cloud 'proj/tenant' has no user permission for its namespace 'tenant-ns'");
  CHECK(w.st->dump() == before);
  CHECK(w.objects(w.names[0]).empty());
  CHECK(w.op("update").message == "not instantiated (unchanged)");
  CHECK(error_of([&] { w.op("terminate"); }).find("is not instantiated") != std::string::npos);
}

TEST_CASE("the objects of a level-1 cloud on GitOps clusters", "[logical_cloud]") {
  lifecycle::lc::Cloud c;
  c.key = World::lc();
  c.project = "proj";
  c.name = "tenant";
  c.level = "1";
  c.ns = "tenant-ns";
  c.user = "alice";
  c.permissions = {{"perm-ns", "tenant-ns", {""}, {"configmaps"}, {"get"}}};
  c.clusters = {{"flux", "p+flux", "fluxcd"}, {"anthos", "p+anthos", "anthos"}, {"direct", "p+direct", ""}};
  auto ctx = lifecycle::lc::build_context(c, "CSR", nullptr, "2026-01-01T00:00:00Z");
  CHECK(ctx.meta.at("LogicalCloudNamespace") == "tenant-ns");
  CHECK(ctx.meta.at("Level") == "0");
  CHECK(ctx.meta.at("LogicalCloudLevel") == "1");
  const auto& app = ctx.apps.at(0);
  auto names = [&](const std::string& cluster) {
    std::vector<std::string> v;
    for (const auto& r : app.find_cluster(cluster)->resources) v.push_back(r.name);
    return v;
  };
  CHECK(names("p+direct") == std::vector<std::string>{"tenant-ns+Namespace", "tenant-tenant-ns-user-csr+CertificateSigningRequest",
                                                      "tenant-role0+Role", "tenant-roleBinding0+RoleBinding"});
  CHECK(names("p+flux") == std::vector<std::string>{"tenant-ns+Namespace", "tenant-ns-sa+ServiceAccount", "tenant-role0+Role",
                                                    "tenant-roleBinding0+RoleBinding"});
  CHECK(names("p+anthos") == std::vector<std::string>{"tenant-ns+Namespace", "tenant-role0+Role", "tenant-roleBinding0+RoleBinding"});
  auto subjects = [&](const std::string& cluster) {
    return json::parse(app.find_cluster(cluster)->find("tenant-roleBinding0+RoleBinding")->text())["subjects"];
  };
  CHECK(subjects("p+flux")[1] == json{{"kind", "ServiceAccount"}, {"name", "tenant-sa"}, {"namespace", "tenant-ns"}});
  CHECK(subjects("p+anthos")[1] == json{{"kind", "ServiceAccount"},
                                        {"name", "ns-reconciler-tenant-ns-repo-sync-tenant-16"},
                                        {"namespace", "config-management-system"}});
  CHECK(subjects("p+direct").size() == 1);

  // Update keeps an existing cluster's CSR manifest (its certificate stays valid).
  auto next = lifecycle::lc::build_context(c, "OTHER", &ctx, "2026-01-02T00:00:00Z");
  const std::string csr = "tenant-tenant-ns-user-csr+CertificateSigningRequest";
  CHECK(next.apps[0].find_cluster("p+direct")->find(csr)->hash() == app.find_cluster("p+direct")->find(csr)->hash());
}
