// examples/workflow-hooks through the emco binary (`emco apply -f`) on a
// simulated cluster, with the tests' workflow client on loopback: the worker
// DIG deployed before the pre-install hook and removed before the
// post-install hook, the hooks received in order with upstream's body, the
// shop delivered; `emco delete -f` terminating it with the non-blocking
// drain hook failing without stopping it; a hook whose worker DIG is
// missing failing the instantiate with the worker document named.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "sim/sim.hpp"
#include "tests/example_fleet.hpp"
#include "tests/shell.hpp"
#include "tests/tac/workflow_client.hpp"

using nlohmann::json;
namespace fs = std::filesystem;
using emco::test::Ran;
using emco::test::sh;

namespace {

struct Example : emco::test::ExampleFleet {
  emco::test::WorkflowClient client;

  Example() : ExampleFleet("workflow-hooks", "hooks", emco::test::edge_clusters(1, 20)) {
    std::ofstream(dir / "values.yaml") << "ProjectName: shop-project\nClusterProvider: edge\nAdminCloud: admin\n"
                                          "Clusters:\n  - {Name: edge1, KubeConfig: "
                                       << sim->kubeconfig_path("edge1")
                                       << "}\nWorkflowClient: {Host: 127.0.0.1, Port: " << client.server.port() << "}\n";
    init_and_apply({"01-clusters.yaml", "02-project.yaml", "03-apps.yaml", "04-hooks.yaml"});
  }
  bool has(const std::string& name) { return sim->get("edge1", "v1", "ConfigMap", "default", name).is_object(); }
  std::string state(const std::string& dig) {
    auto r = run("dig history " + dig + " -o json");
    REQUIRE(r.code == 0);
    return json::parse(r.out)["actions"].back().value("state", "");
  }
};

}  // namespace

TEST_CASE("examples/workflow-hooks: a worker DIG, pre- and post-install hooks around the rollout through emco apply -f",
          "[tac][sim][example]") {
  Example ex;
  auto deploy = ex.run("apply -f 05-deploy.yaml -v values.yaml");
  INFO(deploy.out);
  REQUIRE(deploy.code == 0);
  CHECK(ex.client.paths() == std::vector<std::string>{"POST /invoke/migrate_workflowclient", "POST /invoke/smoke_workflowclient"});
  json body = json::parse(ex.client.seen.front().body);
  CHECK(body["workflowStartOptions"]["ID"] == "shop-migrate-1");
  CHECK(body["workflowStartOptions"]["TaskQueue"] == "MIGRATE_Q");
  CHECK(body["workflowStartOptions"]["RetryPolicy"]["MaximumAttempts"] == 2);
  CHECK(body["workflowParams"]["activityParams"]["migrate"]["schemaVersion"] == "2");
  CHECK(ex.has("r1-shop"));
  CHECK_FALSE(ex.has("w1-migrator"));  // deployed for the hook, gone after
  CHECK(ex.state("shop-project/hook-workers/v1/worker-dig") == "Terminated");
  auto history = ex.run("dig history shop-project/shop/v1/shop-dig");
  INFO(history.out);
  CHECK(history.out.find("pre-install worker DIG 'hook-workers/v1/worker-dig': instantiate: done") != std::string::npos);
  CHECK(history.out.find("post-install tac intent 'smoke-test': done") != std::string::npos);

  // Terminate: the drain hook's client is down (it answers 503): not blocking.
  ex.client.answers["/invoke/drain_workflowclient"] = {.status = 503, .body = "draining unavailable"};
  auto down = ex.run("delete -f 05-deploy.yaml -v values.yaml");
  INFO(down.out);
  REQUIRE(down.code == 0);
  CHECK_FALSE(ex.has("r1-shop"));
  CHECK(ex.client.count("/invoke/drain_workflowclient") == 1);
  // The non-blocking failure is reported in the DIG's status.
  auto status = ex.run("dig status shop-project/shop/v1/shop-dig -o json");
  REQUIRE(status.code == 0);
  json hooks = json::parse(status.out)["hooks"];
  REQUIRE(hooks.size() == 2);
  CHECK(hooks[1]["operation"] == "terminate");
  CHECK(hooks[1]["steps"][0]["state"] == "failed");
  CHECK(hooks[1]["steps"][0]["message"].get<std::string>().find("HTTP 503: draining unavailable") != std::string::npos);
  auto table = ex.run("dig status shop-project/shop/v1/shop-dig");
  CHECK(table.out.find("hook pre-termination tac intent 'drain' (terminate): failed") != std::string::npos);

  // A hook whose worker DIG does not exist: the instantiate fails naming the worker.
  std::ofstream(ex.dir / "06-bad.yaml")
      << "---\nversion: emco/v2\nresourceContext:\n  anchor: projects/shop-project/composite-apps/shop/v1/"
         "deployment-intent-groups/shop-dig/temporal-action-controller/migrate-db/workers\nmetadata:\n  name: gone\n"
         "spec:\n  startToCloseTimeout: 1000\n  compositeApp: hook-workers\n  compositeAppVersion: v1\n"
         "  deploymentIntentGroup: no-such-dig\n";
  auto warn = ex.run("apply -f 06-bad.yaml");
  INFO(warn.out);
  CHECK(warn.code == 0);
  auto bad = ex.run("apply -f 05-deploy.yaml -v values.yaml");
  INFO(bad.out);
  CHECK(bad.code != 0);
  CHECK(bad.out.find("05-deploy.yaml:") != std::string::npos);
  CHECK(bad.out.find("tac worker 'projects/shop-project/composite-apps/shop/v1/deployment-intent-groups/shop-dig/"
                     "temporal-action-controller/migrate-db/workers/gone'") != std::string::npos);
  CHECK(bad.out.find("'hook-workers/v1/no-such-dig' does not exist") != std::string::npos);
  CHECK_FALSE(ex.has("r1-shop"));
}
