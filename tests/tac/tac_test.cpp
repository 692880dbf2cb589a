// tac's hooks around DIG operations and the workflow manager's calls, in
// process over a fake fleet (tests/lifecycle/world.hpp), against a workflow
// client of our own: a real HTTP server on loopback that records each
// request and answers as told (204, a failure, slowly).

#include <catch2/catch.hpp>

#include "core/appcontext/header_rows.hpp"
#include "core/util/error.hpp"
#include "plugins/tac/plugin.hpp"
#include "plugins/tac/tac.hpp"
#include "tests/kube/test_server.hpp"
#include "tests/tac/workflow_client.hpp"
#include "tests/lifecycle/world.hpp"

using namespace emco;
using namespace emco::testing;
using kube::test::TestRequest;
using kube::test::TestResponse;
using kube::test::TestServer;

namespace {

using Client = emco::test::WorkflowClient;

std::string hook(const std::string& name, const std::string& type, int port, const std::string& extra = "") {
  return "---\nversion: emco/v2\nresourceContext:\n  anchor: projects/proj/composite-apps/ca/v1/deployment-intent-groups/"
         "dig/temporal-action-controller\nmetadata:\n  name: " + name + "\nspec:\n  hookType: " + type +
         "\n" + extra + "  workflowClient:\n    clientEndpointName: 127.0.0.1\n    clientEndpointPort: " +
         std::to_string(port) + "\n  temporal:\n    workflowClientName: wf-" + name +
         "\n    workflowStartOptions:\n      id: " + name + "-1\n      taskqueue: Q\n      retryPolicy:\n        maximumAttempts: 2\n";
}

const char* k_worker_dig = R"(
---
version: emco/v2
resourceContext: {anchor: projects/proj/composite-apps/ca/v1/deployment-intent-groups}
metadata: {name: workers}
spec: {compositeProfile: prof, version: w1, logicalCloud: lc}
)";

std::string worker(const std::string& hook_name, const std::string& dig) {
  return "---\nversion: emco/v2\nresourceContext:\n  anchor: projects/proj/composite-apps/ca/v1/deployment-intent-groups/"
         "dig/temporal-action-controller/" + hook_name + "/workers\nmetadata:\n  name: w1\nspec:\n  startToCloseTimeout: 60000\n"
         "  compositeApp: ca\n  compositeAppVersion: v1\n  deploymentIntentGroup: " + dig + "\n";
}

struct HookWorld : World {
  Client client;
  resource::Key workers = resource::Key::parse(
      "project=proj/compositeApp=ca/compositeAppVersion=v1/deploymentIntentGroup=workers");

  HookWorld() {
    plugins::builtin_runtime();  // installs the plugins' kinds
    apply(k_worker_dig);
    op(lc, "instantiate");
  }
  void apply(const std::string& text) {
    manifest::ReadOptions ro;
    auto f = manifest::parse_text(text, "hooks.yaml", ".", ro);
    manifest::BatchOptions bo;
    bo.runtime = &plugins::builtin_runtime();
    manifest::run_batch(*st, manifest::Verb::apply, {f}, bo);
  }
  // The worker DIG deploys its own object ("worker"), the DIG a and b.
  lifecycle::OperationOptions options() {
    lifecycle::OperationOptions o = World::options();
    auto planner = o.planner;
    o.planner = [this, planner](store::Store& s, const resource::Key& key, const std::string& sc, const std::string& from) {
      ac::AppContext c = planner(s, key, sc, from);
      if (key == workers) c.apps.front().clusters.front().resources = {{"worker+ConfigMap", c.intern("worker")}};
      return c;
    };
    return o;
  }
  lifecycle::OperationResult dig_op(const resource::Key& key, const std::string& name) {
    return lifecycle::run(*st, resource::kind("deploymentIntentGroup"), key, name, json::object(), system_clock(), options());
  }
  std::string state(const resource::Key& key) { return lifecycle::current_state(st->get(key)->state_info); }
  json log(const std::string& ctx) {
    return json::parse(ac::header(*st, ctx).meta.at("hooks"));
  }
};

}  // namespace

