// RBAC in the simulator: a user whose certificate the cluster issued through
// an approved CertificateSigningRequest can do only what the cluster's Roles,
// ClusterRoles and bindings grant; the admin kubeconfigs stay all-powerful.

#include <catch2/catch.hpp>

#include "helpers.hpp"

using nlohmann::json;
using namespace simtest;
using emco::sim::SimOptions;

namespace {

SimOptions fast() {
  SimOptions o;
  o.ready_delay_ms = 0;
  o.finalize_delay_ms = 0;
  return o;
}

json ns_obj(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
}

json cm(const std::string& ns, const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"data", {{"k", "v"}}}};
}

json deployment(const std::string& ns, const std::string& name) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec",
           {{"replicas", 1},
            {"selector", {{"matchLabels", {{"app", name}}}}},
            {"template",
             {{"metadata", {{"labels", {{"app", name}}}}},
              {"spec", {{"containers", {{{"name", name}, {"image", "nginx"}}}}}}}}}}};
}

json role(const std::string& kind, const std::string& ns, const std::string& name, json rules) {
  json meta = {{"name", name}};
  if (!ns.empty()) meta["namespace"] = ns;
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"}, {"kind", kind}, {"metadata", meta}, {"rules", rules}};
}

json binding(const std::string& kind, const std::string& ns, const std::string& name, const std::string& role_kind,
             const std::string& role_name, json subjects) {
  json meta = {{"name", name}};
  if (!ns.empty()) meta["namespace"] = ns;
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", kind},
          {"metadata", meta},
          {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", role_kind}, {"name", role_name}}},
          {"subjects", subjects}};
}

