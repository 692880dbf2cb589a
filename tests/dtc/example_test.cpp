// examples/traffic through the emco binary on three simulated clusters
// (Istio's CRDs preinstalled): the server on edge1, the client on edge2.
// Checks what lands on the clusters (NetworkPolicy, the client cluster's
// Service + Endpoints pointing at the server's node IP and NodePort, Istio
// objects), the child context in `emco dig status`, an update moving the
// client to edge3 (the child is recomputed), a terminate (children first),
// and a kill -9 while the child context is being delivered, finished by
// `emco sync`.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/appcontext/appcontext.hpp"
#include "core/store/store.hpp"
#include "core/util/clock.hpp"
#include "sim/sim.hpp"
#include "tests/example_fleet.hpp"
#include "tests/shell.hpp"
#include "tests/test_store.hpp"

using namespace emco;
using nlohmann::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

using test::Ran;
using test::sh;
using test::spawn;

struct Traffic : test::ExampleFleet {
  static sim::SimOptions options(int ready_delay_ms) {
    auto o = test::edge_clusters(3, ready_delay_ms);
    o.nodes = 1;
    o.preinstall = {"istio"};
    return o;
  }

  explicit Traffic(int ready_delay_ms = 50)
      : ExampleFleet("traffic", "dtc", options(ready_delay_ms), "EMCO_SDS_POLL_MS=100") {
    use_sim_clusters();
    init_and_apply({"01-clusters.yaml", "02-project.yaml", "03-app.yaml"}, test::fresh_store());
  }
  json status(const std::string& extra = "") {
    auto r = run("dig status traffic/web-shop/v1/web-shop-dig -o json" + extra);
    INFO(r.out);
    REQUIRE(r.code == 0);
    return json::parse(r.out);
  }
  json get(const std::string& cluster, const std::string& api, const std::string& kind, const std::string& ns,
           const std::string& name) {
    return sim->get(cluster, api, kind, ns, name);
  }
};

}  // namespace

