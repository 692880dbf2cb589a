// Child contexts (spec/lifecycle.md §7) made by whoever finishes delivering
// their parent: the operation that waited, or resume() (emco sync, emco
// serve's delivery thread, a worker) after --no-wait, a kill or a planner's
// failure; made once when two processes resume at the same time. A fake
// ChildPlanner gives each delivered context one child with a ConfigMap.

#include <catch2/catch.hpp>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/status/status.hpp"
#include "world.hpp"

using namespace emco;
using namespace emco::testing;
using namespace emco::sync::testing;
using namespace std::chrono_literals;
using nlohmann::json;
namespace ac = emco::appcontext;

namespace {

// One child per parent, with the ConfigMap "kid" on p+c1. `failures`
// calls fail first; with `meet` set, each call waits (up to 30 s) until that
// many calls are in flight, so that two processes' plans exist at once.
struct KidPlanner : lifecycle::ChildPlanner {
  mutable std::mutex m;
  mutable std::condition_variable cv;
  mutable int calls = 0;
  mutable int failures = 0;
  int meet = 0;

  std::string name() const override { return "kid"; }
  std::vector<ac::AppContext> children(const lifecycle::ChildCall& call) const override {
    {
      std::unique_lock lock(m);
      ++calls;
      cv.notify_all();
      if (meet > 0) cv.wait_for(lock, 30s, [&] { return calls >= meet; });
      if (failures > 0) {
        --failures;
        fail(ErrorKind::failed, "the server of '" + call.parent().id + "' has no address yet");
      }
    }
    ac::AppContext kid;
    ac::App app;
    app.name = "service-discovery";
    ac::Cluster cl;
    cl.name = "p+c1";
    cl.resources.push_back({"kid+ConfigMap", kid.intern("kid")});
    app.clusters.push_back(cl);
    kid.apps.push_back(app);
    return {kid};
  }
};

struct Kids {
  World& w;
  lifecycle::Runtime rt;
  KidPlanner* planner;
  lifecycle::OperationOptions o;

  explicit Kids(World& world) : w(world) {
    auto p = std::make_unique<KidPlanner>();
    planner = p.get();
    rt.child_planners.push_back(std::move(p));
    o = w.options();
    o.runtime = &rt;
    w.fleet.clusters["p+c1"];  // made before threads share the fleet
    w.op(w.lc, "instantiate");
    w.op(w.dig, "approve");
  }
  lifecycle::OperationResult run(const std::string& op, bool wait, const json& body = json::object()) {
    auto opts = o;
    opts.wait = wait;
    return lifecycle::run(*w.st, resource::kind("deploymentIntentGroup"), w.dig, op, body, system_clock(), opts);
  }
  std::vector<std::string> children(const std::string& ctx) { return ac::header(*w.st, ctx).children; }
  json status() { return status::dig_status(*w.st, w.dig, status::Query{}); }
};

}  // namespace

TEST_CASE("children of a context delivered by resume after --no-wait are made there, once", "[lifecycle][children]") {
  World w;
  Kids k(w);
  auto r = k.run("instantiate", false);
  CHECK(r.delivery == lifecycle::Delivery::pending);
  // Recorded with the operation; not due before the parent is delivered.
  REQUIRE(ac::owed_children(*w.st, r.context));
  CHECK(lifecycle::children_due(*w.st).empty());
  CHECK_FALSE(k.status().contains("childContextsPending"));

  auto resumed = lifecycle::resume(*w.st, k.o);
  REQUIRE(resumed.size() == 1);
  CHECK(resumed[0].context == r.context);
  CHECK(resumed[0].delivery == lifecycle::Delivery::done);
  auto kids = k.children(r.context);
  REQUIRE(kids.size() == 1);
  CHECK(ac::header(*w.st, kids[0]).status == "Instantiated");
  CHECK(w.fleet.clusters["p+c1"].objects == std::set<std::string>{"a", "b", "kid"});
  CHECK_FALSE(ac::owed_children(*w.st, r.context));
  CHECK(k.status()["ChildContextIDs"] == json{kids[0]});
  CHECK_FALSE(k.status().contains("childContextsPending"));

  // Nothing is left: another resume makes no second child.
  CHECK(lifecycle::resume(*w.st, k.o).empty());
  CHECK(k.children(r.context).size() == 1);
  CHECK(k.planner->calls == 1);

  // An update with --no-wait: resume terminates the old child, then makes the new context's.
  w.plan = {{"app1", {{"p+c1", {"a", "b2"}}}}};
  auto u = k.run("update", false);
  REQUIRE(u.context != r.context);
  auto after = lifecycle::resume(*w.st, k.o);
  REQUIRE_FALSE(after.empty());
  for (const auto& x : after) CHECK(x.delivery == lifecycle::Delivery::done);
  CHECK(ac::header(*w.st, kids[0]).status == "Terminated");
  auto new_kids = k.children(u.context);
  REQUIRE(new_kids.size() == 1);
  CHECK(ac::header(*w.st, new_kids[0]).status == "Instantiated");
  CHECK(w.fleet.clusters["p+c1"].objects == std::set<std::string>{"a", "b2", "kid"});
  // The old child's delete came before the new child's apply.
  auto& log = w.fleet.clusters["p+c1"].log;
  auto removed = std::find(log.begin(), log.end(), "remove kid");
  REQUIRE(removed != log.end());
  CHECK(std::find_if(removed, log.end(), [](const std::string& l) { return l == "apply kid" || l == "create kid"; }) !=
        log.end());
}

