// The simulator's API over HTTPS with a plain HTTP client.

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <chrono>
#include <thread>

#include "core/util/error.hpp"
#include "helpers.hpp"

using nlohmann::json;
using namespace simtest;
using emco::sim::SimOptions;

namespace {

SimOptions fast(int clusters = 1) {
  SimOptions o;
  o.clusters = clusters;
  o.ready_delay_ms = 0;
  o.finalize_delay_ms = 0;
  return o;
}

json ns_obj(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
}

json cm(const std::string& ns, const std::string& name, json labels = json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"labels", labels}}},
          {"data", {{"k", "v"}}}};
}

json deployment(const std::string& ns, const std::string& name, int replicas, const std::string& image) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"matchLabels", {{"app", name}}}}},
            {"template",
             {{"metadata", {{"labels", {{"app", name}}}}},
              {"spec", {{"containers", {{{"name", name}, {"image", image}}}}}}}}}}};
}

void wait_until(const std::function<bool()>& cond, int ms = 5000) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!cond() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace

TEST_CASE("version, kubeconfigs and files") {
  Fleet f(fast(3));
  auto names = f.sim->cluster_names();
  REQUIRE(names == std::vector<std::string>{"cluster-1", "cluster-2", "cluster-3"});
  auto v = f.client("cluster-2").get("/version").json();
  CHECK(v["major"] == "1");
  CHECK(v["minor"] == "32");
  CHECK(v["gitVersion"] == "v1.32.4");
  struct stat st {};
  REQUIRE(stat(f.sim->kubeconfig_path("cluster-1").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(stat((f.sim->dir() + "/kubeconfigs").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  REQUIRE(stat(f.sim->ca_path().c_str(), &st) == 0);
  std::string kc = read_file(f.sim->kubeconfig_path("cluster-3"));
  CHECK(kc.find("server: https://127.0.0.1:" + std::to_string(f.sim->port()) + "/clusters/cluster-3") !=
        std::string::npos);
  CHECK(kc.find("current-context: cluster-3") != std::string::npos);
  CHECK(f.token("cluster-1") != f.token("cluster-2"));
}

TEST_CASE("authentication: tokens per cluster, 401 otherwise, anonymous /version") {
  Fleet f(fast(2));
  Http good = f.client("cluster-1");
  CHECK(good.get("/api/v1/namespaces").status == 200);
  Http wrong(f.sim->server_url("cluster-1"), f.sim->ca_path(), {f.token("cluster-2"), "", ""});
  auto r = wrong.get("/api/v1/namespaces");
  CHECK(r.status == 401);
  CHECK(r.json()["reason"] == "Unauthorized");
  Http none(f.sim->server_url("cluster-1"), f.sim->ca_path(), {});
  CHECK(none.get("/api/v1/namespaces").status == 401);
  CHECK(none.get("/version").status == 200);
  CHECK(none.get("/healthz").body == "ok");
}

TEST_CASE("client-certificate kubeconfigs authenticate, to their own cluster only") {
  SimOptions o = fast(2);
  o.auth = emco::sim::AuthMode::client_cert;
  Fleet f(o);
  CHECK(kubeconfig_field(f.sim->kubeconfig_path("cluster-1"), "token").empty());
  Http c1 = f.client("cluster-1");
  CHECK(c1.get("/api/v1/namespaces/default").status == 200);
  auto review = c1.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                           R"({"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"})");
  CHECK(review.status == 201);
  CHECK(review.json()["status"]["userInfo"]["username"] == "emco-admin");
  CHECK(review.json()["status"]["userInfo"]["groups"][0] == "system:masters");
  Http c2 = f.client("cluster-2");
  // cluster-2's certificate against cluster-1's URL
  Http cross(f.sim->server_url("cluster-1"), f.sim->ca_path(),
             {"", f.dir.path + "/cluster-2.crt", f.dir.path + "/cluster-2.key"});
  CHECK(cross.get("/api/v1/namespaces/default").status == 401);
}

TEST_CASE("aggregated discovery v2 and v2beta1, legacy discovery") {
  Fleet f(fast());
  Http c = f.client("cluster-1");
  const std::string a_disc =
      "Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/"
      "json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
  auto apis = c.get("/apis", {a_disc});
  CHECK(apis.content_type == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
  auto body = apis.json();
  CHECK(body["kind"] == "APIGroupDiscoveryList");
  CHECK(body["apiVersion"] == "apidiscovery.k8s.io/v2");
  json apps;
  for (const auto& g : body["items"])
    if (g["metadata"]["name"] == "apps") apps = g;
  REQUIRE(apps.is_object());
  bool found = false;
  for (const auto& r : apps["versions"][0]["resources"])
    if (r["resource"] == "deployments") {
      found = true;
      CHECK(r["scope"] == "Namespaced");
      CHECK(r["shortNames"] == json{"deploy"});
      CHECK(r["responseKind"]["kind"] == "Deployment");
      CHECK(r["subresources"][0]["subresource"].is_string());
    }
  CHECK(found);
  auto core = c.get("/api", {a_disc}).json();
  CHECK(core["items"][0]["metadata"].contains("creationTimestamp"));
  CHECK_FALSE(core["items"][0]["metadata"].contains("name"));

  auto beta = c.get("/apis", {"Accept: application/json; as=APIGroupDiscoveryList; v=v2beta1; g=apidiscovery.k8s.io"});
  CHECK(beta.content_type == "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList");
  CHECK(beta.json()["apiVersion"] == "apidiscovery.k8s.io/v2beta1");

  auto legacy = c.get("/apis", {"Accept: application/json, */*"});
  CHECK(legacy.content_type == "application/json");
  CHECK(legacy.json()["kind"] == "APIGroupList");
  CHECK(c.get("/api").json()["kind"] == "APIVersions");
  auto v1 = c.get("/api/v1").json();
  CHECK(v1["kind"] == "APIResourceList");
  CHECK_FALSE(v1.contains("apiVersion"));
  auto appsv1 = c.get("/apis/apps/v1").json();
  CHECK(appsv1["apiVersion"] == "v1");
  CHECK(appsv1["groupVersion"] == "apps/v1");
  CHECK(c.get("/apis/apps").json()["preferredVersion"]["groupVersion"] == "apps/v1");
  CHECK(c.get("/apis/nope.example.com/v1").status == 404);
}

TEST_CASE("OpenAPI v3 index and per group-version documents declare fieldValidation") {
  Fleet f(fast());
  Http c = f.client("cluster-1");
  auto index = c.get("/openapi/v3").json();
  REQUIRE(index["paths"].contains("apis/apps/v1"));
  std::string url = index["paths"]["apis/apps/v1"]["serverRelativeURL"];
  CHECK(url.rfind("/clusters/cluster-1/openapi/v3/apis/apps/v1?hash=", 0) == 0);
  auto doc = c.get(url.substr(std::string("/clusters/cluster-1").size())).json();
  auto patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
  CHECK(patch["x-kubernetes-group-version-kind"] == json({{"group", "apps"}, {"version", "v1"}, {"kind", "Deployment"}}));
  bool fv = false;
  for (const auto& p : patch["parameters"])
    if (p["name"] == "fieldValidation" && p["in"] == "query") fv = true;
  CHECK(fv);
  // A client that joins the prefixed URL to the server URL still gets it.
  CHECK(c.get(url).status == 200);
  CHECK(c.get("/openapi/v3/apis/nothing/v1").status == 404);
}

TEST_CASE("CRUD with Status errors worded as the API words them") {
  Fleet f(fast());
  Http c = f.client("cluster-1");
  auto missing = c.get("/apis/apps/v1/namespaces/default/deployments/web");
  CHECK(missing.status == 404);
  auto st = missing.json();
  CHECK(st["kind"] == "Status");
  CHECK(st["message"] == "deployments.apps \"web\" not found");
  CHECK(st["details"] == json({{"name", "web"}, {"group", "apps"}, {"kind", "deployments"}}));
  CHECK(c.get("/nonsense").json()["message"] == "the server could not find the requested resource");

  auto created = c.request("POST", "/api/v1/namespaces/default/configmaps", cm("default", "a").dump());
  CHECK(created.status == 201);
  auto obj = created.json();
  CHECK(obj["metadata"]["uid"].get<std::string>().size() == 36);
  CHECK(obj["metadata"].contains("creationTimestamp"));
  CHECK(obj["metadata"]["managedFields"][0]["operation"] == "Update");
  auto dup = c.request("POST", "/api/v1/namespaces/default/configmaps", cm("default", "a").dump());
  CHECK(dup.status == 409);
  CHECK(dup.json()["reason"] == "AlreadyExists");
  CHECK(dup.json()["message"] == "configmaps \"a\" already exists");

  auto no_ns = c.request("POST", "/api/v1/namespaces/missing/configmaps", cm("missing", "a").dump());
  CHECK(no_ns.status == 404);
  CHECK(no_ns.json()["message"] == "namespaces \"missing\" not found");

  auto bad_name = c.request("POST", "/api/v1/namespaces/default/configmaps", cm("default", "Bad_Name").dump());
  CHECK(bad_name.status == 422);
  CHECK(bad_name.json()["reason"] == "Invalid");

  // PUT with a stale resourceVersion conflicts; with the current one it updates.
  json update = obj;
  update["data"]["k"] = "v2";
  update["metadata"]["resourceVersion"] = "1";
  auto stale = c.request("PUT", "/api/v1/namespaces/default/configmaps/a", update.dump());
  CHECK(stale.status == 409);
  CHECK_THAT(stale.json()["message"].get<std::string>(), Catch::Contains("the object has been modified"));
  update["metadata"]["resourceVersion"] = obj["metadata"]["resourceVersion"];
  auto put = c.request("PUT", "/api/v1/namespaces/default/configmaps/a", update.dump());
  CHECK(put.status == 200);
  CHECK(put.json()["data"]["k"] == "v2");
  CHECK(std::stoll(put.json()["metadata"]["resourceVersion"].get<std::string>()) >
        std::stoll(obj["metadata"]["resourceVersion"].get<std::string>()));

  auto del = c.request("DELETE", "/api/v1/namespaces/default/configmaps/a");
  CHECK(del.status == 200);
  CHECK(del.json()["status"] == "Success");
  CHECK(c.get("/api/v1/namespaces/default/configmaps/a").status == 404);
  CHECK(c.request("DELETE", "/api/v1/namespaces/default/configmaps/a").status == 404);
}

TEST_CASE("server-side apply: create 201, update 200, no-op keeps resourceVersion, generation follows spec") {
  Fleet f(fast());
  Http c = f.client("cluster-1");
  const std::string path = "/apis/apps/v1/namespaces/default/deployments/web";
  auto first = c.apply(path, deployment("default", "web", 1, "nginx:1"), "kubectl");
  REQUIRE(first.status == 201);
  auto o1 = first.json();
  CHECK(o1["metadata"]["generation"] == 1);
  CHECK(o1["metadata"]["managedFields"][0]["manager"] == "kubectl");
  CHECK(o1["metadata"]["managedFields"][0]["operation"] == "Apply");
  auto again = c.apply(path, deployment("default", "web", 1, "nginx:1"), "kubectl");
  CHECK(again.status == 200);
  CHECK(again.json()["metadata"]["resourceVersion"] == o1["metadata"]["resourceVersion"]);
  auto changed = c.apply(path, deployment("default", "web", 3, "nginx:1"), "kubectl");
  CHECK(changed.json()["metadata"]["generation"] == 2);
  CHECK(changed.json()["spec"]["replicas"] == 3);

  // YAML bodies work too.
  auto yaml = c.request("PATCH", "/api/v1/namespaces/default/configmaps/y?fieldManager=emco",
                        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  a: \"1\"\n",
                        "application/apply-patch+yaml");
  CHECK(yaml.status == 201);
  CHECK(yaml.json()["data"]["a"] == "1");
}

TEST_CASE("server-side apply: conflicts, force, and request validation") {
  Fleet f(fast());
  Http c = f.client("cluster-1");
  const std::string path = "/apis/apps/v1/namespaces/default/deployments/web";
  REQUIRE(c.apply(path, deployment("default", "web", 1, "nginx:1"), "helm").status == 201);
  auto conflict = c.apply(path, deployment("default", "web", 2, "nginx:1"), "emco");
  REQUIRE(conflict.status == 409);
  auto st = conflict.json();
  CHECK(st["reason"] == "Conflict");
  CHECK(st["message"] == "Apply failed with 1 conflict: conflict with \"helm\": .spec.replicas");
  CHECK(st["details"]["causes"][0] ==
        json({{"type", "FieldManagerConflict"}, {"message", "conflict with \"helm\""}, {"field", ".spec.replicas"}}));
  auto forced = c.apply(path, deployment("default", "web", 2, "nginx:1"), "emco", true);
  CHECK(forced.status == 200);
  CHECK(forced.json()["spec"]["replicas"] == 2);

  auto no_manager = c.request("PATCH", path, deployment("default", "web", 2, "x").dump(), "application/apply-patch+yaml");
  CHECK(no_manager.status == 422);
  CHECK(no_manager.json()["message"] ==
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch");
  json with_mf = deployment("default", "web", 2, "x");
  with_mf["metadata"]["managedFields"] = json::array({json::object()});
  CHECK(c.apply(path, with_mf).json()["message"] == "metadata.managedFields must be nil");
  json wrong_version = deployment("default", "web", 2, "x");
  wrong_version["apiVersion"] = "apps/v1beta1";
  CHECK(c.apply(path, wrong_version).json()["message"] ==
        "Incorrect version specified in apply patch. Specified patch version: apps/v1beta1, expected: apps/v1");
  CHECK(c.apply("/apis/apps/v1/namespaces/default/deployments/other", deployment("default", "web", 1, "x"))
            .json()["message"] == "the name of the object (web) does not match the name on the URL (other)");
  CHECK(c.apply("/apis/apps/v1/namespaces/kube-system/deployments/web", deployment("default", "web", 1, "x"))
            .json()["message"] ==
        "the namespace of the provided object does not match the namespace sent on the request");
  auto force_on_merge = c.request("PATCH", path + "?force=true", "{}", "application/merge-patch+json");
  CHECK(force_on_merge.status == 422);
  auto dry = c.apply("/apis/apps/v1/namespaces/default/deployments/dry?dryRun=All", deployment("default", "dry", 1, "x"));
  CHECK(dry.status == 201);
  CHECK(c.get("/apis/apps/v1/namespaces/default/deployments/dry").status == 404);
  CHECK(c.request("PATCH", path, "{}", "text/plain").status == 415);
}

TEST_CASE("JSON, merge and strategic merge patches record Update managers") {
  Fleet f(fast());
  Http c = f.client("cluster-1");
  const std::string path = "/apis/apps/v1/namespaces/default/deployments/web";
  json d = deployment("default", "web", 1, "nginx:1");
  d["spec"]["template"]["spec"]["containers"].push_back({{"name", "side"}, {"image", "s:1"}});
  REQUIRE(c.apply(path, d, "kubectl").status == 201);

  auto smp = c.request("PATCH", path + "?fieldManager=kubectl-patch",
                       R"({"spec":{"template":{"spec":{"containers":[{"name":"side","image":"s:2"}]}}}})",
                       "application/strategic-merge-patch+json");
  REQUIRE(smp.status == 200);
  auto containers = smp.json()["spec"]["template"]["spec"]["containers"];
  REQUIRE(containers.size() == 2);
  CHECK(containers[0]["image"] == "nginx:1");
  CHECK(containers[1]["image"] == "s:2");
  bool update_entry = false;
  json smp_obj = smp.json();
  for (const auto& e : smp_obj["metadata"]["managedFields"])
    if (e["manager"] == "kubectl-patch" && e["operation"] == "Update") update_entry = true;
  CHECK(update_entry);

  auto merge = c.request("PATCH", path, R"({"metadata":{"labels":{"x":"y"}}})", "application/merge-patch+json");
  CHECK(merge.json()["metadata"]["labels"]["x"] == "y");
  auto jp = c.request("PATCH", path, R"([{"op":"replace","path":"/spec/replicas","value":4}])",
                      "application/json-patch+json");
  CHECK(jp.json()["spec"]["replicas"] == 4);
  auto bad = c.request("PATCH", path, R"([{"op":"test","path":"/spec/replicas","value":9}])",
                       "application/json-patch+json");
  CHECK(bad.status == 422);
  auto status_ignored = c.request("PATCH", path, R"({"status":{"replicas":99}})", "application/merge-patch+json");
  CHECK(status_ignored.json()["status"]["replicas"] != 99);
  auto status_sub = c.request("PATCH", path + "/status", R"({"status":{"replicas":99}})", "application/merge-patch+json");
  CHECK(status_sub.json()["status"]["replicas"] == 99);
  CHECK(c.request("PATCH", "/apis/apps/v1/namespaces/default/deployments/none", "{}", "application/merge-patch+json")
            .status == 404);
}

TEST_CASE("lists: label selectors, field selectors, limit and continue, Table") {
  Fleet f(fast());
  Http c = f.client("cluster-1");
  REQUIRE(c.apply("/api/v1/namespaces/team", ns_obj("team")).status == 201);
  const char* envs[] = {"prod", "dev", "test", "prod", ""};
  for (int i = 0; i < 5; ++i) {
    json labels = json::object();
    if (*envs[i]) labels["env"] = envs[i];
    if (i % 2 == 0) labels["tier"] = "web";
    REQUIRE(c.apply("/api/v1/namespaces/team/configmaps/cm" + std::to_string(i),
                    cm("team", "cm" + std::to_string(i), labels))
                .status == 201);
  }
  auto names = [&](const std::string& q) {
    std::vector<std::string> out;
    auto r = c.get("/api/v1/namespaces/team/configmaps?" + q).json();
    for (const auto& i : r["items"]) out.push_back(i["metadata"]["name"]);
    return out;
  };
  using V = std::vector<std::string>;
  CHECK(names("labelSelector=env%3Dprod") == V{"cm0", "cm3"});
  CHECK(names("labelSelector=env!%3Dprod") == V{"cm1", "cm2", "cm4"});
  CHECK(names("labelSelector=env%20in%20(dev,test)") == V{"cm1", "cm2"});
  CHECK(names("labelSelector=env%20notin%20(prod)") == V{"cm1", "cm2", "cm4"});
  CHECK(names("labelSelector=tier") == V{"cm0", "cm2", "cm4"});
  CHECK(names("labelSelector=!env") == V{"cm4"});
  CHECK(names("labelSelector=tier%3Dweb,env%3Dprod") == V{"cm0"});
  CHECK(names("fieldSelector=metadata.name%3Dcm2") == V{"cm2"});
  CHECK(names("fieldSelector=metadata.name!%3Dcm2,metadata.namespace%3Dteam").size() == 4);
  CHECK(c.get("/api/v1/namespaces/team/configmaps?fieldSelector=spec.foo%3Dx").status == 400);
  CHECK(c.get("/api/v1/namespaces/team/configmaps?labelSelector=a%20in%20b").status == 400);

  auto page1 = c.get("/api/v1/namespaces/team/configmaps?limit=2").json();
  CHECK(page1["kind"] == "ConfigMapList");
  CHECK(page1["items"].size() == 2);
  CHECK_FALSE(page1["items"][0].contains("kind"));  // as real servers: items carry no kind
  CHECK(page1["metadata"]["remainingItemCount"] == 3);
  std::string cont = page1["metadata"]["continue"];
  auto page2 = c.get("/api/v1/namespaces/team/configmaps?limit=2&continue=" + cont).json();
  CHECK(page2["items"][0]["metadata"]["name"] == "cm2");
  auto page3 = c.get("/api/v1/namespaces/team/configmaps?limit=2&continue=" +
                     page2["metadata"]["continue"].get<std::string>())
                   .json();
  CHECK(page3["items"].size() == 1);
  CHECK_FALSE(page3["metadata"].contains("continue"));
  CHECK(c.get("/api/v1/namespaces/team/configmaps?continue=garbage").status == 400);

  auto all = c.get("/api/v1/configmaps").json();  // across namespaces
  CHECK(all["items"].size() == 5);
  auto table = c.get("/api/v1/namespaces/team/configmaps",
                     {"Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json"})
                   .json();
  CHECK(table["kind"] == "Table");
  CHECK(table["rows"].size() == 5);
  CHECK(table["rows"][0]["cells"][0] == "cm0");
}

TEST_CASE("delete: namespaces take their contents, propagation policies, finalizers") {
  Fleet f(fast());
  Http c = f.client("cluster-1");
  REQUIRE(c.apply("/api/v1/namespaces/gone", ns_obj("gone")).status == 201);
  REQUIRE(c.apply("/api/v1/namespaces/gone/configmaps/a", cm("gone", "a")).status == 201);
  auto del = c.request("DELETE", "/api/v1/namespaces/gone", R"({"propagationPolicy":"Background"})");
  CHECK(del.status == 200);
  CHECK(del.json()["status"]["phase"] == "Terminating");
  CHECK(c.get("/api/v1/namespaces/gone").status == 404);
  CHECK(f.sim->list("cluster-1", "v1", "ConfigMap", "gone").empty());

  // Owner and dependents.
  auto owner = c.apply("/api/v1/namespaces/default/configmaps/owner", cm("default", "owner")).json();
  json dep = cm("default", "dep");
  dep["metadata"]["ownerReferences"] = {{{"apiVersion", "v1"},
                                         {"kind", "ConfigMap"},
                                         {"name", "owner"},
                                         {"uid", owner["metadata"]["uid"]}}};
  REQUIRE(c.apply("/api/v1/namespaces/default/configmaps/dep", dep).status == 201);
  c.request("DELETE", "/api/v1/namespaces/default/configmaps/owner", R"({"propagationPolicy":"Orphan"})");
  auto orphan = c.get("/api/v1/namespaces/default/configmaps/dep");
  CHECK(orphan.status == 200);
  CHECK_FALSE(orphan.json()["metadata"].contains("ownerReferences"));

  owner = c.apply("/api/v1/namespaces/default/configmaps/owner", cm("default", "owner")).json();
  dep["metadata"]["ownerReferences"][0]["uid"] = owner["metadata"]["uid"];
  c.apply("/api/v1/namespaces/default/configmaps/dep", dep, "test", true);
  c.request("DELETE", "/api/v1/namespaces/default/configmaps/owner", R"({"propagationPolicy":"Foreground"})");
  CHECK(c.get("/api/v1/namespaces/default/configmaps/dep").status == 404);
  CHECK(c.request("DELETE", "/api/v1/namespaces/default/configmaps/x", R"({"propagationPolicy":"Sometimes"})")
            .status == 404);

  // An object with a finalizer lingers with a deletionTimestamp until the
  // finalizer is removed.
  json fin = cm("default", "fin");
  fin["metadata"]["finalizers"] = {"example.com/hold"};
  c.apply("/api/v1/namespaces/default/configmaps/fin", fin);
  auto pending = c.request("DELETE", "/api/v1/namespaces/default/configmaps/fin");
  CHECK(pending.status == 202);
  CHECK(c.get("/api/v1/namespaces/default/configmaps/fin").json()["metadata"].contains("deletionTimestamp"));
  c.request("PATCH", "/api/v1/namespaces/default/configmaps/fin", R"({"metadata":{"finalizers":null}})",
            "application/merge-patch+json");
  CHECK(c.get("/api/v1/namespaces/default/configmaps/fin").status == 404);

  // deletecollection with a selector
  c.apply("/api/v1/namespaces/default/configmaps/l1", cm("default", "l1", {{"del", "yes"}}));
  c.apply("/api/v1/namespaces/default/configmaps/l2", cm("default", "l2", {{"del", "no"}}));
  CHECK(c.request("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=del%3Dyes").status == 200);
  CHECK(c.get("/api/v1/namespaces/default/configmaps/l1").status == 404);
  CHECK(c.get("/api/v1/namespaces/default/configmaps/l2").status == 200);
}

TEST_CASE("namespaces and CRDs stay Terminating for the finalize delay, then go with their contents") {
  // The delay must outlast the requests between the delete and the watch even
  // on a loaded machine under ASan (300 ms did not); the watch outlasts it.
  SimOptions o = fast();
  o.finalize_delay_ms = 1500;
  Fleet f(o);
  Http c = f.client("cluster-1");
  REQUIRE(c.apply("/api/v1/namespaces/t", ns_obj("t")).status == 201);
  REQUIRE(c.apply("/api/v1/namespaces/t/configmaps/a", cm("t", "a")).status == 201);
  auto del = c.request("DELETE", "/api/v1/namespaces/t");
  CHECK(del.status == 200);
  auto ns = c.get("/api/v1/namespaces/t").json();
  CHECK(ns["status"]["phase"] == "Terminating");
  CHECK(ns["metadata"].contains("deletionTimestamp"));
  auto refused = c.apply("/api/v1/namespaces/t/configmaps/b", cm("t", "b"));
  CHECK(refused.status == 403);
  CHECK(refused.json()["message"] ==
        "configmaps \"b\" is forbidden: unable to create new content in namespace t because it is being terminated");
  CHECK(c.request("DELETE", "/api/v1/namespaces/t/configmaps/a").status == 200);  // contents can still be deleted
  auto w = c.get("/api/v1/namespaces?watch=true&fieldSelector=metadata.name%3Dt&resourceVersion=" +
                 ns["metadata"]["resourceVersion"].get<std::string>() + "&timeoutSeconds=4");
  CHECK_THAT(w.body, Catch::Contains("\"type\":\"DELETED\""));
  CHECK(c.get("/api/v1/namespaces/t").status == 404);
}

TEST_CASE("CRDs: custom resources are served once Established, and go with their CRD") {
  SimOptions o = fast();
  o.crd_establish_delay_ms = 300;
  Fleet f(o);
  Http c = f.client("cluster-1");
  json crd = json::parse(R"({"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
    "metadata":{"name":"widgets.example.com"},
    "spec":{"group":"example.com","scope":"Namespaced",
      "names":{"kind":"Widget","plural":"widgets","singular":"widget","shortNames":["wd"]},
      "versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
        "schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object",
          "properties":{"tags":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}}}}}}}}]}})");
  auto created = c.apply("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com", crd);
  REQUIRE(created.status == 201);
  std::string established;
  json crd_obj = created.json();
  for (const auto& cond : crd_obj["status"]["conditions"])
    if (cond["type"] == "Established") established = cond["status"];
  CHECK(established == "False");
  json w = json::parse(R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1","namespace":"default"},
                           "spec":{"size":1,"tags":["a"]}})");
  CHECK(c.apply("/apis/example.com/v1/namespaces/default/widgets/w1", w).status == 404);
  wait_until([&] { return c.apply("/apis/example.com/v1/namespaces/default/widgets/w1", w).status == 201; });
  auto got = c.get("/apis/example.com/v1/namespaces/default/widgets/w1");
  REQUIRE(got.status == 200);
  CHECK(got.json()["metadata"]["generation"] == 1);
  // The CRD's schema makes `tags` a set.
  auto fields = got.json()["metadata"]["managedFields"][0]["fieldsV1"];
  CHECK(fields["f:spec"]["f:tags"].contains("v:\"a\""));
  auto disco = c.get("/apis", {"Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}).json();
  bool listed = false;
  for (const auto& g : disco["items"])
    if (g["metadata"]["name"] == "example.com") listed = true;
  CHECK(listed);
  CHECK(c.request("PATCH", "/apis/example.com/v1/namespaces/default/widgets/w1", "{}",
                  "application/strategic-merge-patch+json")
            .status == 415);
  auto list = c.get("/apis/example.com/v1/namespaces/default/widgets").json();
  CHECK(list["items"][0]["kind"] == "Widget");  // custom resource lists keep kind

  c.request("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com");
  CHECK(c.get("/apis/example.com/v1/namespaces/default/widgets/w1").status == 404);
  CHECK(f.sim->object_count("cluster-1") == 4);  // the four initial namespaces
}

TEST_CASE("workloads become ready after the configured delay") {
  // "Not ready yet" is checked after a few requests: the delay must outlast
  // them on a loaded machine under ASan (300 ms did not).
  SimOptions o = fast();
  o.ready_delay_ms = 2000;
  Fleet f(o);
  Http c = f.client("cluster-1");
  auto d = c.apply("/apis/apps/v1/namespaces/default/deployments/web", deployment("default", "web", 2, "nginx")).json();
  auto available = [&] {
    auto obj = f.sim->get("cluster-1", "apps/v1", "Deployment", "default", "web");
    for (const auto& cond : obj["status"]["conditions"])
      if (cond["type"] == "Available") return cond["status"] == "True";
    return false;
  };
  CHECK_FALSE(available());
  CHECK(d["status"]["unavailableReplicas"] == 2);
  json job = json::parse(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"default"},
    "spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}})");
  c.apply("/apis/batch/v1/namespaces/default/jobs/j", job);
  json sts = json::parse(R"({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"s","namespace":"default"},
    "spec":{"replicas":3,"serviceName":"s","selector":{"matchLabels":{"a":"s"}},
      "template":{"metadata":{"labels":{"a":"s"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}})");
  c.apply("/apis/apps/v1/namespaces/default/statefulsets/s", sts);
  json ds = json::parse(R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"d","namespace":"default"},
    "spec":{"selector":{"matchLabels":{"a":"d"}},
      "template":{"metadata":{"labels":{"a":"d"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}})");
  c.apply("/apis/apps/v1/namespaces/default/daemonsets/d", ds);
  json pod = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},
    "spec":{"containers":[{"name":"c","image":"x"}]}})");
  c.apply("/api/v1/namespaces/default/pods/p", pod);
  CHECK(f.sim->get("cluster-1", "v1", "Pod", "default", "p")["status"]["phase"] == "Pending");

  wait_until(available);
  CHECK(available());
  auto dep = f.sim->get("cluster-1", "apps/v1", "Deployment", "default", "web");
  CHECK(dep["status"]["readyReplicas"] == 2);
  CHECK(dep["status"]["availableReplicas"] == 2);
  CHECK(dep["status"]["observedGeneration"] == 1);
  wait_until([&] { return f.sim->get("cluster-1", "v1", "Pod", "default", "p")["status"]["phase"] == "Running"; });
  CHECK(f.sim->get("cluster-1", "batch/v1", "Job", "default", "j")["status"]["succeeded"] == 1);
  CHECK(f.sim->get("cluster-1", "apps/v1", "StatefulSet", "default", "s")["status"]["readyReplicas"] == 3);
  CHECK(f.sim->get("cluster-1", "apps/v1", "DaemonSet", "default", "d")["status"]["numberReady"] == 1);
  CHECK(f.sim->get("cluster-1", "v1", "Pod", "default", "p")["status"]["phase"] == "Running");
  // The controller's write is recorded like kube-controller-manager's.
  bool controller = false;
  for (const auto& e : dep["metadata"]["managedFields"])
    if (e["manager"] == "kube-controller-manager" && e.value("subresource", "") == "status") controller = true;
  CHECK(controller);

  // A spec change makes it progress again.
  c.apply("/apis/apps/v1/namespaces/default/deployments/web", deployment("default", "web", 2, "nginx:2"));
  CHECK_FALSE(available());
  wait_until(available);
  CHECK(f.sim->get("cluster-1", "apps/v1", "Deployment", "default", "web")["status"]["observedGeneration"] == 2);
}

