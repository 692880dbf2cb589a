// emco's own hooks (plugins/hooks): a local command or an HTTP call at the
// hook points, in process over a fake fleet (tests/lifecycle/world.hpp).

#include <catch2/catch.hpp>

#include <fstream>

#include "core/appcontext/header_rows.hpp"
#include "tests/lifecycle/world.hpp"
#include "tests/tac/workflow_client.hpp"

using namespace emco;
using namespace emco::testing;

namespace {

struct ExecWorld : World {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("emco-exec-hooks-" + std::to_string(::getpid()));
  ExecWorld() {
    plugins::builtin_runtime();
    std::filesystem::create_directories(dir);
    op(lc, "instantiate");
    lifecycle::run(*st, resource::kind("deploymentIntentGroup"), dig, "approve", json::object(), system_clock(), options());
  }
  ~ExecWorld() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  void apply(const std::string& text) {
    manifest::ReadOptions ro;
    auto f = manifest::parse_text(text, "hooks.yaml", ".", ro);
    manifest::BatchOptions bo;
    bo.runtime = &plugins::builtin_runtime();
    manifest::run_batch(*st, manifest::Verb::apply, {f}, bo);
  }
  static std::string hook(const std::string& name, const std::string& type, const std::string& body) {
    return "---\nversion: emco/v2\nresourceContext:\n  anchor: projects/proj/composite-apps/ca/v1/deployment-intent-groups/"
           "dig/emco-hooks\nmetadata:\n  name: " + name + "\nspec:\n  hookType: " + type + "\n" + body;
  }
  std::string state() { return lifecycle::current_state(st->get(dig)->state_info); }
};

}  // namespace

TEST_CASE("a custom exec hook runs with the operation in its environment and its output kept", "[hooks]") {
  ExecWorld w;
  const std::string out = (w.dir / "env.txt").string();
  w.apply(ExecWorld::hook("smoke", "post-install",
                          "  timeout: 10s\n  exec:\n    command: [sh, -c, 'env | grep ^EMCO_ | sort > " + out +
                              "; echo smoke ok for $EMCO_DIG']\n    env: {SMOKE_TARGET: shop}\n"));
  auto r = w.op(w.dig, "instantiate");
  REQUIRE(r.delivery == lifecycle::Delivery::done);
  std::ifstream in(out);
  std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK_THAT(env, Catch::Contains("EMCO_DIG=dig\n") && Catch::Contains("EMCO_PROJECT=proj\n") &&
                      Catch::Contains("EMCO_HOOK_POINT=post-install\n") && Catch::Contains("EMCO_OPERATION=instantiate\n") &&
                      Catch::Contains("EMCO_REVISION=1\n") && Catch::Contains("EMCO_CONTEXT_ID=" + r.context + "\n") &&
                      Catch::Contains("EMCO_CLUSTER_RESULTS={\"p+c1\":{\"Applied\":2}}"));
  json log = lifecycle::hook_log(*w.st, r.context);
  REQUIRE(log.size() == 1);
  CHECK(log[0]["steps"][0]["state"] == "done");
  CHECK(log[0]["steps"][0]["log"] == "smoke ok for dig\n");
}

TEST_CASE("a failing blocking custom hook gates the rollout, a slow one is killed at its timeout", "[hooks]") {
  ExecWorld w;
  SECTION("exit status and output in the error, nothing delivered") {
    w.apply(ExecWorld::hook("gate", "pre-install", "  exec:\n    command: [sh, -c, 'echo smoke failed >&2; exit 3']\n"));
    CHECK_THROWS_WITH(w.op(w.dig, "instantiate"),
                      Catch::Contains("custom hook 'gate'") && Catch::Contains("exited 3: smoke failed"));
    CHECK(w.state() == "Approved");
    CHECK(w.fleet.clusters["p+c1"].objects.empty());
  }
  SECTION("killed with what it started at its timeout") {
    w.apply(ExecWorld::hook("slow", "pre-install", "  timeout: 300ms\n  exec:\n    command: [sh, -c, 'sleep 30 & sleep 30']\n"));
    auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH(w.op(w.dig, "instantiate"), Catch::Contains("did not finish within 300ms and was killed"));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    CHECK(w.state() == "Approved");
  }
  SECTION("a non-blocking one is reported and the rollout goes on") {
    w.apply(ExecWorld::hook("advice", "pre-install", "  blocking: false\n  exec:\n    command: ['false']\n"));
    auto r = w.op(w.dig, "instantiate");
    CHECK(r.delivery == lifecycle::Delivery::done);
    REQUIRE(r.failures.size() == 1);
    CHECK_THAT(r.failures.front(), Catch::Contains("'false' exited 1") && Catch::Contains("not blocking"));
  }
}

TEST_CASE("a custom HTTP hook posts the operation to its URL, 2xx passes", "[hooks]") {
  ExecWorld w;
  emco::test::WorkflowClient ci;
  ci.answers["/gate"] = {.status = 200, .body = "green"};
  ci.answers["/red"] = {.status = 409, .body = "tests failed"};
  const std::string base = "http://127.0.0.1:" + std::to_string(ci.server.port());
  w.apply(ExecWorld::hook("ci", "post-install", "  http:\n    url: " + base + "/gate\n    headers: {X-Token: t}\n"));
  auto r = w.op(w.dig, "instantiate");
  REQUIRE(r.delivery == lifecycle::Delivery::done);
  REQUIRE(ci.seen.size() == 1);
  CHECK(ci.seen[0].headers["x-token"] == "t");
  json body = json::parse(ci.seen[0].body);
  CHECK(body["hookPoint"] == "post-install");
  CHECK(body["deploymentIntentGroup"] == "dig");
  CHECK(body["clusters"]["p+c1"]["Applied"] == 2);
  CHECK(lifecycle::hook_log(*w.st, r.context)[0]["steps"][0]["log"] == "green");
  // A refusing gate before an update: the update is refused, the revision stays.
  w.apply(ExecWorld::hook("red", "pre-update", "  http:\n    url: " + base + "/red\n"));
  CHECK_THROWS_WITH(w.op(w.dig, "update"), Catch::Contains("update refused by a hook") &&
                                               Catch::Contains("answered HTTP 409: tests failed"));
  CHECK(w.states().back() == "Instantiated/1");
}

TEST_CASE("a custom hook runs a command or makes a call, not both or neither", "[hooks]") {
  ExecWorld w;
  CHECK_THROWS_WITH(w.apply(ExecWorld::hook("both", "pre-install",
                                            "  exec: {command: ['true']}\n  http: {url: 'http://x'}\n")),
                    Catch::Contains("hooks.yaml:") && Catch::Contains("either a command (spec.exec) or an HTTP call"));
  CHECK_THROWS_WITH(w.apply(ExecWorld::hook("bad", "pre-install", "  timeout: soon\n  exec: {command: ['true']}\n")),
                    Catch::Contains("'soon' is not a positive Go duration"));
}
