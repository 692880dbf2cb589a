// The simulated controllers: owned ReplicaSets and Pods, readiness after the
// ready delay, rollouts and rollbacks, cascade deletion by DeleteOptions
// (JSON and protobuf), and Table answers with a real server's columns.

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "core/util/error.hpp"
#include "helpers.hpp"

using nlohmann::json;
using namespace simtest;
using emco::sim::SimOptions;

namespace {

SimOptions with_delay(int ready_delay_ms) {
  SimOptions o;
  o.clusters = 1;
  o.ready_delay_ms = ready_delay_ms;
  o.finalize_delay_ms = 0;
  return o;
}

json deployment(const std::string& name, int replicas, const std::string& image) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"matchLabels", {{"app", name}}}}},
            {"template",
             {{"metadata", {{"labels", {{"app", name}}}}},
              {"spec", {{"containers", {{{"name", name}, {"image", image}}}}}}}}}}};
}

const char* k_deploy = "/apis/apps/v1/namespaces/default/deployments/";

void wait_until(const std::function<bool()>& cond, int ms = 5000) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!cond() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

std::string annotation(const json& obj, const std::string& key) {
  return obj["metadata"].value("annotations", json::object()).value(key, "");
}

bool owned_by(const json& obj, const json& owner) {
  for (const auto& r : obj["metadata"].value("ownerReferences", json::array()))
    if (r["uid"] == owner["metadata"]["uid"] && r.value("controller", false)) return true;
  return false;
}

bool condition(const json& obj, const std::string& type) {
  for (const auto& c : obj["status"].value("conditions", json::array()))
    if (c["type"] == type) return c["status"] == "True";
  return false;
}

std::vector<std::string> column_names(const json& table) {
  std::vector<std::string> out;
  for (const auto& c : table["columnDefinitions"])
    if (c["priority"] == 0) out.push_back(c["name"]);
  return out;
}

}  // namespace