TEST_CASE("CertificateSigningRequests are approved, signed by the CA, and the certificate authenticates") {
  Fleet f(fast());
  Http c = f.client("cluster-1");
  // A key and CSR made with the openssl tool.
  std::string key = f.dir.path + "/u.key", csr = f.dir.path + "/u.csr";
  auto gen = run("openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + key +
                 " -out " + csr + " -subj '/O=devs/CN=alice'");
  REQUIRE(gen.rc == 0);
  std::string pem = read_file(csr);
  std::string b64 = run("base64 -w0 " + csr).output;
  json obj = {{"apiVersion", "certificates.k8s.io/v1"},
              {"kind", "CertificateSigningRequest"},
              {"metadata", {{"name", "alice"}}},
              {"spec",
               {{"request", b64},
                {"signerName", "kubernetes.io/kube-apiserver-client"},
                {"usages", {"client auth"}}}}};
  REQUIRE(c.request("POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", obj.dump()).status == 201);
  auto current = c.get("/apis/certificates.k8s.io/v1/certificatesigningrequests/alice").json();
  CHECK_FALSE(current["status"].contains("certificate"));
  current["status"]["conditions"] = {{{"type", "Approved"}, {"status", "True"}, {"reason", "Test"}, {"message", "ok"}}};
  auto approved = c.request("PUT", "/apis/certificates.k8s.io/v1/certificatesigningrequests/alice/approval",
                            current.dump());
  REQUIRE(approved.status == 200);
  std::string cert = base64_decode(approved.json()["status"]["certificate"]);
  CHECK(cert.rfind("-----BEGIN CERTIFICATE-----", 0) == 0);
  write_file(f.dir.path + "/u.crt", cert);
  auto verify = run("openssl verify -CAfile " + f.sim->ca_path() + " " + f.dir.path + "/u.crt");
  CHECK(verify.rc == 0);
  Http alice(f.sim->server_url("cluster-1"), f.sim->ca_path(), {"", f.dir.path + "/u.crt", key});
  auto who = alice.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                           R"({"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"})");
  REQUIRE(who.status == 201);
  CHECK(who.json()["status"]["userInfo"]["username"] == "alice");
  CHECK(who.json()["status"]["userInfo"]["groups"][0] == "devs");
}

