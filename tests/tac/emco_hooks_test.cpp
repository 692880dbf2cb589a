// emco's own hooks (plugins/hooks): a local command or an HTTP call at the
// hook points, in process over a fake fleet (tests/lifecycle/world.hpp).

#include <catch2/catch.hpp>

#include <fstream>
#include <thread>

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

TEST_CASE("a hook's blocking call keeps the operation's context held while it waits", "[hooks]") {
  ExecWorld w;
  int beats = 0;
  lifecycle::OperationOptions o = w.options();
  const std::string ctx = "ctx", op = "instantiate";
  lifecycle::HookCall call{*w.st, w.dig, ctx, op, 1, lifecycle::HookPoint::pre_install, o, system_clock(),
                           std::chrono::steady_clock::now() + std::chrono::seconds(30), [&] { ++beats; }};
  // A call longer than two heartbeats (a slow HTTP gate): the waiting thread beats.
  std::thread::id worker;
  call.keep_alive_during([&] {
    worker = std::this_thread::get_id();
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  });
  CHECK(beats >= 2);
  CHECK(worker != std::this_thread::get_id());
  // What the call throws reaches the caller.
  CHECK_THROWS_WITH(call.keep_alive_during([] { throw std::runtime_error("connection reset"); }), "connection reset");
}

TEST_CASE("rollback runs the post-update hooks, migrate the target's pre- and post-update hooks, undone when refused",
          "[hooks]") {
  ExecWorld w;
  const auto& k = resource::kind("deploymentIntentGroup");
  const std::string seen = (w.dir / "seen.txt").string();
  auto recorder = [&](const std::string& dig, const std::string& name, const std::string& type,
                      const std::string& condition = "true") {
    std::string text = ExecWorld::hook(name, type, "  exec:\n    command: [sh, -c, '" + condition + " && echo " + name +
                                                       " $EMCO_OPERATION $EMCO_DIG >> " + seen + "']\n");
    return text.replace(text.find("/dig/emco-hooks"), 15, "/" + dig + "/emco-hooks");
  };
  auto seen_lines = [&] {
    std::ifstream in(seen);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  w.apply(recorder("dig", "preup", "pre-update") + recorder("dig", "postup", "post-update"));
  REQUIRE(w.op(w.dig, "instantiate").delivery == lifecycle::Delivery::done);
  REQUIRE(w.op(w.dig, "update").delivery == lifecycle::Delivery::done);
  REQUIRE(w.op(w.dig, "rollback", {{"spec", {{"revision", 1}}}}).delivery == lifecycle::Delivery::done);
  CHECK(seen_lines() == "preup update dig\npostup update dig\npostup rollback dig\n");

  // Migrate into dig2: dig2's hooks run; its pre-update gate refuses first.
  const std::string gate = (w.dir / "green").string();
  w.apply("---\nversion: emco/v2\nresourceContext: {anchor: projects/proj/composite-apps/ca/v1/deployment-intent-groups}\n"
          "metadata: {name: dig2}\nspec: {compositeProfile: prof, version: r2, logicalCloud: lc}\n" +
          recorder("dig2", "gate", "pre-update", "test -e " + gate) + recorder("dig2", "after", "post-update"));
  const resource::Key dig2 = resource::Key::parse(
      "project=proj/compositeApp=ca/compositeAppVersion=v1/deploymentIntentGroup=dig2");
  lifecycle::run(*w.st, k, dig2, "approve", json::object(), system_clock(), w.options());
  const json migrate = {{"spec", {{"targetCompositeAppVersion", "v1"}, {"targetDeploymentIntentGroup", "dig2"}}}};
  const auto source_before = w.st->get(w.dig)->state_info, target_before = w.st->get(dig2)->state_info;
  const auto contexts_before = ac::list(*w.st, w.dig);
  CHECK_THROWS_WITH(lifecycle::run(*w.st, k, w.dig, "migrate", migrate, system_clock(), w.options()),
                    Catch::Contains("migrate refused by a hook") && Catch::Contains("custom hook 'gate'"));
  CHECK(w.st->get(w.dig)->state_info == source_before);
  CHECK(w.st->get(dig2)->state_info == target_before);
  CHECK(ac::list(*w.st, w.dig) == contexts_before);
  CHECK(ac::list(*w.st, dig2).empty());
  CHECK(ac::active_contexts(*w.st).empty());

  std::ofstream(gate) << "";
  auto m = lifecycle::run(*w.st, k, w.dig, "migrate", migrate, system_clock(), w.options());
  CHECK(m.delivery == lifecycle::Delivery::done);
  CHECK(seen_lines() == "preup update dig\npostup update dig\npostup rollback dig\ngate migrate dig2\nafter migrate dig2\n");
  CHECK(lifecycle::current_state(w.st->get(dig2)->state_info) == "Instantiated");
}