TEST_CASE("tac runs the worker DIG, pre-hooks, delivery, worker cleanup and post-hooks in upstream's order", "[tac]") {
  HookWorld w;
  const int port = w.client.server.port();
  w.apply(hook("pre1", "pre-install", port) + hook("pre2", "pre-install", port) + hook("post1", "post-install", port) +
          hook("term1", "pre-termination", port) + hook("up1", "post-update", port) + worker("pre1", "workers"));
  w.dig_op(w.workers, "approve");
  w.dig_op(w.dig, "approve");

  auto r = w.dig_op(w.dig, "instantiate");
  INFO((r.failures.empty() ? "" : r.failures.front()));
  REQUIRE(r.delivery == lifecycle::Delivery::done);
  CHECK(w.client.paths() ==
        std::vector<std::string>{"POST /invoke/wf-pre1", "POST /invoke/wf-pre2", "POST /invoke/wf-post1"});
  // The worker DIG was instantiated before the hooks and terminated after delivery.
  CHECK(w.state(w.workers) == "Terminated");
  {
    const auto& log = w.fleet.clusters["p+c1"].log;
    auto first = [&](const std::string& end) {
      for (size_t i = 0; i < log.size(); ++i)
        if (log[i].size() >= end.size() && log[i].compare(log[i].size() - end.size(), end.size(), end) == 0) return long(i);
      return -1L;
    };
    auto last = [&](const std::string& end) {
      long at = -1;
      for (size_t i = 0; i < log.size(); ++i)
        if (log[i].size() >= end.size() && log[i].compare(log[i].size() - end.size(), end.size(), end) == 0) at = long(i);
      return at;
    };
    INFO(log.size());
    CHECK(first(" worker") >= 0);
    CHECK(first(" worker") < first(" a"));
    CHECK(last(" worker") > first(" a"));
    CHECK(w.fleet.clusters["p+c1"].objects == std::set<std::string>{"a", "b"});
  }
  json steps = w.log(r.context).back()["steps"];
  std::vector<std::string> order;
  for (const auto& s : steps) {
    order.push_back(s["name"].get<std::string>() + "=" + s["state"].get<std::string>());
  }
  CHECK(order == std::vector<std::string>{"worker DIG 'ca/v1/workers': instantiate=done", "tac intent 'pre1'=done",
                                          "tac intent 'pre2'=done", "worker DIG 'ca/v1/workers': terminate=done",
                                          "tac intent 'post1'=done"});

  SECTION("the body is the workflow spec as upstream's Go client marshals it") {
    TestRequest first = w.client.seen.front();
    CHECK(first.headers["content-type"] == "application/json");
    json body = json::parse(first.body);
    CHECK(body["workflowClientName"] == "wf-pre1");
    CHECK(body["workflowStartOptions"]["ID"] == "pre1-1");
    CHECK(body["workflowStartOptions"]["TaskQueue"] == "Q");
    CHECK(body["workflowStartOptions"]["RetryPolicy"]["MaximumAttempts"] == 2);
    CHECK(body["workflowStartOptions"]["RetryPolicy"]["NonRetryableErrorTypes"].is_null());
    CHECK(body["workflowStartOptions"]["WorkflowRunTimeout"] == 0);
    CHECK(body["workflowStartOptions"]["Memo"].is_null());
    CHECK(body["workflowParams"] == json::object());
    // Go writes struct fields in declaration order.
    CHECK(first.body.find("\"ID\"") < first.body.find("\"TaskQueue\""));
  }
  SECTION("update runs its hooks, terminate runs pre-termination before anything is deleted") {
    w.client.clear();
    auto u = w.dig_op(w.dig, "update");
    REQUIRE(u.delivery == lifecycle::Delivery::done);
    CHECK(w.client.paths() == std::vector<std::string>{"POST /invoke/wf-up1"});
    w.client.answers["/invoke/wf-term1"] = TestResponse{.status = 500, .body = "not now"};
    CHECK_THROWS_WITH(w.dig_op(w.dig, "terminate"), Catch::Contains("terminate refused by a hook: pre-termination tac "
                                                                    "intent 'term1' failed") &&
                                                        Catch::Contains("HTTP 500: not now"));
    // Nothing was deleted and the DIG is still instantiated.
    CHECK(w.state(w.dig) == "Instantiated");
    CHECK(w.fleet.clusters["p+c1"].objects.size() == 2);
    w.client.answers.clear();
    auto t2 = w.dig_op(w.dig, "terminate");
    CHECK(t2.delivery == lifecycle::Delivery::done);
    CHECK(w.fleet.clusters["p+c1"].objects.empty());
  }
}