json user(const std::string& name) {
  return json::array({{{"kind", "User"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", name}}});
}

// A key and CSR made with the openssl tool, the CSR approved by the admin,
// the certificate the cluster issued: an HTTP client authenticating as
// CN=`name`, O=`group`.
Http tenant(const Fleet& f, const std::string& cluster, const std::string& name, const std::string& group) {
  Http admin = f.client(cluster);
  std::string key = f.dir.path + "/" + name + ".key", csr = f.dir.path + "/" + name + ".csr";
  auto gen = run("openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + key +
                 " -out " + csr + " -subj '/O=" + group + "/CN=" + name + "' 2>&1");
  REQUIRE(gen.rc == 0);
  json obj = {{"apiVersion", "certificates.k8s.io/v1"},
              {"kind", "CertificateSigningRequest"},
              {"metadata", {{"name", name}}},
              {"spec",
               {{"request", run("base64 -w0 " + csr).output},
                {"signerName", "kubernetes.io/kube-apiserver-client"},
                {"usages", {"client auth"}}}}};
  REQUIRE(admin.request("POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", obj.dump()).status == 201);
  json current = admin.get("/apis/certificates.k8s.io/v1/certificatesigningrequests/" + name).json();
  current["status"]["conditions"] = {{{"type", "Approved"}, {"status", "True"}, {"reason", "Test"}, {"message", "ok"}}};
  auto approved =
      admin.request("PUT", "/apis/certificates.k8s.io/v1/certificatesigningrequests/" + name + "/approval",
                    current.dump());
  REQUIRE(approved.status == 200);
  std::string cert = f.dir.path + "/" + name + ".crt";
  write_file(cert, base64_decode(approved.json()["status"]["certificate"]));
  return Http(f.sim->server_url(cluster), f.sim->ca_path(), {"", cert, key});
}

bool review(const Http& who, const json& attributes, std::string* reason = nullptr) {
  json body = {{"apiVersion", "authorization.k8s.io/v1"},
               {"kind", "SelfSubjectAccessReview"},
               {"spec", attributes}};
  auto r = who.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body.dump());
  REQUIRE(r.status == 201);
  if (reason) *reason = r.json()["status"].value("reason", "");
  return r.json()["status"]["allowed"].get<bool>();
}

json can(const std::string& verb, const std::string& group, const std::string& resource, const std::string& ns) {
  return {{"resourceAttributes", {{"verb", verb}, {"group", group}, {"resource", resource}, {"namespace", ns}}}};
}

}  // namespace

TEST_CASE("RBAC: a CSR-issued user gets only what Roles and bindings grant") {
  Fleet f(fast());
  Http admin = f.client("cluster-1");
  for (const char* n : {"ns1", "ns2"}) REQUIRE(admin.apply(std::string("/api/v1/namespaces/") + n, ns_obj(n)).status == 201);
  Http alice = tenant(f, "cluster-1", "alice", "devs");

  // Authenticated, but nothing granted yet: discovery, OpenAPI and /version
  // are readable (system:discovery), resources and other paths are not.
  CHECK(alice.get("/version").status == 200);
  CHECK(alice.get("/api").status == 200);
  CHECK(alice.get("/apis").status == 200);
  CHECK(alice.get("/apis/apps/v1").status == 200);
  CHECK(alice.get("/openapi/v3").status == 200);
  auto list = alice.get("/api/v1/namespaces/ns1/configmaps");
  CHECK(list.status == 403);
  CHECK(list.json()["reason"] == "Forbidden");
  CHECK(list.json()["kind"] == "Status");
  CHECK(list.json()["message"] ==
        "configmaps is forbidden: User \"alice\" cannot list resource \"configmaps\" in API group \"\" in the "
        "namespace \"ns1\"");
  auto metrics = alice.get("/metrics");
  CHECK(metrics.status == 403);
  CHECK(metrics.json()["message"] == "forbidden: User \"alice\" cannot get path \"/metrics\"");
  auto nss = alice.get("/api/v1/namespaces");
  CHECK(nss.status == 403);
  CHECK(nss.json()["message"] ==
        "namespaces is forbidden: User \"alice\" cannot list resource \"namespaces\" in API group \"\" at the "
        "cluster scope");

  // A Role in ns1 bound to the user.
  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/roles/deployer",
                      role("Role", "ns1", "deployer",
                           {{{"apiGroups", {"apps"}}, {"resources", {"deployments"}},
                             {"verbs", {"get", "list", "create", "patch"}}},
                            {{"apiGroups", {""}}, {"resources", {"configmaps"}}, {"verbs", {"*"}}}}))
              .status == 201);
  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/rolebindings/deployer",
                      binding("RoleBinding", "ns1", "deployer", "Role", "deployer", user("alice")))
              .status == 201);
  CHECK(alice.apply("/apis/apps/v1/namespaces/ns1/deployments/web", deployment("ns1", "web")).status == 201);
  CHECK(alice.apply("/api/v1/namespaces/ns1/configmaps/c", cm("ns1", "c")).status == 201);
  CHECK(alice.get("/api/v1/namespaces/ns1/configmaps").status == 200);
  CHECK(alice.request("DELETE", "/api/v1/namespaces/ns1/configmaps/c").status == 200);
  CHECK(f.sim->get("cluster-1", "apps/v1", "Deployment", "ns1", "web")["metadata"]["managedFields"][0]["manager"] ==
        "test");
  // Not granted: delete, another namespace, a subresource.
  auto del = alice.request("DELETE", "/apis/apps/v1/namespaces/ns1/deployments/web");
  CHECK(del.status == 403);
  CHECK(del.json()["message"] ==
        "deployments.apps \"web\" is forbidden: User \"alice\" cannot delete resource \"deployments\" in API group "
        "\"apps\" in the namespace \"ns1\"");
  CHECK(del.json()["details"] == json({{"name", "web"}, {"group", "apps"}, {"kind", "deployments"}}));
  auto other = alice.apply("/apis/apps/v1/namespaces/ns2/deployments/web", deployment("ns2", "web"));
  CHECK(other.status == 403);
  CHECK(other.json()["message"] ==
        "deployments.apps \"web\" is forbidden: User \"alice\" cannot patch resource \"deployments\" in API group "
        "\"apps\" in the namespace \"ns2\"");
  CHECK(f.sim->get("cluster-1", "apps/v1", "Deployment", "ns2", "web").is_null());
  auto scale = alice.request("PATCH", "/apis/apps/v1/namespaces/ns1/deployments/web/scale",
                             R"({"spec":{"replicas":3}})", "application/merge-patch+json");
  CHECK(scale.status == 403);
  CHECK(scale.json()["message"] ==
        "deployments.apps \"web\" is forbidden: User \"alice\" cannot patch resource \"deployments/scale\" in API "
        "group \"apps\" in the namespace \"ns1\"");
  auto post = alice.request("POST", "/api/v1/namespaces/ns1/secrets",
                            R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}})");
  CHECK(post.status == 403);
  CHECK(post.json()["message"] ==
        "secrets is forbidden: User \"alice\" cannot create resource \"secrets\" in API group \"\" in the namespace "
        "\"ns1\"");
  CHECK_FALSE(post.json()["details"].contains("name"));

  // "*/scale" grants the subresource of every resource.
  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/roles/scaler",
                      role("Role", "ns1", "scaler",
                           {{{"apiGroups", {"apps"}}, {"resources", {"*/scale"}}, {"verbs", {"patch", "get"}}}}))
              .status == 201);
  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/rolebindings/scaler",
                      binding("RoleBinding", "ns1", "scaler", "Role", "scaler", user("alice")))
              .status == 201);
  CHECK(alice.request("PATCH", "/apis/apps/v1/namespaces/ns1/deployments/web/scale", R"({"spec":{"replicas":3}})",
                      "application/merge-patch+json")
            .status == 200);
  CHECK(f.sim->get("cluster-1", "apps/v1", "Deployment", "ns1", "web")["spec"]["replicas"] == 3);

  // The admin's token is still all-powerful.
  CHECK(admin.request("DELETE", "/apis/apps/v1/namespaces/ns1/deployments/web").status == 200);
}