TEST_CASE("Secrets default their type and fold stringData into data") {
  Fleet f(fast());
  auto r = f.client("cluster-1").request(
      "POST", "/api/v1/namespaces/default/secrets",
      R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"user":"admin"}})");
  REQUIRE(r.status == 201);
  auto s = r.json();
  CHECK(s["type"] == "Opaque");
  CHECK(s["data"]["user"] == "YWRtaW4=");
  CHECK_FALSE(s.contains("stringData"));
}

TEST_CASE("SelfSubjectAccessReview answers for the caller") {
  Fleet f(fast());
  auto r = f.client("cluster-1").request(
      "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
      R"({"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview",
          "spec":{"resourceAttributes":{"namespace":"default","verb":"create","group":"apps","resource":"deployments"}}})");
  CHECK(r.status == 201);
  CHECK(r.json()["status"]["allowed"] == true);
  CHECK(f.client("cluster-1").get("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews").status == 405);
}

TEST_CASE("watch streams current state then changes") {
  Fleet f(fast());
  Http c = f.client("cluster-1");
  c.apply("/api/v1/namespaces/default/configmaps/before", cm("default", "before"));
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    c.apply("/api/v1/namespaces/default/configmaps/after", cm("default", "after"));
    c.request("DELETE", "/api/v1/namespaces/default/configmaps/before");
  });
  auto w = c.get("/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1");
  writer.join();
  CHECK(w.status == 200);
  std::vector<std::string> events;
  std::istringstream in(w.body);
  std::string line;
  while (std::getline(in, line)) {
    auto e = json::parse(line);
    events.push_back(e["type"].get<std::string>() + " " + e["object"]["metadata"]["name"].get<std::string>());
    CHECK(e["object"]["kind"] == "ConfigMap");
  }
  CHECK(events == std::vector<std::string>{"ADDED before", "ADDED after", "DELETED before"});
}