TEST_CASE("a Deployment owns a ReplicaSet per template, which owns the Pods, and a rollback reuses the old one") {
  Fleet f(with_delay(0));
  Http c = f.client("cluster-1");
  REQUIRE(c.apply(std::string(k_deploy) + "web", deployment("web", 2, "nginx:1")).status == 201);
  json d = f.sim->get("cluster-1", "apps/v1", "Deployment", "default", "web");
  auto rs = f.sim->list("cluster-1", "apps/v1", "ReplicaSet", "default");
  REQUIRE(rs.size() == 1);
  std::string hash = rs[0]["metadata"]["labels"]["pod-template-hash"];
  CHECK(rs[0]["metadata"]["name"] == "web-" + hash);
  CHECK(owned_by(rs[0], d));
  CHECK(rs[0]["metadata"]["ownerReferences"][0]["kind"] == "Deployment");
  CHECK(annotation(rs[0], "deployment.kubernetes.io/revision") == "1");
  CHECK(rs[0]["spec"]["replicas"] == 2);
  CHECK(rs[0]["spec"]["selector"]["matchLabels"]["pod-template-hash"] == hash);
  CHECK(rs[0]["status"]["readyReplicas"] == 2);
  CHECK(rs[0]["status"]["observedGeneration"] == rs[0]["metadata"]["generation"]);
  auto pods = f.sim->list("cluster-1", "v1", "Pod", "default");
  REQUIRE(pods.size() == 2);
  for (const auto& p : pods) {
    CHECK(owned_by(p, rs[0]));
    CHECK(p["metadata"]["labels"]["app"] == "web");
    CHECK(p["metadata"]["labels"]["pod-template-hash"] == hash);
    CHECK(p["status"]["phase"] == "Running");
    CHECK(condition(p, "Ready"));
    CHECK(p["spec"]["nodeName"] == "cluster-1-node-1");
  }
  // Server defaults helm's ready checker dereferences.
  CHECK(d["spec"]["strategy"]["type"] == "RollingUpdate");
  CHECK(d["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == "25%");
  CHECK(d["status"]["readyReplicas"] == 2);
  CHECK(d["status"]["updatedReplicas"] == 2);
  CHECK(d["status"]["availableReplicas"] == 2);
  CHECK(d["status"]["observedGeneration"] == 1);
  CHECK(annotation(d, "deployment.kubernetes.io/revision") == "1");
  CHECK(condition(d, "Available"));

  // A new template: a second ReplicaSet, the first scaled to 0.
  c.apply(std::string(k_deploy) + "web", deployment("web", 2, "nginx:2"));
  d = f.sim->get("cluster-1", "apps/v1", "Deployment", "default", "web");
  rs = f.sim->list("cluster-1", "apps/v1", "ReplicaSet", "default");
  REQUIRE(rs.size() == 2);
  auto by_hash = [&](const std::string& h) {
    for (const auto& r : rs)
      if (r["metadata"]["labels"]["pod-template-hash"] == h) return r;
    return json();
  };
  json first = by_hash(hash);
  json second = rs[0]["metadata"]["name"] == first["metadata"]["name"] ? rs[1] : rs[0];
  CHECK(first["spec"]["replicas"] == 0);
  CHECK(second["spec"]["replicas"] == 2);
  CHECK(annotation(second, "deployment.kubernetes.io/revision") == "2");
  CHECK(annotation(d, "deployment.kubernetes.io/revision") == "2");
  CHECK(d["status"]["observedGeneration"] == 2);
  pods = f.sim->list("cluster-1", "v1", "Pod", "default");
  REQUIRE(pods.size() == 2);
  for (const auto& p : pods) CHECK(p["spec"]["containers"][0]["image"] == "nginx:2");

  // Back to the first template: its ReplicaSet again, as the newest revision.
  c.apply(std::string(k_deploy) + "web", deployment("web", 2, "nginx:1"));
  rs = f.sim->list("cluster-1", "apps/v1", "ReplicaSet", "default");
  CHECK(rs.size() == 2);
  first = by_hash(hash);
  CHECK(first["spec"]["replicas"] == 2);
  CHECK(annotation(first, "deployment.kubernetes.io/revision") == "3");
  d = f.sim->get("cluster-1", "apps/v1", "Deployment", "default", "web");
  CHECK(annotation(d, "deployment.kubernetes.io/revision") == "3");

  // Scaling changes the Pods, and a deleted Pod is replaced.
  c.apply(std::string(k_deploy) + "web", deployment("web", 3, "nginx:1"));
  pods = f.sim->list("cluster-1", "v1", "Pod", "default");
  REQUIRE(pods.size() == 3);
  std::string victim = pods[0]["metadata"]["name"];
  CHECK(c.request("DELETE", "/api/v1/namespaces/default/pods/" + victim).status == 200);
  pods = f.sim->list("cluster-1", "v1", "Pod", "default");
  CHECK(pods.size() == 3);
  for (const auto& p : pods) CHECK(p["metadata"]["name"] != victim);
}

TEST_CASE("Pods become ready after the ready delay and their owners' statuses follow") {
  Fleet f(with_delay(300));
  Http c = f.client("cluster-1");
  auto created = c.apply(std::string(k_deploy) + "web", deployment("web", 2, "nginx")).json();
  CHECK(created["status"]["readyReplicas"] == 0);
  CHECK(created["status"]["updatedReplicas"] == 2);
  CHECK(created["status"]["unavailableReplicas"] == 2);
  CHECK_FALSE(condition(created, "Available"));
  auto pods = f.sim->list("cluster-1", "v1", "Pod", "default");
  REQUIRE(pods.size() == 2);
  CHECK(pods[0]["status"]["phase"] == "Pending");
  CHECK(pods[0]["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ContainerCreating");

  json job = json::parse(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"migrate","namespace":"default"},
    "spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"m","image":"busybox"}]}}}})");
  json job_created = c.apply("/apis/batch/v1/namespaces/default/jobs/migrate", job).json();
  std::string job_uid = job_created["metadata"]["uid"];
  CHECK(job_created["spec"]["backoffLimit"] == 6);
  CHECK(job_created["spec"]["completions"] == 1);
  CHECK(job_created["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"] == job_uid);
  CHECK(job_created["status"]["active"] == 1);
  json sts = json::parse(R"({"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"db","namespace":"default"},
    "spec":{"replicas":3,"serviceName":"db","selector":{"matchLabels":{"a":"db"}},
      "template":{"metadata":{"labels":{"a":"db"}},"spec":{"containers":[{"name":"c","image":"pg"}]}}}})");
  c.apply("/apis/apps/v1/namespaces/default/statefulsets/db", sts);
  json ds = json::parse(R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"agent","namespace":"default"},
    "spec":{"selector":{"matchLabels":{"a":"agent"}},
      "template":{"metadata":{"labels":{"a":"agent"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}})");
  c.apply("/apis/apps/v1/namespaces/default/daemonsets/agent", ds);

  auto get = [&](const char* api, const char* kind, const char* name) {
    return f.sim->get("cluster-1", api, kind, "default", name);
  };
  wait_until([&] { return condition(get("apps/v1", "Deployment", "web"), "Available"); });
  json d = get("apps/v1", "Deployment", "web");
  CHECK(d["status"]["readyReplicas"] == 2);
  CHECK_FALSE(d["status"].contains("unavailableReplicas"));
  wait_until([&] { return condition(get("batch/v1", "Job", "migrate"), "Complete"); });
  json j = get("batch/v1", "Job", "migrate");
  CHECK(j["status"]["succeeded"] == 1);
  CHECK(j["status"].contains("completionTime"));
  CHECK_FALSE(j["status"].contains("active"));
  int job_pods = 0;
  for (const auto& p : f.sim->list("cluster-1", "v1", "Pod", "default"))
    if (p["metadata"]["labels"].value("job-name", "") == "migrate") {
      ++job_pods;
      CHECK(p["status"]["phase"] == "Succeeded");
      CHECK(p["status"]["containerStatuses"][0]["state"]["terminated"]["reason"] == "Completed");
      CHECK(owned_by(p, j));
    }
  CHECK(job_pods == 1);
  wait_until([&] { return get("apps/v1", "StatefulSet", "db")["status"]["readyReplicas"] == 3; });
  json s = get("apps/v1", "StatefulSet", "db");
  CHECK(s["status"]["readyReplicas"] == 3);
  CHECK(s["status"]["updatedReplicas"] == 3);
  CHECK(s["status"]["currentRevision"] == s["status"]["updateRevision"]);
  CHECK(s["spec"]["updateStrategy"]["type"] == "RollingUpdate");
  for (int i = 0; i < 3; ++i) {
    json p = get("v1", "Pod", ("db-" + std::to_string(i)).c_str());
    REQUIRE(p.is_object());
    CHECK(p["spec"]["hostname"] == "db-" + std::to_string(i));
    CHECK(p["spec"]["subdomain"] == "db");
    CHECK(p["metadata"]["labels"]["controller-revision-hash"] == s["status"]["updateRevision"]);
  }
  wait_until([&] { return get("apps/v1", "DaemonSet", "agent")["status"]["numberReady"] == 1; });
  CHECK(get("apps/v1", "DaemonSet", "agent")["status"]["desiredNumberScheduled"] == 1);

  // A StatefulSet's new template replaces its Pods; readiness follows again.
  sts["spec"]["template"]["spec"]["containers"][0]["image"] = "pg:2";
  c.apply("/apis/apps/v1/namespaces/default/statefulsets/db", sts);
  s = get("apps/v1", "StatefulSet", "db");
  CHECK(s["status"]["readyReplicas"] == 0);
  CHECK(get("v1", "Pod", "db-0")["spec"]["containers"][0]["image"] == "pg:2");
  wait_until([&] { return get("apps/v1", "StatefulSet", "db")["status"]["readyReplicas"] == 3; });
  CHECK(get("apps/v1", "StatefulSet", "db")["status"]["observedGeneration"] == 2);
}

TEST_CASE("deletes cascade by ownerReferences as DeleteOptions say, in JSON or protobuf") {
  Fleet f(with_delay(0));
  Http c = f.client("cluster-1");
  const std::string pb = "application/vnd.kubernetes.protobuf";
  auto count = [&](const char* api, const char* kind) { return f.sim->list("cluster-1", api, kind, "default").size(); };

  c.apply(std::string(k_deploy) + "bg", deployment("bg", 2, "x"));
  REQUIRE(count("v1", "Pod") == 2);
  CHECK(c.request("DELETE", std::string(k_deploy) + "bg", R"({"propagationPolicy":"Background"})").status == 200);
  CHECK(count("apps/v1", "ReplicaSet") == 0);
  CHECK(count("v1", "Pod") == 0);

  c.apply(std::string(k_deploy) + "fg", deployment("fg", 1, "x"));
  CHECK(c.request("DELETE", std::string(k_deploy) + "fg",
                  R"({"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground"})")
            .status == 200);
  CHECK(count("v1", "Pod") == 0);

  // Orphan, in protobuf as typed clients send it: the ReplicaSet stays
  // (without its owner) and keeps its Pods.
  c.apply(std::string(k_deploy) + "orphan", deployment("orphan", 2, "x"));
  auto del = c.request("DELETE", std::string(k_deploy) + "orphan",
                       pb_envelope("apps/v1", "DeleteOptions", pb_bytes(4, "Orphan")), pb);
  INFO(del.body);
  CHECK(del.status == 200);
  auto rs = f.sim->list("cluster-1", "apps/v1", "ReplicaSet", "default");
  REQUIRE(rs.size() == 1);
  CHECK_FALSE(rs[0]["metadata"].contains("ownerReferences"));
  CHECK(count("v1", "Pod") == 2);
  // orphanDependents, the older spelling.
  std::string rs_name = rs[0]["metadata"]["name"];
  CHECK(c.request("DELETE", "/apis/apps/v1/namespaces/default/replicasets/" + rs_name, R"({"orphanDependents":true})")
            .status == 200);
  CHECK(count("v1", "Pod") == 2);

  // helm deletes its release Secrets through a typed client: protobuf
  // DeleteOptions with a grace period and a precondition.
  json secret = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"metadata", {{"name", "sh.helm.release.v1.shop.v1"}, {"namespace", "default"},
                               {"labels", {{"owner", "helm"}, {"name", "shop"}, {"status", "deployed"}}}}},
                 {"type", "helm.sh/release.v1"},
                 {"data", {{"release", "e30="}}}};
  auto stored = c.apply("/api/v1/namespaces/default/secrets/sh.helm.release.v1.shop.v1", secret).json();
  auto listed = c.get("/api/v1/namespaces/default/secrets?labelSelector=owner%3Dhelm%2Cname%3Dshop").json();
  CHECK(listed["items"].size() == 1);
  CHECK(c.get("/api/v1/namespaces/default/secrets?labelSelector=owner%3Dhelm%2Cname%3Dother").json()["items"].empty());
  std::string wrong_uid = pb_bytes(2, pb_bytes(1, "not-the-uid"));
  auto conflict = c.request("DELETE", "/api/v1/namespaces/default/secrets/sh.helm.release.v1.shop.v1",
                            pb_envelope("v1", "DeleteOptions", pb_int(1, 0) + wrong_uid), pb);
  CHECK(conflict.status == 409);
  std::string uid = stored["metadata"]["uid"];
  auto deleted = c.request("DELETE", "/api/v1/namespaces/default/secrets/sh.helm.release.v1.shop.v1",
                           pb_envelope("v1", "DeleteOptions", pb_int(1, 0) + pb_bytes(2, pb_bytes(1, uid)) +
                                                                  pb_bytes(4, "Background")),
                           pb);
  CHECK(deleted.status == 200);
  CHECK(c.get("/api/v1/namespaces/default/secrets/sh.helm.release.v1.shop.v1").status == 404);

  secret["metadata"]["name"] = "s2";
  REQUIRE(c.apply("/api/v1/namespaces/default/secrets/s2", secret).status == 201);
  auto garbage = c.request("DELETE", "/api/v1/namespaces/default/secrets/s2", std::string("k8s\0\xff", 5), pb);
  CHECK(garbage.status == 400);
  CHECK(garbage.json()["message"].get<std::string>().rfind("the body of the request must be DeleteOptions", 0) == 0);
  auto not_options = c.request("DELETE", "/api/v1/namespaces/default/secrets/s2",
                               pb_envelope("v1", "ConfigMap", pb_bytes(1, pb_bytes(1, "x"))), pb);
  CHECK(not_options.status == 400);
}