TEST_CASE("RBAC: apply that creates needs create as well as patch, resourceNames, groups, cluster roles") {
  Fleet f(fast());
  Http admin = f.client("cluster-1");
  for (const char* n : {"ns1", "ns2"}) REQUIRE(admin.apply(std::string("/api/v1/namespaces/") + n, ns_obj(n)).status == 201);
  REQUIRE(admin.apply("/api/v1/namespaces/ns1/configmaps/open", cm("ns1", "open")).status == 201);
  REQUIRE(admin.apply("/api/v1/namespaces/ns1/configmaps/closed", cm("ns1", "closed")).status == 201);
  Http alice = tenant(f, "cluster-1", "alice", "devs");

  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/roles/patcher",
                      role("Role", "ns1", "patcher",
                           {{{"apiGroups", {"apps"}}, {"resources", {"deployments"}}, {"verbs", {"patch"}}},
                            {{"apiGroups", {""}},
                             {"resources", {"configmaps"}},
                             {"resourceNames", {"open"}},
                             {"verbs", {"get", "patch"}}}}))
              .status == 201);
  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/rolebindings/patcher",
                      binding("RoleBinding", "ns1", "patcher", "Role", "patcher", user("alice")))
              .status == 201);
  // Server-side apply of a new object is a create too, as on a real server.
  auto created = alice.apply("/apis/apps/v1/namespaces/ns1/deployments/web", deployment("ns1", "web"));
  CHECK(created.status == 403);
  CHECK(created.json()["message"] ==
        "deployments.apps \"web\" is forbidden: User \"alice\" cannot create resource \"deployments\" in API group "
        "\"apps\" in the namespace \"ns1\"");
  REQUIRE(admin.apply("/apis/apps/v1/namespaces/ns1/deployments/web", deployment("ns1", "web")).status == 201);
  CHECK(alice.apply("/apis/apps/v1/namespaces/ns1/deployments/web", deployment("ns1", "web"), "alice").status == 200);

  // resourceNames: only the named object, and never a list.
  CHECK(alice.get("/api/v1/namespaces/ns1/configmaps/open").status == 200);
  CHECK(alice.get("/api/v1/namespaces/ns1/configmaps/closed").status == 403);
  CHECK(alice.get("/api/v1/namespaces/ns1/configmaps").status == 403);

  // A Group subject and a RoleBinding to a built-in ClusterRole (view).
  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/namespaces/ns2/rolebindings/devs-view",
                      binding("RoleBinding", "ns2", "devs-view", "ClusterRole", "view",
                              {{{"kind", "Group"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", "devs"}}}))
              .status == 201);
  CHECK(alice.get("/apis/apps/v1/namespaces/ns2/deployments").status == 200);
  CHECK(alice.get("/api/v1/namespaces/ns2/secrets").status == 403);  // view does not read secrets
  CHECK(alice.apply("/api/v1/namespaces/ns2/configmaps/x", cm("ns2", "x")).status == 403);
  CHECK(alice.get("/apis/apps/v1/namespaces/ns1/deployments").status == 403);  // the binding is ns2's only

  // A stored ClusterRole through a ClusterRoleBinding: cluster-scoped
  // resources, every namespace, and non-resource URLs.
  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/clusterroles/ns-reader",
                      role("ClusterRole", "", "ns-reader",
                           {{{"apiGroups", {""}}, {"resources", {"namespaces", "secrets"}}, {"verbs", {"get", "list"}}},
                            {{"nonResourceURLs", {"/metrics", "/logs/*"}}, {"verbs", {"get"}}}}))
              .status == 201);
  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/alice-ns-reader",
                      binding("ClusterRoleBinding", "", "alice-ns-reader", "ClusterRole", "ns-reader", user("alice")))
              .status == 201);
  CHECK(alice.get("/api/v1/namespaces").status == 200);
  CHECK(alice.get("/api/v1/namespaces/ns2/secrets").status == 200);
  CHECK(alice.get("/metrics").status == 404);  // allowed, but the simulator serves no such path
  CHECK(alice.get("/logs/x").status == 404);
  CHECK(alice.request("DELETE", "/api/v1/namespaces/ns2").status == 403);

  // Another user is not covered by alice's bindings.
  Http bob = tenant(f, "cluster-1", "bob", "ops");
  CHECK(bob.get("/api/v1/namespaces").status == 403);
  CHECK(bob.get("/apis/apps/v1/namespaces/ns2/deployments").status == 403);

  // Removing the binding removes the permission at once.
  REQUIRE(admin.request("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/alice-ns-reader").status ==
          200);
  CHECK(alice.get("/api/v1/namespaces").status == 403);
}

