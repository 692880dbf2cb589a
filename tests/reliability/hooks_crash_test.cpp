// Hooks are persisted steps of their operation (issue 20): emco is killed
// (SIGKILL, the fault shim's kill mode) before every step of an instantiate
// whose DIG has a pre-install tac hook with a worker DIG and a post-install
// hook, and of an update and a terminate with their pre and post hooks,
// against a workflow client of the tests' own on loopback. After each kill,
// `emco sync` (or running the operation again when the kill came before it
// was recorded) must end where a clean run ends: the DIG delivered or
// removed, the worker DIG instantiated and terminated again, each hook
// received once by the client — or twice only when the hook log says why
// (the process died between sending the request and recording the answer,
// so emco cannot know whether the client saw it). EMCO_HOOK_CRASH_STRIDE=N
// tries every Nth step.

#include <catch2/catch.hpp>

#include <fstream>
#include <iostream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/reliability/fleet.hpp"
#include "tests/tac/workflow_client.hpp"

using namespace emco::test;
using nlohmann::json;

namespace {

const std::map<std::string, std::string> k_plain = {{"EMCO_AUTO_RESUME", "0"}};

std::string hook(const std::string& name, const std::string& type, int port) {
  return "---\nversion: emco/v2\nresourceContext:\n  anchor: projects/proj/composite-apps/ca/v1/deployment-intent-groups/"
         "dig1/temporal-action-controller\nmetadata:\n  name: " + name + "\nspec:\n  hookType: " + type +
         "\n  hookBlocking: true\n  workflowClient:\n    clientEndpointName: 127.0.0.1\n    clientEndpointPort: " +
         std::to_string(port) + "\n  temporal:\n    workflowClientName: wf-" + name +
         "\n    workflowStartOptions:\n      id: " + name + "-1\n      taskqueue: Q\n";
}

// The hook steps of dig1's current deployment, from `emco dig history -o json`.
json hook_steps(Fleet& f) {
  Exit e = f.emco({"dig", "history", Fleet::dig("dig1"), "-o", "json"}, k_plain);
  REQUIRE(e.code == 0);
  json h = json::parse(e.out);
  if (!h.contains("hooks") || h["hooks"].empty()) return json::array();
  return h["hooks"].back()["steps"];
}

}  // namespace