TEST_CASE("examples/traffic: policies, service discovery and Istio objects, then update and terminate", "[dtc][sim][example]") {
  Traffic t;
  auto plan = t.run("dig plan traffic/web-shop/v1/web-shop-dig");
  CHECK(plan.code == 2);  // changes to make
  CHECK(plan.out.find("+ create shop-traffic-server") != std::string::npos);
  CHECK(plan.out.find("+ create http-service-se-client0") != std::string::npos);

  auto deploy = t.run("apply -f 04-deploy.yaml -v values.yaml");
  INFO(deploy.out);
  REQUIRE(deploy.code == 0);

  // NPS: the policy on the server's cluster.
  json np = t.get("edge1", "networking.k8s.io/v1", "NetworkPolicy", "default", "shop-traffic-server");
  REQUIRE(np.is_object());
  CHECK(np["spec"]["podSelector"]["matchLabels"]["app"] == "http-server");
  CHECK(np["spec"]["ingress"][0]["from"][0]["podSelector"]["matchLabels"]["app"] == "http-client");
  // SDS: the client's cluster reaches the server's NodePort on its node.
  json node = t.sim->list("edge1", "v1", "Node").at(0);
  std::string node_ip;
  for (const auto& a : node["status"]["addresses"])
    if (a["type"] == "InternalIP") node_ip = a["address"];
  json server_svc = t.get("edge1", "v1", "Service", "default", "http-service");
  int node_port = server_svc["spec"]["ports"][0]["nodePort"];
  CHECK(node_port == 30083);
  json svc = t.get("edge2", "v1", "Service", "default", "http-service");
  REQUIRE(svc.is_object());
  CHECK(svc["spec"]["clusterIP"] == "None");
  CHECK_FALSE(svc["spec"].contains("selector"));
  CHECK(svc["spec"]["ports"][0]["port"] == 3550);
  json ep = t.get("edge2", "v1", "Endpoints", "default", "http-service");
  REQUIRE(ep.is_object());
  CHECK(ep["subsets"][0]["addresses"][0]["ip"] == node_ip);
  CHECK(ep["subsets"][0]["ports"][0]["port"] == node_port);
  CHECK(t.get("edge3", "v1", "Service", "default", "http-service").is_null());
  // ITS: the server's gateway and the client's service entries.
  CHECK(t.get("edge1", "networking.istio.io/v1beta1", "Gateway", "istio-system", "http-service-gateway").is_object());
  CHECK(t.get("edge1", "security.istio.io/v1beta1", "AuthorizationPolicy", "default", "http-server").is_object());
  json se = t.get("edge2", "networking.istio.io/v1beta1", "ServiceEntry", "default", "http-service-se-client0");
  REQUIRE(se.is_object());
  CHECK(se["spec"]["endpoints"][0]["address"] == "ingress.edge1.example.com");

  // The child context in the status, and on its own.
  json s = t.status();
  REQUIRE(s["ChildContextIDs"].size() == 1);
  std::string child = s["ChildContextIDs"][0];
  CHECK(s["nested"][0]["instance"] == child);
  CHECK(s["nested"][0]["status"] == "Instantiated");
  json cs = t.status(" --instance " + child);
  CHECK(cs["deployedStatus"] == "Instantiated");
  REQUIRE(cs["apps"].size() == 1);
  CHECK(cs["apps"][0]["name"] == "service-discovery");

  // Update: the client moves to edge3; the child follows it.
  {
    std::ifstream in(t.dir / "values.yaml");
    std::string v((std::istreambuf_iterator<char>(in)), {});
    v.replace(v.find("ClientCluster: edge2"), 20, "ClientCluster: edge3");
    std::ofstream(t.dir / "values.yaml") << v;
  }
  REQUIRE(t.run("apply -f 03-app.yaml -v values.yaml").code == 0);
  auto upd = t.run("dig update traffic/web-shop/v1/web-shop-dig");
  INFO(upd.out);
  REQUIRE(upd.code == 0);
  CHECK(t.get("edge2", "v1", "Endpoints", "default", "http-service").is_null());
  CHECK(t.get("edge2", "apps/v1", "Deployment", "default", "http-client").is_null());
  CHECK(t.get("edge3", "v1", "Endpoints", "default", "http-service")["subsets"][0]["ports"][0]["port"] == node_port);
  s = t.status();
  REQUIRE(s["ChildContextIDs"].size() == 1);
  std::string child2 = s["ChildContextIDs"][0];
  CHECK(child2 != child);

  // Terminate: every child first, then the parent.
  const std::string before_terminate = system_clock().now_rfc3339();
  auto term = t.run("delete -f 04-deploy.yaml -v values.yaml");
  INFO(term.out);
  REQUIRE(term.code == 0);
  for (const char* c : {"edge1", "edge2", "edge3"}) {
    CHECK(t.get(c, "v1", "Service", "default", "http-service").is_null());
    CHECK(t.get(c, "v1", "Endpoints", "default", "http-service").is_null());
  }
  CHECK(t.get("edge1", "networking.k8s.io/v1", "NetworkPolicy", "default", "shop-traffic-server").is_null());
  // The order of deletions, from the recorded statuses: the child's last
  // delete happened no later than the parent's first.
  auto ws = store::find_workspace(t.dir.string(), t.dir);
  auto st = store::Store::open(ws);
  std::string child_last, parent_first;
  for (const auto& r : appcontext::resource_states(*st, child2)) {
    CHECK(r.status == "Deleted");
    child_last = std::max(child_last, r.time);
  }
  std::string status_ctx = s["states"]["statusctxid"];
  for (const auto& r : appcontext::resource_states(*st, status_ctx))
    if (r.status == "Deleted" && r.time >= before_terminate && (parent_first.empty() || r.time < parent_first))
      parent_first = r.time;
  REQUIRE_FALSE(child_last.empty());
  REQUIRE_FALSE(parent_first.empty());
  CHECK(child_last <= parent_first);
}

TEST_CASE("examples/traffic: kill -9 while the child context is delivered, then emco sync", "[dtc][sim][example]") {
  Traffic t(1500);  // the server becomes ready 1.5 s after it is applied: SDS waits for it
  // Instantiate in the background.
  pid_t pid = spawn(t.dir, "env " + t.emco + " apply -f 04-deploy.yaml -v values.yaml", t.dir / "deploy.log");
  REQUIRE(pid > 0);
  auto deadline = std::chrono::steady_clock::now() + 30s;
  // The parent is delivered: make the client's cluster refuse connections so
  // that the child's delivery retries, and wait until the child is queued.
  for (;;) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    json s = t.status();
    if (s.value("deployedStatus", "") == "Instantiated") break;
    std::this_thread::sleep_for(50ms);
  }
  sim::Fault refuse;
  refuse.refuse = true;
  t.sim->set_fault("edge2", refuse);
  std::string child;
  for (;;) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    json s = t.status();
    if (s.contains("ChildContextIDs")) {
      child = s["ChildContextIDs"][0];
      break;
    }
    std::this_thread::sleep_for(50ms);
  }
  std::this_thread::sleep_for(500ms);
  REQUIRE(::kill(pid, SIGKILL) == 0);
  int wstatus = 0;
  REQUIRE(::waitpid(pid, &wstatus, 0) == pid);
  CHECK(WIFSIGNALED(wstatus));
  CHECK(t.get("edge2", "v1", "Endpoints", "default", "http-service").is_null());
  CHECK(t.status(" --instance " + child)["deployedStatus"] != "Instantiated");

  t.sim->set_fault("edge2", sim::Fault{});
  auto sync = t.run("sync");
  INFO(sync.out);
  CHECK(sync.code == 0);
  CHECK(t.get("edge2", "v1", "Endpoints", "default", "http-service").is_object());
  CHECK(t.get("edge2", "v1", "Service", "default", "http-service").is_object());
  CHECK(t.status(" --instance " + child)["deployedStatus"] == "Instantiated");
}