TEST_CASE("faults: latency, error rates with Retry-After, refused, down, flapping, expired credentials") {
  Fleet f(fast(2));
  Http c = f.client("cluster-1");
  emco::sim::Fault slow;
  slow.latency_ms = 300;
  f.sim->set_fault("cluster-1", slow);
  auto t0 = std::chrono::steady_clock::now();
  CHECK(c.get("/api/v1/namespaces/default").status == 200);
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(290));
  CHECK(f.client("cluster-2").get("/api/v1/namespaces/default").status == 200);  // others unaffected

  emco::sim::Fault busy;
  busy.error_rate = 1;
  busy.error_code = 429;
  busy.retry_after_s = 7;
  f.sim->set_fault("cluster-1", busy);
  auto r = c.get("/api/v1/namespaces/default");
  CHECK(r.status == 429);
  CHECK(r.headers["retry-after"] == "7");
  CHECK(r.json()["reason"] == "TooManyRequests");
  busy.error_code = 503;
  f.sim->set_fault("cluster-1", busy);
  CHECK(c.get("/api/v1/namespaces/default").status == 503);
  busy.error_code = 500;
  f.sim->set_fault("cluster-1", busy);
  CHECK(c.get("/api/v1/namespaces/default").json()["reason"] == "InternalError");
  emco::sim::Fault half;
  half.error_rate = 0.5;
  f.sim->set_fault("cluster-1", half);
  int errors = 0;
  for (int i = 0; i < 40; ++i) errors += c.get("/api/v1/namespaces/default").status == 503;
  CHECK(errors > 5);
  CHECK(errors < 35);

  emco::sim::Fault refuse;
  refuse.refuse = true;
  f.sim->set_fault("cluster-1", refuse);
  r = c.get("/api/v1/namespaces/default");
  CHECK(r.status == 0);
  CHECK_FALSE(r.error.empty());

  emco::sim::Fault down;
  down.down_until_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count() +
      400;
  f.sim->set_fault("cluster-1", down);
  CHECK(c.get("/api/v1/namespaces/default").status == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(450));
  CHECK(c.get("/api/v1/namespaces/default").status == 200);

  emco::sim::Fault flap;
  flap.flap_period_ms = 200;
  flap.flap_down_ms = 100;
  f.sim->set_fault("cluster-1", flap);
  int ok = 0, refused = 0;
  for (int i = 0; i < 30; ++i) {
    (c.get("/api/v1/namespaces/default").status == 200 ? ok : refused)++;
    std::this_thread::sleep_for(std::chrono::milliseconds(17));
  }
  CHECK(ok > 0);
  CHECK(refused > 0);

  emco::sim::Fault expired;
  expired.expired_credentials = true;
  f.sim->set_fault("cluster-1", expired);
  CHECK(c.get("/api/v1/namespaces/default").status == 401);
  f.sim->set_fault("cluster-1", {});
  CHECK(c.get("/api/v1/namespaces/default").status == 200);
}