TEST_CASE("Tables carry the columns a real server prints for the common kinds") {
  Fleet f(with_delay(0));
  Http c = f.client("cluster-1");
  const std::string accept =
      "Accept: application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
      "application/json";
  c.apply(std::string(k_deploy) + "web", deployment("web", 2, "nginx"));
  c.apply("/api/v1/namespaces/default/services/web",
          json::parse(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"default"},
            "spec":{"selector":{"app":"web"},"ports":[{"port":80},{"port":53,"protocol":"UDP"}]}})"));
  c.apply("/api/v1/namespaces/default/configmaps/cfg",
          json::parse(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"default"},
            "data":{"a":"1","b":"2"}})"));
  c.apply("/api/v1/namespaces/default/secrets/pw",
          json::parse(R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"pw","namespace":"default"},
            "stringData":{"p":"x"}})"));
  c.apply("/apis/batch/v1/namespaces/default/jobs/once",
          json::parse(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"once","namespace":"default"},
            "spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"x"}]}}}})"));
  auto tbl = [&](const std::string& path) {
    auto r = c.get(path, {accept});
    REQUIRE(r.status == 200);
    json t = r.json();
    REQUIRE(t["kind"] == "Table");
    REQUIRE(t["apiVersion"] == "meta.k8s.io/v1");
    return t;
  };
  using V = std::vector<std::string>;

  json t = tbl("/apis/apps/v1/namespaces/default/deployments");
  CHECK(column_names(t) == V{"Name", "Ready", "Up-to-date", "Available", "Age"});
  CHECK(t["rows"][0]["cells"][0] == "web");
  CHECK(t["rows"][0]["cells"][1] == "2/2");
  CHECK(t["rows"][0]["cells"][2] == 2);
  CHECK(t["rows"][0]["cells"][3] == 2);
  CHECK(t["rows"][0]["cells"][5] == "web");   // Containers (-o wide)
  CHECK(t["rows"][0]["cells"][6] == "nginx"); // Images
  CHECK(t["rows"][0]["cells"][7] == "app=web");
  CHECK(t["rows"][0]["object"]["kind"] == "PartialObjectMetadata");
  CHECK_FALSE(t["rows"][0]["object"]["metadata"].contains("managedFields"));

  t = tbl("/api/v1/namespaces/default/pods");
  CHECK(column_names(t) == V{"Name", "Ready", "Status", "Restarts", "Age"});
  CHECK(t["rows"].size() == 3);  // two web Pods and the Job's
  bool running = false, completed = false;
  for (const auto& row : t["rows"]) {
    if (row["cells"][2] == "Running") running = row["cells"][1] == "1/1";
    if (row["cells"][2] == "Completed") completed = row["cells"][1] == "0/1";
    CHECK(row["cells"][3] == "0");
  }
  CHECK(running);
  CHECK(completed);

  t = tbl("/api/v1/namespaces/default/services");
  CHECK(column_names(t) == V{"Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age"});
  CHECK(t["rows"][0]["cells"][1] == "ClusterIP");
  CHECK(t["rows"][0]["cells"][3] == "<none>");
  CHECK(t["rows"][0]["cells"][4] == "80/TCP,53/UDP");

  t = tbl("/apis/apps/v1/namespaces/default/replicasets");
  CHECK(column_names(t) == V{"Name", "Desired", "Current", "Ready", "Age"});
  CHECK(t["rows"][0]["cells"][1] == 2);
  t = tbl("/apis/batch/v1/namespaces/default/jobs");
  CHECK(column_names(t) == V{"Name", "Status", "Completions", "Duration", "Age"});
  CHECK(t["rows"][0]["cells"][1] == "Complete");
  CHECK(t["rows"][0]["cells"][2] == "1/1");
  t = tbl("/api/v1/namespaces/default/configmaps");
  CHECK(column_names(t) == V{"Name", "Data", "Age"});
  CHECK(t["rows"][0]["cells"][1] == 2);
  t = tbl("/api/v1/namespaces/default/secrets");
  CHECK(column_names(t) == V{"Name", "Type", "Data", "Age"});
  CHECK(t["rows"][0]["cells"][1] == "Opaque");
  t = tbl("/api/v1/namespaces");
  CHECK(column_names(t) == V{"Name", "Status", "Age"});
  CHECK(t["rows"][0]["cells"][1] == "Active");
  CHECK(column_names(tbl("/apis/apps/v1/namespaces/default/statefulsets")) == V{"Name", "Ready", "Age"});
  CHECK(column_names(tbl("/apis/apps/v1/namespaces/default/daemonsets")) ==
        V{"Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Node Selector", "Age"});
  // Kinds without a printer: Name and Age.
  CHECK(column_names(tbl("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles")) == V{"Name", "Age"});
  // One object: a one-row Table.
  t = tbl("/apis/apps/v1/namespaces/default/deployments/web");
  CHECK(t["rows"].size() == 1);
  CHECK(t["rows"][0]["cells"][1] == "2/2");
}