namespace {

const std::string k_dig = "traffic/web-shop/v1/web-shop-dig";

// What the service discovery delivered: the client cluster's Service and
// Endpoints as the simulator holds them (without the server-set fields),
// and the child context's resources with their states.
json discovery(Traffic& t, const std::string& client) {
  json out;
  json svc = t.get(client, "v1", "Service", "default", "http-service");
  json ep = t.get(client, "v1", "Endpoints", "default", "http-service");
  out["service"] = svc.is_object() ? svc["spec"] : json();
  out["endpoints"] = ep.is_object() ? ep["subsets"] : json();
  json s = t.status();
  REQUIRE(s.contains("ChildContextIDs"));
  REQUIRE(s["ChildContextIDs"].size() == 1);
  json cs = t.status(" --instance " + s["ChildContextIDs"][0].get<std::string>());
  out["deployed"] = cs.value("deployedStatus", "");
  for (const auto& a : cs["apps"])
    for (const auto& c : a["clusters"])
      for (const auto& r : c["resources"])
        out["resources"].push_back({a["name"], c["cluster"], r["name"], r.value("deployedStatus", "")});
  return out;
}

void edit_client_cluster(Traffic& t, const std::string& from, const std::string& to) {
  std::ifstream in(t.dir / "values.yaml");
  std::string v((std::istreambuf_iterator<char>(in)), {});
  const std::string was = "ClientCluster: " + from;
  REQUIRE(v.find(was) != std::string::npos);
  v.replace(v.find(was), was.size(), "ClientCluster: " + to);
  std::ofstream(t.dir / "values.yaml") << v;
  REQUIRE(t.run("apply -f 03-app.yaml -v values.yaml").code == 0);
}

}  // namespace

TEST_CASE("examples/traffic: instantiate and update with --no-wait, then emco sync, make the children the waited "
          "path makes",
          "[dtc][sim][example][children]") {
  Traffic t;
  // The waited path first, for reference.
  auto deploy = t.run("apply -f 04-deploy.yaml -v values.yaml");
  INFO(deploy.out);
  REQUIRE(deploy.code == 0);
  const json waited = discovery(t, "edge2");
  REQUIRE(waited["endpoints"].is_array());
  auto term = t.run("dig terminate " + k_dig);
  INFO(term.out);
  REQUIRE(term.code == 0);
  REQUIRE(t.get("edge2", "v1", "Endpoints", "default", "http-service").is_null());

  // --no-wait: the parent is queued, no child exists yet; emco sync makes it.
  auto queued = t.run("dig instantiate " + k_dig + " --no-wait");
  INFO(queued.out);
  REQUIRE(queued.code == 8);  // queued
  CHECK_FALSE(t.status().contains("ChildContextIDs"));
  auto sync = t.run("sync");
  INFO(sync.out);
  REQUIRE(sync.code == 0);
  CHECK(discovery(t, "edge2") == waited);
  const std::string first_child = t.status()["ChildContextIDs"][0];
  CHECK_FALSE(t.status().contains("childContextsPending"));
  auto again = t.run("sync");
  CHECK(again.out == "nothing queued\n");
  CHECK(t.status()["ChildContextIDs"].size() == 1);

  // Update with --no-wait (the client moves to edge3): emco sync terminates
  // the old child and makes the new one, as the waited update does.
  edit_client_cluster(t, "edge2", "edge3");
  auto upd = t.run("dig update " + k_dig + " --no-wait");
  INFO(upd.out);
  REQUIRE(upd.code == 8);
  sync = t.run("sync");
  INFO(sync.out);
  REQUIRE(sync.code == 0);
  CHECK(t.get("edge2", "v1", "Endpoints", "default", "http-service").is_null());
  CHECK(t.get("edge2", "v1", "Service", "default", "http-service").is_null());
  const json moved = discovery(t, "edge3");
  CHECK(moved["endpoints"] == waited["endpoints"]);
  CHECK(moved["service"] == waited["service"]);
  CHECK(moved["deployed"] == "Instantiated");
  const std::string second_child = t.status()["ChildContextIDs"][0];
  CHECK(second_child != first_child);
  CHECK(t.status(" --instance " + first_child)["deployedStatus"] == "Terminated");
}