TEST_CASE("own ports: each cluster listens on its own port, refusing closes it") {
  SimOptions o = fast(2);
  o.own_ports = true;
  Fleet f(o);
  std::string url = f.sim->server_url("cluster-2");
  CHECK(url.find("/clusters/") == std::string::npos);
  Http c = f.client("cluster-2");
  CHECK(c.get("/api/v1/namespaces/default").status == 200);
  // The shared port with the prefix still reaches the same cluster.
  Http shared("https://127.0.0.1:" + std::to_string(f.sim->port()) + "/clusters/cluster-2", f.sim->ca_path(),
              {f.token("cluster-2"), "", ""});
  CHECK(shared.get("/api/v1/namespaces/default").status == 200);
  emco::sim::Fault refuse;
  refuse.refuse = true;
  f.sim->set_fault("cluster-2", refuse);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto r = c.get("/api/v1/namespaces/default");
  CHECK(r.status == 0);
  CHECK_THAT(r.error, Catch::Contains("connect") || Catch::Contains("Couldn't"));
  f.sim->set_fault("cluster-2", {});
  wait_until([&] { return c.get("/api/v1/namespaces/default").status == 200; }, 3000);
  CHECK(c.get("/api/v1/namespaces/default").status == 200);
}

TEST_CASE("faults set through the fault file reach a running simulator") {
  Fleet f(fast(2));
  emco::sim::SimFaultArgs args;
  args.dir = f.sim->dir();
  args.clusters = {"cluster-2"};
  args.fault.expired_credentials = true;
  CHECK(emco::sim::run_sim_fault(args) == 0);
  Http c2 = f.client("cluster-2");
  wait_until([&] { return c2.get("/api/v1/namespaces/default").status == 401; }, 3000);
  CHECK(c2.get("/api/v1/namespaces/default").status == 401);
  CHECK(f.client("cluster-1").get("/api/v1/namespaces/default").status == 200);
  args.clear = true;
  // A new mtime: the file system may keep whole seconds.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  CHECK(emco::sim::run_sim_fault(args) == 0);
  wait_until([&] { return c2.get("/api/v1/namespaces/default").status == 200; }, 3000);
  CHECK(c2.get("/api/v1/namespaces/default").status == 200);
  args.fault.error_rate = 2;
  CHECK_THROWS_AS(emco::sim::fault_from_json(emco::sim::fault_to_json(args.fault)), emco::Error);
}