TEST_CASE("a failing blocking pre-hook fails instantiate with the client's answer and changes nothing", "[tac]") {
  HookWorld w;
  const int port = w.client.server.port();
  w.apply(hook("pre1", "pre-install", port) + hook("post1", "post-install", port));
  w.dig_op(w.dig, "approve");
  w.client.answers["/invoke/wf-pre1"] = TestResponse{.status = 500, .body = "workflow client says no"};
  try {
    w.dig_op(w.dig, "instantiate");
    FAIL("instantiate went on");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::failed);
    CHECK_THAT(e.message(), Catch::Contains("instantiate refused by a hook: pre-install tac intent 'pre1' failed") &&
                                Catch::Contains("HTTP 500: workflow client says no"));
    CHECK_THAT(e.hint(), Catch::Contains("nothing was delivered"));
  }
  CHECK(w.state(w.dig) == "Approved");
  CHECK(w.fleet.clusters["p+c1"].objects.empty());
  CHECK(w.client.paths() == std::vector<std::string>{"POST /invoke/wf-pre1"});
  CHECK(ac::active_contexts(*w.st).empty());
}

TEST_CASE("a non-blocking hook's failure is reported and the operation goes on", "[tac]") {
  HookWorld w;
  const int port = w.client.server.port();
  w.apply(hook("post1", "post-install", port, "  hookBlocking: false\n"));
  w.dig_op(w.dig, "approve");
  w.client.answers["/invoke/wf-post1"] = TestResponse{.status = 503, .body = "busy"};
  auto r = w.dig_op(w.dig, "instantiate");
  CHECK(r.delivery == lifecycle::Delivery::done);
  REQUIRE(r.failures.size() == 1);
  CHECK_THAT(r.failures.front(), Catch::Contains("HTTP 503: busy") && Catch::Contains("not blocking"));
  CHECK(w.log(r.context).back()["steps"][0]["state"] == "failed");
}

TEST_CASE("bad hook definitions fail naming the document", "[tac]") {
  HookWorld w;
  w.dig_op(w.dig, "approve");
  SECTION("an unreachable workflow client") {
    w.apply(hook("pre1", "pre-install", 1));
    CHECK_THROWS_WITH(w.dig_op(w.dig, "instantiate"),
                      Catch::Contains("tac intent 'pre1'") &&
                          Catch::Contains("cannot reach the workflow client at http://127.0.0.1:1/invoke/wf-pre1"));
    CHECK(w.state(w.dig) == "Approved");
  }
  SECTION("a missing worker DIG refuses the operation before anything is recorded") {
    w.apply(hook("pre1", "pre-install", w.client.server.port()) + worker("pre1", "nosuchdig"));
    CHECK_THROWS_WITH(w.dig_op(w.dig, "instantiate"),
                      Catch::Contains("tac worker 'projects/proj/composite-apps/ca/v1/deployment-intent-groups/dig/"
                                      "temporal-action-controller/pre1/workers/w1'") &&
                          Catch::Contains("'ca/v1/nosuchdig' does not exist"));
    CHECK(w.state(w.dig) == "Approved");
    CHECK(w.client.paths().empty());
  }
  SECTION("a worker DIG that is not approved") {
    w.apply(hook("pre1", "pre-install", w.client.server.port()) + worker("pre1", "workers"));
    CHECK_THROWS_WITH(w.dig_op(w.dig, "instantiate"), Catch::Contains("is Created; a worker DIG must be Approved"));
  }
}