TEST_CASE("examples/traffic: kill -9 between the deployment and its children, then emco sync makes them once",
          "[dtc][sim][example][children]") {
  Traffic t(3000);  // the server is ready 3 s after it is applied: SDS waits for it
  pid_t pid = spawn(t.dir, "env " + t.emco + " apply -f 04-deploy.yaml -v values.yaml", t.dir / "deploy.log");
  REQUIRE(pid > 0);
  auto deadline = std::chrono::steady_clock::now() + 30s;
  for (;;) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    if (t.status().value("deployedStatus", "") == "Instantiated") break;
    std::this_thread::sleep_for(50ms);
  }
  // The deployment is delivered; SDS is waiting for the server to be ready.
  // With the server's cluster unreachable it keeps waiting: the process is
  // killed before it made any child.
  sim::Fault refuse;
  refuse.refuse = true;
  t.sim->set_fault("edge1", refuse);
  std::this_thread::sleep_for(300ms);
  REQUIRE(::kill(pid, SIGKILL) == 0);
  int wstatus = 0;
  REQUIRE(::waitpid(pid, &wstatus, 0) == pid);
  CHECK(WIFSIGNALED(wstatus));
  json s = t.status();
  REQUIRE_FALSE(s.contains("ChildContextIDs"));
  CHECK(s["childContextsPending"] == true);
  auto ws = t.run("status");
  INFO(ws.out);
  CHECK(ws.out.find("child contexts to make:") != std::string::npos);
  CHECK(t.run("dig status " + k_dig).out.find("child contexts: still to make") != std::string::npos);

  t.sim->set_fault("edge1", sim::Fault{});
  auto sync = t.run("sync");
  INFO(sync.out);
  CHECK(sync.code == 0);
  s = t.status();
  REQUIRE(s["ChildContextIDs"].size() == 1);
  CHECK(s["nested"][0]["status"] == "Instantiated");
  CHECK_FALSE(s.contains("childContextsPending"));
  CHECK(t.get("edge2", "v1", "Endpoints", "default", "http-service").is_object());
  CHECK(t.get("edge2", "v1", "Service", "default", "http-service").is_object());
  // Once: a second sync has nothing to do.
  CHECK(t.run("sync").out == "nothing queued\n");
  CHECK(t.status()["ChildContextIDs"].size() == 1);
}

TEST_CASE("examples/traffic: two emco sync at once after --no-wait make the children once", "[dtc][sim][example][children]") {
  Traffic t(1000);
  REQUIRE(t.run("dig approve " + k_dig).code == 0);
  REQUIRE(t.run("dig instantiate " + k_dig + " --no-wait").code == 8);
  pid_t a = spawn(t.dir, "env " + t.emco + " sync", t.dir / "sync-a.log");
  pid_t b = spawn(t.dir, "env " + t.emco + " sync", t.dir / "sync-b.log");
  REQUIRE(a > 0);
  REQUIRE(b > 0);
  for (pid_t p : {a, b}) {
    int wstatus = 0;
    REQUIRE(::waitpid(p, &wstatus, 0) == p);
    CHECK(WIFEXITED(wstatus));
    CHECK(WEXITSTATUS(wstatus) == 0);
  }
  json s = t.status();
  REQUIRE(s["ChildContextIDs"].size() == 1);
  CHECK(s["nested"][0]["status"] == "Instantiated");
  CHECK(t.get("edge2", "v1", "Endpoints", "default", "http-service").is_object());
  // The workspace holds the parent and that one child, nothing else.
  auto ws = store::find_workspace(t.dir.string(), t.dir);
  auto st = store::Store::open(ws);
  CHECK(appcontext::list(*st, resource::Key::parse("project=traffic/compositeApp=web-shop/compositeAppVersion=v1/"
                                         "deploymentIntentGroup=web-shop-dig"))
            .size() == 2);
}