TEST_CASE("state persists across restarts with the same directory") {
  TempDir dir;
  SimOptions o = fast();
  o.dir = dir.path;
  o.persist = true;
  std::string token;
  {
    emco::sim::Simulator sim(o);
    sim.start();
    token = kubeconfig_field(sim.kubeconfig_path("cluster-1"), "token");
    Http c(sim.server_url("cluster-1"), sim.ca_path(), {token, "", ""});
    REQUIRE(c.apply("/api/v1/namespaces/default/configmaps/kept", cm("default", "kept")).status == 201);
    sim.stop();
  }
  emco::sim::Simulator sim(o);
  sim.start();
  CHECK(kubeconfig_field(sim.kubeconfig_path("cluster-1"), "token") == token);  // same credentials
  auto kept = sim.get("cluster-1", "v1", "ConfigMap", "default", "kept");
  REQUIRE(kept.is_object());
  CHECK(kept["data"]["k"] == "v");
  Http c(sim.server_url("cluster-1"), sim.ca_path(), {token, "", ""});
  auto next = c.apply("/api/v1/namespaces/default/configmaps/new", cm("default", "new")).json();
  CHECK(std::stoll(next["metadata"]["resourceVersion"].get<std::string>()) >
        std::stoll(kept["metadata"]["resourceVersion"].get<std::string>()));
}