TEST_CASE("Services get cluster IPs, node ports and load-balancer IPs, unique per cluster") {
  SimOptions o = with_delay(0);
  o.lb_delay_ms = 300;
  o.lb_ip_range = "192.0.2.10-192.0.2.11";
  Fleet f(o);
  Http c = f.client("cluster-1");
  auto service = [](const std::string& name, const std::string& type, json ports) {
    return json{{"apiVersion", "v1"},
                {"kind", "Service"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"spec", {{"type", type}, {"selector", {{"app", name}}}, {"ports", ports}}}};
  };
  auto path = [](const std::string& name) { return "/api/v1/namespaces/default/services/" + name; };

  json a = c.apply(path("a"), service("a", "ClusterIP", {{{"port", 80}}})).json();
  json b = c.apply(path("b"), service("b", "ClusterIP", {{{"port", 80}}})).json();
  CHECK(a["spec"]["clusterIP"] == "10.96.0.10");
  CHECK(b["spec"]["clusterIP"] == "10.96.0.11");
  CHECK_FALSE(a["spec"]["ports"][0].contains("nodePort"));
  json taken = service("c", "ClusterIP", {{{"port", 80}}});
  taken["spec"]["clusterIP"] = "10.96.0.10";
  auto refused_ip = c.apply(path("c"), taken);
  CHECK(refused_ip.status == 422);
  CHECK(refused_ip.json()["message"] ==
        "Service \"c\" is invalid: spec.clusterIPs: Invalid value: [\"10.96.0.10\"]: failed to allocate IP 10.96.0.10: "
        "provided IP is already allocated");
  taken["spec"]["clusterIP"] = "10.96.7.7";
  CHECK(c.apply(path("c"), taken).json()["spec"]["clusterIP"] == "10.96.7.7");

  // NodePorts: allocated from 30000, a requested one honoured, a taken one refused.
  json np = c.apply(path("np"), service("np", "NodePort", {{{"port", 80}}, {{"port", 443}, {"nodePort", 31443}}})).json();
  CHECK(np["spec"]["ports"][0]["nodePort"] == 30000);
  CHECK(np["spec"]["ports"][1]["nodePort"] == 31443);
  auto clash = c.apply(path("np2"), service("np2", "NodePort", {{{"port", 80}, {"nodePort", 31443}}}));
  CHECK(clash.status == 422);
  CHECK(clash.json()["message"] ==
        "Service \"np2\" is invalid: spec.ports[0].nodePort: Invalid value: 31443: provided port is already allocated");
  CHECK(c.apply(path("np2"), service("np2", "NodePort", {{{"port", 80}, {"nodePort", 29999}}})).status == 422);
  // A re-apply keeps the ports it was given.
  json again = c.apply(path("np"), service("np", "NodePort", {{{"port", 80}}, {{"port", 443}, {"nodePort", 31443}}})).json();
  CHECK(again["spec"]["ports"][0]["nodePort"] == 30000);

  // LoadBalancers: node ports at once, the ingress IP after the delay, from
  // the range; a third waits (pending) when the range is used up.
  json lb1 = c.apply(path("lb1"), service("lb1", "LoadBalancer", {{{"port", 80}}})).json();
  CHECK(lb1["spec"]["ports"][0]["nodePort"] == 30001);
  CHECK_FALSE(lb1["status"]["loadBalancer"].contains("ingress"));
  c.apply(path("lb2"), service("lb2", "LoadBalancer", {{{"port", 80}}}));
  c.apply(path("lb3"), service("lb3", "LoadBalancer", {{{"port", 80}}}));
  auto ingress = [&](const char* name) {
    json s = f.sim->get("cluster-1", "v1", "Service", "default", name);
    auto list = s["status"]["loadBalancer"].value("ingress", json::array());
    return list.empty() ? std::string() : list[0].value("ip", "");
  };
  wait_until([&] { return !ingress("lb1").empty() && !ingress("lb2").empty(); });
  std::set<std::string> ips{ingress("lb1"), ingress("lb2")};
  CHECK(ips == std::set<std::string>{"192.0.2.10", "192.0.2.11"});
  CHECK(ingress("lb3").empty());
  auto table = c.get("/api/v1/namespaces/default/services/lb3",
                     {"Accept: application/json;as=Table;v=v1;g=meta.k8s.io"}).json();
  CHECK(table["rows"][0]["cells"][3] == "<pending>");
  CHECK(table["rows"][0]["cells"][4] == "80:30003/TCP");
  // Deleting a Service frees what it held.
  c.request("DELETE", path("np"));
  CHECK(c.apply(path("np3"), service("np3", "NodePort", {{{"port", 80}, {"nodePort", 31443}}})).status == 201);
}