TEST_CASE("a planner's failure leaves the children owed and shown, made by emco sync, not retried by a serving loop",
          "[lifecycle][children]") {
  World w;
  Kids k(w);
  k.planner->failures = 1;
  auto r = k.run("instantiate", true);
  CHECK(r.delivery == lifecycle::Delivery::failed);
  CHECK(r.status == "Instantiated");
  REQUIRE(r.failures.size() == 1);
  CHECK(r.failures[0] == "child contexts (kid): the server of '" + r.context + "' has no address yet");
  CHECK(k.children(r.context).empty());
  // The status says so, with the planner's words.
  json s = k.status();
  CHECK(s["childContextsPending"] == true);
  CHECK(s["childContextsError"] == r.failures[0]);
  auto due = lifecycle::children_due(*w.st);
  REQUIRE(due.size() == 1);
  CHECK(due[0].ctx == r.context);
  CHECK(due[0].error == r.failures[0]);
  json ws = status::workspace_status(*w.st);
  json row;
  for (const auto& x : ws["resources"])
    if (x["anchor"].get<std::string>().find("deployment-intent-groups") != std::string::npos) row = x;
  CHECK(row["childContextsPending"] == true);

  // emco serve's loop and workers leave a failed one to the user.
  auto loop = k.o;
  loop.retry_children = false;
  CHECK(lifecycle::resume(*w.st, loop).empty());
  CHECK(k.planner->calls == 1);

  auto resumed = lifecycle::resume(*w.st, k.o);
  REQUIRE(resumed.size() == 1);
  CHECK(resumed[0].delivery == lifecycle::Delivery::done);
  REQUIRE(k.children(r.context).size() == 1);
  CHECK(lifecycle::children_due(*w.st).empty());
  CHECK_FALSE(k.status().contains("childContextsPending"));
}

TEST_CASE("a terminate recorded before the children step discards its plan", "[lifecycle][children]") {
  World w;
  Kids k(w);
  auto r = k.run("instantiate", false);
  // The parent is delivered (its children step failed), then terminated:
  // nobody makes them afterwards.
  REQUIRE(ac::owed_children(*w.st, r.context));
  k.planner->failures = 1;
  auto first = lifecycle::resume(*w.st, k.o);
  REQUIRE(first.size() == 1);
  CHECK(first[0].delivery == lifecycle::Delivery::failed);
  REQUIRE(lifecycle::children_due(*w.st).size() == 1);
  auto t = k.run("terminate", true);
  CHECK(t.delivery == lifecycle::Delivery::done);
  CHECK(lifecycle::children_due(*w.st).empty());
  CHECK(lifecycle::resume(*w.st, k.o).empty());
  CHECK(k.children(r.context).empty());
  CHECK(w.fleet.clusters["p+c1"].objects.empty());
}

TEST_CASE("two processes resuming at once make the children once", "[lifecycle][children]") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("emco-children-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
  std::filesystem::create_directories(dir);
  bool created = false;
  const store::Workspace ws = emco::test::init_test_workspace(dir, created);
  {
    World w(store::Store::open(ws));
    Kids k(w);
    // The parent delivered, its children still to make (the planner failed).
    k.planner->failures = 1;
    auto r = k.run("instantiate", true);
    REQUIRE(r.delivery == lifecycle::Delivery::failed);
    REQUIRE(k.planner->calls == 1);
    k.planner->meet = 3;  // each of the next two plans waits for the other's
    // Two resumes at once, each with its own connection to the workspace
    // (threads of one process share its leases: the parent's delivery is
    // over, so only the children step runs concurrently here; two emco
    // processes are tests/dtc's).
    std::vector<std::vector<lifecycle::ResumeResult>> results(2);
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i)
      threads.emplace_back([&, i] {
        auto own = store::Store::open(ws);
        results[i] = lifecycle::resume(*own, k.o);
      });
    for (auto& t : threads) t.join();
    CHECK(k.planner->calls == 3);  // both planned: the claim decided
    for (const auto& res : results)
      for (const auto& x : res) CHECK(x.delivery == lifecycle::Delivery::done);
    // Read afresh (the first connection may still read its older snapshot).
    auto now = store::Store::open(ws);
    auto kids = ac::header(*now, r.context).children;
    REQUIRE(kids.size() == 1);
    CHECK(ac::header(*now, kids[0]).status == "Instantiated");
    CHECK(ac::list(*now, w.dig).size() == 2);  // the parent and one child, no orphan
    CHECK_FALSE(ac::owed_children(*now, r.context));
    CHECK(w.fleet.clusters["p+c1"].objects == std::set<std::string>{"a", "b", "kid"});
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

TEST_CASE("a delivery worker that finishes a context makes its children", "[lifecycle][children][postgresql]") {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("emco-children-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
  std::filesystem::create_directories(dir);
  bool created = false;
  const store::Workspace ws = emco::test::init_test_workspace(dir, created);
  {
    World w(store::Store::open(ws));
    Kids k(w);
    auto r = k.run("instantiate", false);
    auto worker = store::Store::open(ws);
    auto report = lifecycle::work(*worker, k.o, true);
    REQUIRE(report.driven.size() == 1);
    CHECK(report.driven[0].context == r.context);
    CHECK(report.driven[0].delivery == lifecycle::Delivery::done);
    auto now = store::Store::open(ws);
    auto kids = ac::header(*now, r.context).children;
    REQUIRE(kids.size() == 1);
    CHECK(ac::header(*now, kids[0]).status == "Instantiated");
    CHECK(w.fleet.clusters["p+c1"].objects == std::set<std::string>{"a", "b", "kid"});
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}