TEST_CASE("a taken port is refused at start") {
  Fleet f(fast());
  SimOptions o = fast();
  o.port = f.sim->port();
  TempDir d;
  o.dir = d.path;
  emco::sim::Simulator second(o);
  CHECK_THROWS_AS(second.start(), emco::Error);
}

TEST_CASE("nulls in an applied configuration unset fields instead of failing") {
  Fleet f(fast());
  Http c = f.client("cluster-1");
  json d = deployment("default", "web", 2, "nginx");
  d["metadata"]["labels"] = {{"app", "web"}, {"tier", "front"}};
  REQUIRE(c.apply("/apis/apps/v1/namespaces/default/deployments/web", d).status == 201);
  json again = deployment("default", "web", 2, "nginx");
  again["metadata"]["labels"] = {{"app", "web"}, {"tier", nullptr}};
  again["metadata"]["annotations"] = nullptr;
  again["spec"]["strategy"] = nullptr;
  again["spec"]["template"]["spec"]["containers"][0]["resources"] = nullptr;
  again["spec"]["template"]["spec"]["containers"][0]["args"] = nullptr;
  again["status"] = nullptr;
  again["metadata"]["creationTimestamp"] = nullptr;  // as `kubectl create --dry-run -o yaml` writes it
  again["spec"]["template"]["metadata"]["creationTimestamp"] = nullptr;
  again["spec"]["template"]["spec"]["containers"][0]["env"] = nullptr;
  again["spec"]["template"]["spec"]["volumes"] = json::array({nullptr});
  auto r = c.apply("/apis/apps/v1/namespaces/default/deployments/web", again);
  INFO(r.body);
  REQUIRE(r.status == 200);
  json live = f.sim->get("cluster-1", "apps/v1", "Deployment", "default", "web");
  CHECK(live["metadata"]["labels"] == json({{"app", "web"}}));  // the manager's own field, now unset
  // What remains of them is the server's: the controller's revision
  // annotation, and the strategy defaulted again.
  CHECK(live["metadata"]["annotations"].size() == 1);
  CHECK(live["metadata"]["annotations"].contains("deployment.kubernetes.io/revision"));
  CHECK(live["spec"]["strategy"] ==
        json::parse(R"({"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}})"));
  CHECK_FALSE(live["spec"]["template"]["spec"]["containers"][0].contains("args"));
  // A null on create, and in a list item.
  json cmap = {{"apiVersion", "v1"},
               {"kind", "ConfigMap"},
               {"metadata", {{"name", "n"}, {"namespace", "default"}, {"labels", nullptr}}},
               {"data", {{"a", "1"}, {"b", nullptr}}}};
  auto created = c.apply("/api/v1/namespaces/default/configmaps/n", cmap);
  INFO(created.body);
  REQUIRE(created.status == 201);
  CHECK(f.sim->get("cluster-1", "v1", "ConfigMap", "default", "n")["data"] == json({{"a", "1"}}));
  // Another manager's field is not touched by this manager's null.
  json other = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "n"}, {"namespace", "default"}}},
                {"data", {{"c", "3"}}}};
  REQUIRE(c.apply("/api/v1/namespaces/default/configmaps/n", other, "other").status == 200);
  json mine = cmap;
  mine["data"]["c"] = nullptr;
  REQUIRE(c.apply("/api/v1/namespaces/default/configmaps/n", mine).status == 200);
  CHECK(f.sim->get("cluster-1", "v1", "ConfigMap", "default", "n")["data"] == json({{"a", "1"}, {"c", "3"}}));
}