TEST_CASE("a slow workflow client is waited for within the operation's timeout", "[tac]") {
  HookWorld w;
  w.apply(hook("pre1", "pre-install", w.client.server.port()));
  w.dig_op(w.dig, "approve");
  w.client.answers["/invoke/wf-pre1"] = TestResponse{.status = 204, .delay_ms = 1500};
  auto r = w.dig_op(w.dig, "instantiate");
  CHECK(r.delivery == lifecycle::Delivery::done);
  CHECK(w.state(w.dig) == "Instantiated");
}

TEST_CASE("the workflow manager starts through the client and queries and cancels on a Temporal frontend", "[tac]") {
  HookWorld w;
  Client wfclient;
  std::mutex m;
  std::vector<TestRequest> seen;
  TestServer temporal([&](const TestRequest& r) {
    std::lock_guard<std::mutex> l(m);
    seen.push_back(r);
    TestResponse resp;
    if (r.target.find("/workflows/missing") != std::string::npos) {
      resp.status = 404;
      resp.body = R"({"code":5,"message":"workflow not found for ID: missing"})";
    } else if (r.target.find("/query/") != std::string::npos) {
      resp.body = json{{"queryResult", {{"payloads", {{{"metadata", {{"encoding", "anNvbi9wbGFpbg=="}}},
                                                       {"data", "eyJkb25lIjozfQ=="}}}}}}}.dump();  // {"done":3}
    } else if (r.method == "GET" && r.target.find("/history") != std::string::npos) {
      resp.body = R"({"history":{"events":[{"eventId":"1","eventType":"EVENT_TYPE_WORKFLOW_EXECUTION_STARTED"}]}})";
    } else if (r.method == "GET") {
      resp.body = R"({"workflowExecutionInfo":{"execution":{"workflowId":"mig-1","runId":"r1"},"status":"WORKFLOW_EXECUTION_STATUS_RUNNING"}})";
    } else {
      resp.body = "{}";
    }
    return resp;
  });
  w.apply("---\nversion: emco/v2\nresourceContext:\n  anchor: projects/proj/composite-apps/ca/v1/deployment-intent-groups/"
          "dig/temporal-workflow-intents\nmetadata: {name: mig}\nspec:\n  workflowClient: {clientEndpointName: 127.0.0.1, "
          "clientEndpointPort: " + std::to_string(wfclient.server.port()) +
          "}\n  temporal:\n    workflowClientName: migrate\n    workflowStartOptions: {ID: mig-1, TaskQueue: MQ}\n");
  resource::Key wf = resource::Key::parse(w.dig.str() + "/workflowIntent=mig");

  // start: as an anchor (emco apply .../start) and through the plugin call.
  w.apply("---\nversion: emco/v2\nresourceContext:\n  anchor: projects/proj/composite-apps/ca/v1/deployment-intent-groups/"
          "dig/temporal-workflow-intents/mig/start\n");
  CHECK(wfclient.paths() == std::vector<std::string>{"POST /invoke/migrate"});
  // emco delete -f of that file starts nothing (only an instantiate has an undo).
  {
    manifest::ReadOptions ro;
    auto f = manifest::parse_text("---\nversion: emco/v2\nresourceContext:\n  anchor: projects/proj/composite-apps/ca/v1/"
                                  "deployment-intent-groups/dig/temporal-workflow-intents/mig/start\n",
                                  "start.yaml", ".", ro);
    manifest::BatchOptions bo;
    bo.runtime = &plugins::builtin_runtime();
    auto deleted = manifest::run_batch(*w.st, manifest::Verb::remove, {f}, bo);
    REQUIRE(deleted.items.size() == 1);
    CHECK(deleted.items[0].outcome == "skipped");
    CHECK(wfclient.paths().size() == 1);
  }
  wfclient.answers["/invoke/migrate"] = TestResponse{.status = 400, .body = "bad spec"};
  CHECK_THROWS_WITH(plugins::tac::workflow_start(*w.st, wf), Catch::Contains("HTTP 400: bad spec"));

  plugins::tac::TemporalAccess a;
  a.server = "127.0.0.1:" + std::to_string(temporal.port());
  plugins::tac::StatusQuery q;
  q.describe = true;
  q.history = true;
  q.run_id = "r1";
  q.query_type = "progress";
  q.query_args = R"(["x"])";
  json s = plugins::tac::workflow_status(*w.st, wf, a, q);
  CHECK(s["workflowID"] == "mig-1");
  CHECK(s["workflowExecutionDescription"]["workflowExecutionInfo"]["status"] == "WORKFLOW_EXECUTION_STATUS_RUNNING");
  CHECK(s["workflowHistory"].size() == 1);
  CHECK(s["workflowQueryResult"] == json{{"done", 3}});
  {
    std::lock_guard<std::mutex> l(m);
    REQUIRE(seen.size() == 3);
    CHECK(seen[0].method + " " + seen[0].target == "GET /api/v1/namespaces/default/workflows/mig-1?execution.runId=r1");
    CHECK(seen[1].target == "/api/v1/namespaces/default/workflows/mig-1/history?execution.runId=r1");
    CHECK(seen[2].target == "/api/v1/namespaces/default/workflows/mig-1/query/progress");
    json qbody = json::parse(seen[2].body);
    CHECK(qbody["query"]["queryType"] == "progress");
    CHECK(qbody["query"]["queryArgs"]["payloads"][0]["data"] == "Ingi");  // "x" as JSON, base64
    seen.clear();
  }

  // The status anchor, with upstream's query parameters (emco get / emcoctl get).
  const std::string wf_anchor = "projects/proj/composite-apps/ca/v1/deployment-intent-groups/dig/temporal-workflow-intents/mig/status";
  json via_anchor = lifecycle::anchor_status(
      *w.st, plugins::builtin_runtime(),
      resource::parse_anchor(wf_anchor + "?temporalServer=%22127.0.0.1:" + std::to_string(temporal.port()) +
                             "%22&runID=r1&runDescribeWfExec=true&waitForResult=false"));
  CHECK(via_anchor["workflowID"] == "mig-1");
  CHECK(via_anchor["workflowExecutionDescription"]["workflowExecutionInfo"]["status"] == "WORKFLOW_EXECUTION_STATUS_RUNNING");
  CHECK(!via_anchor.contains("workflowHistory"));
  CHECK_THROWS_WITH(lifecycle::anchor_status(*w.st, plugins::builtin_runtime(), resource::parse_anchor(wf_anchor)),
                    Catch::Contains("needs ?temporalServer=HOST:PORT"));
  CHECK_THROWS_WITH(lifecycle::anchor_status(*w.st, plugins::builtin_runtime(),
                                             resource::parse_anchor(wf_anchor + "?temporalServer=x:1&getWfHistory=maybe")),
                    Catch::Contains("getWfHistory must be a boolean"));
  CHECK_THROWS_WITH(lifecycle::anchor_status(*w.st, plugins::builtin_runtime(),
                                             resource::parse_anchor(wf_anchor + "?temporalServer=x:1&verbose=1")),
                    Catch::Contains("unknown query parameter 'verbose'"));
  {
    std::lock_guard<std::mutex> l(m);
    REQUIRE(seen.size() == 1);
    CHECK(seen[0].target == "/api/v1/namespaces/default/workflows/mig-1?execution.runId=r1");
    seen.clear();
  }

  // cancel as upstream's anchor does it (spec.temporalServer), and terminate.
  w.apply("---\nversion: emco/v2\nresourceContext:\n  anchor: projects/proj/composite-apps/ca/v1/deployment-intent-groups/"
          "dig/temporal-workflow-intents/mig/cancel\nmetadata: {name: c}\nspec: {temporalServer: '127.0.0.1:" +
          std::to_string(temporal.port()) + "', reason: done}\n");
  plugins::tac::workflow_cancel(*w.st, wf, a, "", "r1", true, "stop it");
  {
    std::lock_guard<std::mutex> l(m);
    REQUIRE(seen.size() == 2);
    CHECK(seen[0].method + " " + seen[0].target == "POST /api/v1/namespaces/default/workflows/mig-1/cancel");
    CHECK(json::parse(seen[0].body)["reason"] == "done");
    CHECK(seen[1].target == "/api/v1/namespaces/default/workflows/mig-1/terminate");
    CHECK(json::parse(seen[1].body)["workflowExecution"]["runId"] == "r1");
  }
  // The frontend's refusal is the error.
  q = {};
  q.workflow_id = "missing";
  q.describe = true;
  CHECK_THROWS_WITH(plugins::tac::workflow_status(*w.st, wf, a, q), Catch::Contains("HTTP 404: workflow not found for ID: missing"));
  // Nothing listening: unreachable.
  a.server = "127.0.0.1:1";
  try {
    plugins::tac::workflow_cancel(*w.st, wf, a, "", "", false, "");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::unreachable);
  }
}