TEST_CASE("RBAC: access reviews answer for the caller, and approving a CSR needs approve on its signer") {
  Fleet f(fast());
  Http admin = f.client("cluster-1");
  REQUIRE(admin.apply("/api/v1/namespaces/ns1", ns_obj("ns1")).status == 201);
  Http alice = tenant(f, "cluster-1", "alice", "devs");
  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/roles/r",
                      role("Role", "ns1", "r",
                           {{{"apiGroups", {"apps"}}, {"resources", {"deployments"}}, {"verbs", {"create", "delete"}}}}))
              .status == 201);
  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/rolebindings/rb",
                      binding("RoleBinding", "ns1", "rb", "Role", "r", user("alice")))
              .status == 201);

  std::string reason;
  CHECK(review(alice, can("create", "apps", "deployments", "ns1"), &reason));
  CHECK(reason == "RBAC: allowed by RoleBinding \"rb/ns1\" of Role \"r\" to User \"alice\"");
  CHECK_FALSE(review(alice, can("create", "apps", "deployments", "ns2")));
  CHECK_FALSE(review(alice, can("create", "", "configmaps", "ns1")));
  CHECK(review(alice, {{"nonResourceAttributes", {{"path", "/apis"}, {"verb", "get"}}}}));
  CHECK_FALSE(review(alice, {{"nonResourceAttributes", {{"path", "/metrics"}, {"verb", "get"}}}}));
  CHECK(review(admin, can("create", "", "configmaps", "ns1")));

  auto rules = alice.request("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                             R"({"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview",
                                 "spec":{"namespace":"ns1"}})");
  REQUIRE(rules.status == 201);
  json answer = rules.json();
  bool found = false;
  for (const auto& r : answer["status"]["resourceRules"])
    if (r["resources"] == json::array({"deployments"}) && r["verbs"] == json::array({"create", "delete"})) found = true;
  CHECK(found);
  CHECK(rules.json()["status"]["incomplete"] == false);

  // SubjectAccessReview about someone else needs its own permission.
  auto sar = alice.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                           R"({"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview",
                               "spec":{"user":"alice","resourceAttributes":{"verb":"get","resource":"pods"}}})");
  CHECK(sar.status == 403);
  auto sar_admin = admin.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                                 R"({"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview",
                                     "spec":{"user":"alice","resourceAttributes":{"namespace":"ns1","verb":"delete",
                                     "group":"apps","resource":"deployments"}}})");
  REQUIRE(sar_admin.status == 201);
  CHECK(sar_admin.json()["status"]["allowed"] == true);

  // Alice may update CSRs' approval but not approve for the signer...
  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/clusterroles/csr",
                      role("ClusterRole", "", "csr",
                           {{{"apiGroups", {"certificates.k8s.io"}},
                             {"resources", {"certificatesigningrequests", "certificatesigningrequests/approval"}},
                             {"verbs", {"get", "create", "update"}}}}))
              .status == 201);
  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/csr",
                      binding("ClusterRoleBinding", "", "csr", "ClusterRole", "csr", user("alice")))
              .status == 201);
  std::string key = f.dir.path + "/m.key", csr = f.dir.path + "/m.csr";
  REQUIRE(run("openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + key + " -out " +
              csr + " -subj '/CN=mallory' 2>&1")
              .rc == 0);
  json obj = {{"apiVersion", "certificates.k8s.io/v1"},
              {"kind", "CertificateSigningRequest"},
              {"metadata", {{"name", "mallory"}}},
              {"spec",
               {{"request", run("base64 -w0 " + csr).output},
                {"signerName", "kubernetes.io/kube-apiserver-client"},
                {"usages", {"client auth"}}}}};
  REQUIRE(alice.request("POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", obj.dump()).status == 201);
  json current = alice.get("/apis/certificates.k8s.io/v1/certificatesigningrequests/mallory").json();
  current["status"]["conditions"] = {{{"type", "Approved"}, {"status", "True"}, {"reason", "Me"}, {"message", "ok"}}};
  auto approve = alice.request("PUT", "/apis/certificates.k8s.io/v1/certificatesigningrequests/mallory/approval",
                               current.dump());
  CHECK(approve.status == 403);
  CHECK(approve.json()["message"] ==
        "certificatesigningrequests.certificates.k8s.io \"mallory\" is forbidden: user not permitted to approve "
        "requests with signerName \"kubernetes.io/kube-apiserver-client\"");
  // ... until granted approve on the signer's domain.
  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/clusterroles/signer",
                      role("ClusterRole", "", "signer",
                           {{{"apiGroups", {"certificates.k8s.io"}},
                             {"resources", {"signers"}},
                             {"resourceNames", {"kubernetes.io/*"}},
                             {"verbs", {"approve"}}}}))
              .status == 201);
  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/signer",
                      binding("ClusterRoleBinding", "", "signer", "ClusterRole", "signer", user("alice")))
              .status == 201);
  auto approved = alice.request("PUT", "/apis/certificates.k8s.io/v1/certificatesigningrequests/mallory/approval",
                                current.dump());
  CHECK(approved.status == 200);
  CHECK(approved.json()["status"].contains("certificate"));
}