TEST_CASE("Nodes: listed with capacity and zones, DaemonSets run a Pod on each, other Pods spread over them") {
  SimOptions o = with_delay(0);
  o.nodes = 3;
  o.version_minor = 30;
  Fleet f(o);
  Http c = f.client("cluster-1");
  json nodes = c.get("/api/v1/nodes").json();
  REQUIRE(nodes["items"].size() == 3);
  json n1 = nodes["items"][0];
  CHECK(n1["metadata"]["name"] == "cluster-1-node-1");
  CHECK(n1["metadata"]["labels"]["topology.kubernetes.io/zone"] == "zone-a");
  CHECK(nodes["items"][1]["metadata"]["labels"]["topology.kubernetes.io/zone"] == "zone-b");
  CHECK(n1["status"]["capacity"]["cpu"] == "4");
  CHECK(n1["status"]["allocatable"]["pods"] == "110");
  CHECK(condition(n1, "Ready"));
  CHECK(n1["status"]["nodeInfo"]["kubeletVersion"].get<std::string>().rfind("v1.30.", 0) == 0);
  json table = c.get("/api/v1/nodes", {"Accept: application/json;as=Table;v=v1;g=meta.k8s.io"}).json();
  CHECK(column_names(table) == std::vector<std::string>{"Name", "Status", "Roles", "Age", "Version"});
  CHECK(table["rows"][0]["cells"][1] == "Ready");
  CHECK(table["rows"][0]["cells"][2] == "<none>");

  json ds = json::parse(R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"agent","namespace":"default"},
    "spec":{"selector":{"matchLabels":{"a":"agent"}},
      "template":{"metadata":{"labels":{"a":"agent"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}})");
  json got = c.apply("/apis/apps/v1/namespaces/default/daemonsets/agent", ds).json();
  CHECK(got["status"]["desiredNumberScheduled"] == 3);
  CHECK(got["status"]["numberReady"] == 3);
  c.apply(std::string(k_deploy) + "web", deployment("web", 3, "nginx"));
  std::map<std::string, std::set<std::string>> nodes_of;  // app -> nodes
  for (const auto& p : f.sim->list("cluster-1", "v1", "Pod", "default"))
    nodes_of[p["metadata"]["labels"].value("a", p["metadata"]["labels"].value("app", ""))].insert(
        p["spec"]["nodeName"]);
  CHECK(nodes_of["agent"].size() == 3);
  CHECK(nodes_of["web"].size() == 3);
}

TEST_CASE("emco sim node adds, labels and resizes Nodes of a running simulator, and of one starting") {
  SimOptions o = with_delay(0);
  o.clusters = 2;
  o.nodes = 1;
  Fleet f(o);
  Http c = f.client("cluster-1");
  json ds = json::parse(R"({"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"agent","namespace":"default"},
    "spec":{"selector":{"matchLabels":{"a":"agent"}},
      "template":{"metadata":{"labels":{"a":"agent"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}})");
  c.apply("/apis/apps/v1/namespaces/default/daemonsets/agent", ds);
  auto node = [&](const std::string& cluster, const std::string& name) {
    return f.sim->get(cluster, "v1", "Node", "", name);
  };
  using emco::sim::run_sim_node;
  run_sim_node({f.sim->dir(), "add", "cluster-1", "gpu-1", {}});
  run_sim_node({f.sim->dir(), "label", "cluster-1", "gpu-1", {"accelerator=nvidia", "kubernetes.io/os-"}});
  run_sim_node({f.sim->dir(), "set", "*", "cluster-1-node-1", {"cpu=16", "memory=64Gi"}});
  wait_until([&] { return node("cluster-1", "gpu-1").is_object() && node("cluster-1", "cluster-1-node-1")["status"]["capacity"]["cpu"] == "16"; });
  json gpu = node("cluster-1", "gpu-1");
  REQUIRE(gpu.is_object());
  CHECK(condition(gpu, "Ready"));
  CHECK(gpu["metadata"]["labels"]["accelerator"] == "nvidia");
  CHECK_FALSE(gpu["metadata"]["labels"].contains("kubernetes.io/os"));
  json n1 = node("cluster-1", "cluster-1-node-1");
  CHECK(n1["status"]["capacity"]["cpu"] == "16");
  CHECK(n1["status"]["allocatable"]["memory"] == "64Gi");
  CHECK(node("cluster-2", "gpu-1").is_null());  // the add named cluster-1 only
  CHECK(f.sim->get("cluster-1", "apps/v1", "DaemonSet", "default", "agent")["status"]["desiredNumberScheduled"] == 2);

  // Capacity and allocatable one at a time; a plain setting replaces both again.
  run_sim_node({f.sim->dir(), "set", "cluster-1", "gpu-1", {"capacity:cpu=8", "allocatable:cpu=7500m", "nvidia.com/gpu=2"}});
  wait_until([&] { return node("cluster-1", "gpu-1")["status"]["allocatable"]["cpu"] == "7500m"; });
  gpu = node("cluster-1", "gpu-1");
  CHECK(gpu["status"]["capacity"]["cpu"] == "8");
  CHECK(gpu["status"]["capacity"]["nvidia.com/gpu"] == "2");
  CHECK(gpu["status"]["allocatable"]["nvidia.com/gpu"] == "2");
  run_sim_node({f.sim->dir(), "set", "cluster-1", "gpu-1", {"cpu=2"}});
  wait_until([&] { return node("cluster-1", "gpu-1")["status"]["allocatable"]["cpu"] == "2"; });
  CHECK(node("cluster-1", "gpu-1")["status"]["capacity"]["cpu"] == "2");
  try {
    run_sim_node({f.sim->dir(), "set", "cluster-1", "gpu-1", {"capacity:=1"}});
    FAIL("accepted");
  } catch (const emco::Error& e) {
    CHECK(e.kind() == emco::ErrorKind::usage);
  }

  try {
    run_sim_node({f.sim->dir(), "label", "cluster-1", "gpu-1", {"novalue"}});
    FAIL("accepted");
  } catch (const emco::Error& e) {
    CHECK(e.kind() == emco::ErrorKind::usage);
    CHECK(e.hint() == "give KEY=VALUE to set a label, KEY- to remove it");
  }
  CHECK_THROWS_AS(run_sim_node({f.sim->dir(), "remove", "cluster-1", "gpu-1", {}}), emco::Error);

  // Recorded before a start, applied at it.
  TempDir d;
  run_sim_node({d.path, "label", "cluster-1", "cluster-1-node-1", {"tier=edge"}});
  run_sim_node({d.path, "set", "cluster-1", "cluster-1-node-1", {"allocatable:memory=2Gi"}});
  SimOptions later = with_delay(0);
  later.nodes = 1;
  later.dir = d.path;
  emco::sim::Simulator s(later);
  s.start();
  json started = s.get("cluster-1", "v1", "Node", "", "cluster-1-node-1");
  CHECK(started["metadata"]["labels"]["tier"] == "edge");
  CHECK(started["status"]["allocatable"]["memory"] == "2Gi");
  CHECK(started["status"]["capacity"]["memory"] == "16393216Ki");  // the seeded capacity stays
}

TEST_CASE("preinstall cert-manager and kncc: their namespace and CRDs, ClusterIssuer cluster-scoped") {
  SimOptions o = with_delay(0);
  o.clusters = 1;
  o.preinstall = {"cert-manager", "kncc"};
  Fleet f(o);
  Http c = f.client("cluster-1");
  CHECK(c.get("/api/v1/namespaces/cert-manager").status == 200);
  json crds = c.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").json();
  std::map<std::string, std::string> scopes;
  for (const auto& crd : crds["items"]) scopes[crd["metadata"]["name"].get<std::string>()] = crd["spec"]["scope"].get<std::string>();
  CHECK(scopes == std::map<std::string, std::string>{{"certificaterequests.cert-manager.io", "Namespaced"},
                                                     {"certificates.cert-manager.io", "Namespaced"},
                                                     {"clusterissuers.cert-manager.io", "Cluster"},
                                                     {"configctrls.kncc.k8sappconfig.com.gitlab.com", "Namespaced"},
                                                     {"issuers.cert-manager.io", "Namespaced"}});
  // A request whose issuer does not exist stays Ready=False (Pending), approved.
  json cr = {{"apiVersion", "cert-manager.io/v1"},
             {"kind", "CertificateRequest"},
             {"metadata", {{"name", "r1"}, {"namespace", "default"}}},
             {"spec", {{"request", "eA=="}, {"issuerRef", {{"name", "nope"}, {"kind", "ClusterIssuer"}, {"group", "cert-manager.io"}}}}}};
  const std::string path = "/apis/cert-manager.io/v1/namespaces/default/certificaterequests/r1";
  REQUIRE(c.apply(path, cr).status == 201);
  json got = c.get(path).json();
  REQUIRE(got["status"]["conditions"].size() == 2);
  CHECK(got["status"]["conditions"][0]["type"] == "Approved");
  CHECK(got["status"]["conditions"][1]["reason"] == "Pending");
  CHECK_FALSE(got["status"].contains("certificate"));
  // The issuer appears with a CA secret that does not parse: the request fails as cert-manager's would.
  REQUIRE(c.apply("/api/v1/namespaces/cert-manager/secrets/bad-ca",
                  {{"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", {{"name", "bad-ca"}, {"namespace", "cert-manager"}}},
                   {"data", {{"tls.crt", "eA=="}, {"tls.key", "eA=="}}}})
              .status == 201);
  REQUIRE(c.apply("/apis/cert-manager.io/v1/clusterissuers/nope",
                  {{"apiVersion", "cert-manager.io/v1"}, {"kind", "ClusterIssuer"}, {"metadata", {{"name", "nope"}}},
                   {"spec", {{"ca", {{"secretName", "bad-ca"}}}}}})
              .status == 201);
  got = c.get(path).json();
  CHECK(got["status"]["conditions"][1]["reason"] == "Failed");
  CHECK(got["status"]["conditions"][1]["message"].get<std::string>().find("error decoding CA secret") != std::string::npos);
}

TEST_CASE("preinstall istio: every cluster starts with istio-system and Istio's CRDs") {
  SimOptions o = with_delay(0);
  o.clusters = 2;
  o.preinstall = {"istio"};
  Fleet f(o);
  for (const char* name : {"cluster-1", "cluster-2"}) {
    Http c = f.client(name);
    CHECK(c.get("/api/v1/namespaces/istio-system").status == 200);
    json crds = c.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").json();
    std::set<std::string> names;
    for (const auto& crd : crds["items"]) names.insert(crd["metadata"]["name"].get<std::string>());
    CHECK(names == std::set<std::string>{"authorizationpolicies.security.istio.io", "destinationrules.networking.istio.io",
                                         "gateways.networking.istio.io", "proxyconfigs.networking.istio.io",
                                         "serviceentries.networking.istio.io", "virtualservices.networking.istio.io"});
  }
  // What emco's traffic controller makes is accepted and kept as sent.
  Http c = f.client("cluster-1");
  json gw = {{"apiVersion", "networking.istio.io/v1beta1"},
             {"kind", "Gateway"},
             {"metadata", {{"name", "http-service-gateway"}, {"namespace", "istio-system"}}},
             {"spec", {{"selector", {{"istio", "ingressgateway"}}},
                       {"servers", json::array({{{"hosts", json::array({"a.b"})}, {"port", {{"number", 15443}}}}})}}}};
  const std::string path = "/apis/networking.istio.io/v1beta1/namespaces/istio-system/gateways/http-service-gateway";
  REQUIRE(c.apply(path, gw).status == 201);
  CHECK(c.get(path).json()["spec"]["servers"][0]["port"]["number"] == 15443);
  CHECK(c.apply("/apis/security.istio.io/v1beta1/namespaces/default/authorizationpolicies/server",
                {{"apiVersion", "security.istio.io/v1beta1"},
                 {"kind", "AuthorizationPolicy"},
                 {"metadata", {{"name", "server"}, {"namespace", "default"}}},
                 {"spec", {{"action", "ALLOW"}}}})
            .status == 201);
}

TEST_CASE("without preinstall there are no Istio types, and an unknown component is refused at start") {
  Fleet f(with_delay(0));
  CHECK(f.client("cluster-1").get("/apis/networking.istio.io/v1beta1/namespaces/default/gateways").status == 404);
  SimOptions o = with_delay(0);
  o.preinstall = {"linkerd"};
  CHECK_THROWS_WITH(Fleet(o), Catch::Contains("'linkerd' is not a component the simulator can preinstall"));
}