TEST_CASE("the Temporal frontend over TLS: verified against the given CA, refused without it", "[tac]") {
  HookWorld w;
  auto ca = kube::test::make_ca("temporal-ca");
  auto cert = kube::test::make_cert(ca, "temporal", {"localhost"}, {"127.0.0.1"});
  TestServer temporal([](const TestRequest&) { return TestResponse{.status = 200, .body = R"({"workflowExecutionInfo":{}})"}; },
                      cert);
  w.apply("---\nversion: emco/v2\nresourceContext:\n  anchor: projects/proj/composite-apps/ca/v1/deployment-intent-groups/"
          "dig/temporal-action-controller\nmetadata: {name: h}\nspec:\n  hookType: post-install\n  workflowClient: "
          "{clientEndpointName: 127.0.0.1, clientEndpointPort: 9}\n  temporal:\n    workflowStartOptions: {ID: h-1, TaskQueue: Q}\n");
  resource::Key h = resource::Key::parse(w.dig.str() + "/workflowHookIntent=h");
  plugins::tac::TemporalAccess a;
  a.server = "https://127.0.0.1:" + std::to_string(temporal.port());
  plugins::tac::StatusQuery q;
  q.describe = true;
  CHECK_THROWS_WITH(plugins::tac::workflow_status(*w.st, h, a, q), Catch::Contains("cannot reach the Temporal frontend"));
  a.ca_pem = ca.cert_pem;
  CHECK(plugins::tac::workflow_status(*w.st, h, a, q)["workflowID"] == "h-1");
}