TEST_CASE("protobuf bodies: zero values are unset, unknown fields with values and unknown kinds are refused") {
  Fleet f(fast());
  Http c = f.client("cluster-1");
  const std::string pb = "application/vnd.kubernetes.protobuf";
  // A ConfigMap with an empty uid (zero: left out), immutable=false (a
  // pointer: kept), an unknown field carrying only zeros (ignored).
  std::string meta = pb_bytes(1, "pb") + pb_bytes(5, "") + pb_bytes(8, "");
  std::string raw = pb_bytes(1, meta) + pb_bytes(2, pb_bytes(1, "a") + pb_bytes(2, "b")) + pb_int(4, 0) +
                    pb_bytes(42, pb_int(1, 0));
  auto ok = c.request("POST", "/api/v1/namespaces/default/configmaps", pb_envelope("v1", "ConfigMap", raw), pb);
  INFO(ok.body);
  REQUIRE(ok.status == 201);
  json stored = f.sim->get("cluster-1", "v1", "ConfigMap", "default", "pb");
  CHECK(stored["data"] == json({{"a", "b"}}));
  CHECK(stored["immutable"] == false);
  CHECK(stored["metadata"]["uid"] != "");

  std::string lossy = pb_bytes(1, pb_bytes(1, "lossy")) + pb_bytes(42, "something");
  auto refused = c.request("POST", "/api/v1/namespaces/default/configmaps", pb_envelope("v1", "ConfigMap", lossy), pb);
  CHECK(refused.status == 415);
  CHECK(refused.json()["message"] == "protobuf field 42 of ConfigMap: not supported by the simulator; send JSON");
  CHECK(f.sim->get("cluster-1", "v1", "ConfigMap", "default", "lossy").is_null());

  auto unknown_kind = c.request("POST", "/api/v1/namespaces/default/endpoints",
                                pb_envelope("v1", "Endpoints", pb_bytes(1, pb_bytes(1, "e"))), pb);
  CHECK(unknown_kind.status == 415);
  CHECK(unknown_kind.json()["message"] == "the simulator cannot read protobuf bodies of Endpoints (v1); send JSON");
  auto garbage = c.request("POST", "/api/v1/namespaces/default/configmaps", std::string("k8s\0\xff", 5), pb);
  CHECK(garbage.status == 415);
}