TEST_CASE("kill -9 at every step of operations with hooks: emco sync runs each hook once and ends as a clean run",
          "[reliability][crash-matrix][hooks]") {
  const int stride = effort("EMCO_HOOK_CRASH_STRIDE", 1, 4);
  Fleet f(1, 1);
  WorkflowClient client;
  const int port = client.server.port();
  {
    std::ofstream y(f.root() / "hooks.yaml");
    y << hook("pre", "pre-install", port) << hook("post", "post-install", port) << hook("preup", "pre-update", port)
      << hook("postup", "post-update", port) << hook("preterm", "pre-termination", port)
      << hook("postterm", "post-termination", port)
      << "---\nversion: emco/v2\nresourceContext:\n  anchor: projects/proj/composite-apps/ca/v1/"
         "deployment-intent-groups/dig1/temporal-action-controller/pre/workers\nmetadata:\n  name: w\nspec:\n"
         "  startToCloseTimeout: 60000\n  compositeApp: ca\n  compositeAppVersion: v1\n  deploymentIntentGroup: dig2\n";
  }
  f.run_ok({"apply", "-f", "hooks.yaml"});
  const std::string dig = Fleet::dig("dig1");
  auto actions = [&] {
    Exit e = f.emco({"dig", "history", dig, "-o", "json"}, k_plain);
    REQUIRE(e.code == 0);
    return json::parse(e.out).value("actions", json::array()).size();
  };
  auto settle = [&](bool running) {
    if (f.state("dig2") == "Instantiated") f.run_ok({"dig", "terminate", Fleet::dig("dig2")});
    const bool is = f.state("dig1") == "Instantiated";
    if (is && !running) f.run_ok({"dig", "terminate", dig});
    if (!is && running) f.run_ok({"dig", "instantiate", dig});
    client.clear();
  };

  struct Row {
    std::string op;
    bool from_running;                 // the DIG is instantiated before the operation
    std::string state;                 // its state after
    std::vector<std::string> hooks;    // the hooks the client receives, in order
    size_t steps;                      // hook steps recorded
  };
  long covered = 0;
  for (const Row& row : {Row{"instantiate", false, "Instantiated", {"pre", "post"}, 4},
                         Row{"update", true, "Instantiated", {"preup", "postup"}, 2},
                         Row{"terminate", true, "Terminated", {"preterm", "postterm"}, 2}}) {
    const std::vector<std::string> args = {"dig", row.op, dig};
    CAPTURE(row.op);
    // The clean run.
    settle(row.from_running);
    fs::remove(f.root() / "steps");
    Exit counted = f.emco(args, f.fault_env("count", 0));
    INFO(counted.err);
    REQUIRE(counted.code == 0);
    long steps = 0;
    std::ifstream(f.root() / "steps") >> steps;
    REQUIRE(steps > 0);
    std::vector<std::string> expected;
    for (const auto& h : row.hooks) expected.push_back("POST /invoke/wf-" + h);
    REQUIRE(client.paths() == expected);
    REQUIRE(f.state("dig2") == "Terminated");  // the worker DIG: deployed for the pre-install hook only
    const auto clean = f.snapshot();

    int killed = 0, again = 0;
    for (long at = 1; at <= steps; at += stride) {
      CAPTURE(at, steps);
      settle(row.from_running);
      const size_t before = actions();
      Exit k = f.emco(args, f.fault_env("kill", at));
      INFO("killed run: " << k.err);
      REQUIRE((k.code == 128 + 9 || k.code == 0));
      if (k.code == 128 + 9) ++killed;
      Exit sync = f.emco({"sync"}, k_plain);
      INFO("sync: " << sync.out << sync.err);
      REQUIRE(sync.code == 0);
      if (actions() == before) f.run_ok(args);  // killed before the operation was recorded
      REQUIRE(f.state("dig1") == row.state);
      REQUIRE(f.state("dig2") == "Terminated");
      REQUIRE(f.snapshot() == clean);
      REQUIRE(f.queued() == 0);
      json hooks = hook_steps(f);
      INFO(hooks.dump());
      REQUIRE(hooks.size() == row.steps);
      for (const auto& step : hooks) REQUIRE(step.value("state", "") == "done");
      for (const auto& h : row.hooks) {
        const size_t n = client.count("/invoke/wf-" + h);
        bool said = false;
        for (const auto& step : hooks)
          if (step.value("name", "") == "tac intent '" + h + "'")
            said = step.value("message", "").find("ran again: the process running it was killed") != std::string::npos;
        CAPTURE(h, n, said);
        REQUIRE((n == 1 || (n == 2 && said)));
        if (n == 2) ++again;
      }
      ++covered;
    }
    std::cerr << "hooks crash matrix: " << row.op << ": " << steps << " steps, stride " << stride << ", " << killed
              << " killed, " << again << " hooks sent twice (each said why)\n";
    REQUIRE(killed > 0);
  }
  REQUIRE(covered > 0);
}

TEST_CASE("a hook still running in one process is not run again by another emco that resumes the operation",
          "[reliability][hooks]") {
  Fleet f(1, 1);
  WorkflowClient client;
  client.answers["/invoke/wf-slow"] = {.status = 204, .delay_ms = 3000};
  std::ofstream(f.root() / "hooks.yaml") << hook("slow", "pre-install", client.server.port());
  f.run_ok({"apply", "-f", "hooks.yaml"});
  Proc a = f.start({"dig", "instantiate", Fleet::dig("dig1")}, k_plain);
  for (int i = 0; i < 200 && client.count("/invoke/wf-slow") == 0; ++i) ::usleep(50 * 1000);
  REQUIRE(client.count("/invoke/wf-slow") == 1);
  // While the hook's answer is awaited: a sync (what any command starts in
  // the background when it sees queued work) waits for the first process.
  Exit sync = f.emco({"sync"}, k_plain);
  INFO(sync.out << sync.err);
  REQUIRE(sync.code == 0);
  Exit first = a.wait();
  INFO(first.err);
  REQUIRE(first.code == 0);
  CHECK(client.count("/invoke/wf-slow") == 1);
  CHECK(f.state("dig1") == "Instantiated");
  CHECK(f.snapshot().at("c00") == std::set<std::string>{"dig1-a00=v1"});
}