TEST_CASE("a worker DIG must be Ready within its startToCloseTimeout before the hooks run", "[tac]") {
  HookWorld w;
  const int port = w.client.server.port();
  std::string short_worker = worker("pre1", "workers");
  short_worker.replace(short_worker.find("60000"), 5, "1500");
  w.apply(hook("pre1", "pre-install", port) + short_worker);
  w.dig_op(w.workers, "approve");
  w.dig_op(w.dig, "approve");
  FakeCluster& c1 = w.fleet.clusters["p+c1"];
  SECTION("ready after a few reads: the hooks run") {
    c1.not_ready_reads["worker"] = 3;
    auto r = w.dig_op(w.dig, "instantiate");
    REQUIRE(r.delivery == lifecycle::Delivery::done);
    CHECK(w.client.paths() == std::vector<std::string>{"POST /invoke/wf-pre1"});
    CHECK_THAT(w.log(r.context).back()["steps"][0]["message"].get<std::string>(), Catch::EndsWith(", Ready"));
  }
  SECTION("never ready: the operation is refused, no hook is started") {
    c1.not_ready_reads["worker"] = 1000000;
    CHECK_THROWS_WITH(w.dig_op(w.dig, "instantiate"),
                      Catch::Contains("not Ready within its startToCloseTimeout (readyStatus NotReady)"));
    CHECK(w.client.paths().empty());
    CHECK(w.state(w.dig) == "Approved");
  }
}