TEST_CASE("RBAC: unauthenticated requests reach only the public-info paths") {
  Fleet f(fast());
  Http anonymous(f.sim->server_url("cluster-1"), f.sim->ca_path(), {});
  CHECK(anonymous.get("/version").status == 200);
  CHECK(anonymous.get("/healthz").status == 200);
  CHECK(anonymous.get("/apis").status == 401);
  CHECK(anonymous.get("/api/v1/namespaces").status == 401);
  Http wrong(f.sim->server_url("cluster-1"), f.sim->ca_path(), {"not-the-token", "", ""});
  CHECK(wrong.get("/api/v1/namespaces").status == 401);
  CHECK(wrong.get("/version").status == 200);
}

TEST_CASE("RBAC: impersonation acts as another user, if allowed to impersonate") {
  Fleet f(fast());
  Http admin = f.client("cluster-1");
  REQUIRE(admin.apply("/api/v1/namespaces/ns1", ns_obj("ns1")).status == 201);
  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/roles/r",
                      role("Role", "ns1", "r", {{{"apiGroups", {""}}, {"resources", {"configmaps"}}, {"verbs", {"list"}}}}))
              .status == 201);
  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/rolebindings/r",
                      binding("RoleBinding", "ns1", "r", "Role", "r",
                              {{{"kind", "Group"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", "devs"}}}))
              .status == 201);
  // The admin acting as alice gets alice's permissions, groups included.
  auto as_alice = admin.request("GET", "/api/v1/namespaces/ns1/secrets", {}, {}, {"Impersonate-User: alice"});
  CHECK(as_alice.status == 403);
  CHECK(as_alice.json()["message"] ==
        "secrets is forbidden: User \"alice\" cannot list resource \"secrets\" in API group \"\" in the namespace "
        "\"ns1\"");
  CHECK(admin.request("GET", "/api/v1/namespaces/ns1/configmaps", {}, {}, {"Impersonate-User: alice"}).status == 403);
  CHECK(admin.request("GET", "/api/v1/namespaces/ns1/configmaps", {}, {},
                      {"Impersonate-User: alice", "Impersonate-Group: devs"})
            .status == 200);
  // A user without the impersonate verb cannot.
  Http bob = tenant(f, "cluster-1", "bob", "ops");
  auto denied = bob.request("GET", "/api/v1/namespaces/ns1/configmaps", {}, {}, {"Impersonate-User: alice"});
  CHECK(denied.status == 403);
  CHECK(denied.json()["message"] ==
        "users \"alice\" is forbidden: User \"bob\" cannot impersonate resource \"users\" in API group \"\" at the "
        "cluster scope");
}

TEST_CASE("RBAC: an aggregated ClusterRole holds the union of the labelled roles' rules, kept current") {
  Fleet f(fast());
  Http admin = f.client("cluster-1");
  const std::string crs = "/apis/rbac.authorization.k8s.io/v1/clusterroles/";
  json agg = role("ClusterRole", "", "monitoring", json::array());
  agg["aggregationRule"] = {{"clusterRoleSelectors",
                             {{{"matchLabels", {{"rbac.example.com/aggregate-to-monitoring", "true"}}}},
                              {{"matchExpressions", {{{"key", "tier"}, {"operator", "In"}, {"values", {"ops"}}}}}}}}};
  REQUIRE(admin.apply(crs + "monitoring", agg).status == 201);
  CHECK(admin.get(crs + "monitoring").json()["rules"] == json::array());
  json pods = role("ClusterRole", "", "pods-reader",
                   {{{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"get", "list"}}}});
  pods["metadata"]["labels"] = {{"rbac.example.com/aggregate-to-monitoring", "true"}};
  REQUIRE(admin.apply(crs + "pods-reader", pods).status == 201);
  json cms = role("ClusterRole", "", "cm-reader",
                  {{{"apiGroups", {""}}, {"resources", {"configmaps"}}, {"verbs", {"get"}}},
                   {{"apiGroups", {""}}, {"resources", {"pods"}}, {"verbs", {"get", "list"}}}});
  cms["metadata"]["labels"] = {{"tier", "ops"}};
  REQUIRE(admin.apply(crs + "cm-reader", cms).status == 201);
  REQUIRE(admin.apply(crs + "unrelated", role("ClusterRole", "", "unrelated",
                                              {{{"apiGroups", {""}}, {"resources", {"secrets"}}, {"verbs", {"get"}}}}))
              .status == 201);
  // Selectors in order, each distinct rule once.
  json rules = admin.get(crs + "monitoring").json()["rules"];
  CHECK(rules == json::parse(R"([{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]},
                                 {"apiGroups":[""],"resources":["configmaps"],"verbs":["get"]}])"));

  // A user bound to the aggregated role gets the union.
  REQUIRE(admin.apply("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/mon",
                      binding("ClusterRoleBinding", "", "mon", "ClusterRole", "monitoring", user("alice")))
              .status == 201);
  Http alice = tenant(f, "cluster-1", "alice", "devs");
  CHECK(alice.get("/api/v1/namespaces/default/pods").status == 200);
  CHECK(alice.get("/api/v1/namespaces/default/configmaps/x").status == 404);
  CHECK(alice.get("/api/v1/namespaces/default/secrets/x").status == 403);

  // A labelled role that changes, loses its label or goes away changes the aggregate.
  cms["rules"] = {{{"apiGroups", {""}}, {"resources", {"configmaps", "secrets"}}, {"verbs", {"get"}}}};
  REQUIRE(admin.apply(crs + "cm-reader", cms).status == 200);
  CHECK(alice.get("/api/v1/namespaces/default/secrets/x").status == 404);
  pods["metadata"]["labels"] = json::object();
  REQUIRE(admin.apply(crs + "pods-reader", pods).status == 200);
  CHECK(alice.get("/api/v1/namespaces/default/pods").status == 403);
  REQUIRE(admin.request("DELETE", crs + "cm-reader").status == 200);
  CHECK(admin.get(crs + "monitoring").json()["rules"] == json::array());
  CHECK(alice.get("/api/v1/namespaces/default/secrets/x").status == 403);
  // Rules written into the aggregated role itself are replaced, as the controller does.
  agg["rules"] = {{{"apiGroups", {"*"}}, {"resources", {"*"}}, {"verbs", {"*"}}}};
  REQUIRE(admin.apply(crs + "monitoring", agg).status == 200);
  CHECK(admin.get(crs + "monitoring").json()["rules"] == json::array());
}

TEST_CASE("RBAC: roles and bindings grant only what the writer holds, unless it may escalate or bind") {
  Fleet f(fast());
  Http admin = f.client("cluster-1");
  const std::string rbac = "/apis/rbac.authorization.k8s.io/v1";
  REQUIRE(admin.apply("/api/v1/namespaces/ns1", ns_obj("ns1")).status == 201);
  // alice may manage roles and bindings in ns1 and read configmaps there.
  REQUIRE(admin.apply(rbac + "/namespaces/ns1/roles/manager",
                      role("Role", "ns1", "manager",
                           {{{"apiGroups", {"rbac.authorization.k8s.io"}},
                             {"resources", {"roles", "rolebindings"}},
                             {"verbs", {"create", "get", "update", "patch"}}},
                            {{"apiGroups", {""}}, {"resources", {"configmaps"}}, {"verbs", {"get", "list"}}}}))
              .status == 201);
  REQUIRE(admin.apply(rbac + "/namespaces/ns1/rolebindings/manager",
                      binding("RoleBinding", "ns1", "manager", "Role", "manager", user("alice")))
              .status == 201);
  Http alice = tenant(f, "cluster-1", "alice", "devs");

  // Within what she holds: allowed (POST and server-side apply alike).
  json reader = role("Role", "ns1", "reader", {{{"apiGroups", {""}}, {"resources", {"configmaps"}}, {"verbs", {"get"}}}});
  CHECK(alice.request("POST", rbac + "/namespaces/ns1/roles", reader.dump()).status == 201);
  // Beyond it: 403 with the API's wording, nothing stored.
  json wider = role("Role", "ns1", "wider",
                    {{{"apiGroups", {""}}, {"resources", {"configmaps"}}, {"verbs", {"get", "delete"}}},
                     {{"apiGroups", {"apps"}}, {"resources", {"deployments"}}, {"resourceNames", {"web"}}, {"verbs", {"get"}}}});
  const std::string not_held =
      "user \"alice\" (groups=[\"devs\" \"system:authenticated\"]) is attempting to grant RBAC permissions not "
      "currently held:\n"
      "{APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"delete\"]}\n"
      "{APIGroups:[\"apps\"], Resources:[\"deployments\"], ResourceNames:[\"web\"], Verbs:[\"get\"]}";
  auto denied = alice.request("POST", rbac + "/namespaces/ns1/roles", wider.dump());
  CHECK(denied.status == 403);
  CHECK(denied.json()["reason"] == "Forbidden");
  CHECK(denied.json()["message"] == "roles.rbac.authorization.k8s.io \"wider\" is forbidden: " + not_held);
  CHECK(denied.json()["details"] == json({{"name", "wider"}, {"group", "rbac.authorization.k8s.io"}, {"kind", "roles"}}));
  CHECK(f.sim->get("cluster-1", "rbac.authorization.k8s.io/v1", "Role", "ns1", "wider").is_null());
  // An update that widens a role is refused too, and leaves it as it was.
  reader["rules"][0]["verbs"] = {"get", "delete"};
  auto widen = alice.apply(rbac + "/namespaces/ns1/roles/reader", reader, "test", true);
  CHECK(widen.status == 403);
  CHECK(f.sim->get("cluster-1", "rbac.authorization.k8s.io/v1", "Role", "ns1", "reader")["rules"][0]["verbs"] ==
        json({"get"}));

  // Binding: only a role whose permissions she holds...
  REQUIRE(admin.apply(rbac + "/namespaces/ns1/roles/deleter",
                      role("Role", "ns1", "deleter", {{{"apiGroups", {""}}, {"resources", {"configmaps"}}, {"verbs", {"delete"}}}}))
              .status == 201);
  CHECK(alice.apply(rbac + "/namespaces/ns1/rolebindings/bob-reads",
                    binding("RoleBinding", "ns1", "bob-reads", "Role", "reader", user("bob")))
            .status == 201);
  auto bind = alice.apply(rbac + "/namespaces/ns1/rolebindings/bob-deletes",
                          binding("RoleBinding", "ns1", "bob-deletes", "Role", "deleter", user("bob")));
  CHECK(bind.status == 403);
  CHECK(bind.json()["message"] ==
        "rolebindings.rbac.authorization.k8s.io \"bob-deletes\" is forbidden: user \"alice\" (groups=[\"devs\" "
        "\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n"
        "{APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"delete\"]}");
  auto missing = alice.apply(rbac + "/namespaces/ns1/rolebindings/ghost",
                             binding("RoleBinding", "ns1", "ghost", "Role", "nosuch", user("bob")));
  CHECK(missing.status == 404);
  CHECK(missing.json()["message"] == "roles.rbac.authorization.k8s.io \"nosuch\" not found");

  // ...unless she has `bind` on that role, or `escalate` on roles.
  REQUIRE(admin.apply(rbac + "/namespaces/ns1/roles/binder",
                      role("Role", "ns1", "binder",
                           {{{"apiGroups", {"rbac.authorization.k8s.io"}}, {"resources", {"roles"}},
                             {"resourceNames", {"deleter"}}, {"verbs", {"bind"}}}}))
              .status == 201);
  REQUIRE(admin.apply(rbac + "/namespaces/ns1/rolebindings/binder",
                      binding("RoleBinding", "ns1", "binder", "Role", "binder", user("alice")))
              .status == 201);
  CHECK(alice.apply(rbac + "/namespaces/ns1/rolebindings/bob-deletes",
                    binding("RoleBinding", "ns1", "bob-deletes", "Role", "deleter", user("bob")))
            .status == 201);
  CHECK(alice.request("POST", rbac + "/namespaces/ns1/roles", wider.dump()).status == 403);
  REQUIRE(admin.apply(rbac + "/namespaces/ns1/roles/escalator",
                      role("Role", "ns1", "escalator",
                           {{{"apiGroups", {"rbac.authorization.k8s.io"}}, {"resources", {"roles"}}, {"verbs", {"escalate"}}}}))
              .status == 201);
  REQUIRE(admin.apply(rbac + "/namespaces/ns1/rolebindings/escalator",
                      binding("RoleBinding", "ns1", "escalator", "Role", "escalator", user("alice")))
              .status == 201);
  CHECK(alice.request("POST", rbac + "/namespaces/ns1/roles", wider.dump()).status == 201);

  // A ClusterRole with an aggregationRule takes cluster-admin's authority (or escalate).
  REQUIRE(admin.apply(rbac + "/clusterroles/cr-writer",
                      role("ClusterRole", "", "cr-writer",
                           {{{"apiGroups", {"rbac.authorization.k8s.io"}}, {"resources", {"clusterroles"}}, {"verbs", {"create"}}}}))
              .status == 201);
  REQUIRE(admin.apply(rbac + "/clusterrolebindings/cr-writer",
                      binding("ClusterRoleBinding", "", "cr-writer", "ClusterRole", "cr-writer", user("alice")))
              .status == 201);
  json agg = role("ClusterRole", "", "agg", json::array());
  agg["aggregationRule"] = {{"clusterRoleSelectors", {{{"matchLabels", {{"x", "y"}}}}}}};
  auto aggregated = alice.request("POST", rbac + "/clusterroles", agg.dump());
  CHECK(aggregated.status == 403);
  CHECK(aggregated.json()["message"] ==
        "clusterroles.rbac.authorization.k8s.io \"agg\" is forbidden: must have cluster-admin privileges to use the "
        "aggregationRule");
  CHECK(admin.request("POST", rbac + "/clusterroles", agg.dump()).status == 201);
}
