// DIG and logical-cloud lifecycle: states, history with instances and
// revisions, delivery through the sync engine (fake planner and clusters).

#include <catch2/catch.hpp>

#include "world.hpp"

using namespace emco;
using namespace emco::testing;
using namespace emco::sync::testing;
using namespace std::chrono_literals;
using nlohmann::json;
namespace ac = emco::appcontext;


TEST_CASE("a DIG goes through instantiate, update, rollback, terminate", "[lifecycle]") {
  World w;
  SECTION("instantiate needs approval and an instantiated logical cloud") {
    CHECK_THROWS_WITH(w.op(w.dig, "instantiate"), Catch::Contains("must be Approved"));
    w.op(w.dig, "approve");
    CHECK_THROWS_WITH(w.op(w.dig, "instantiate"), Catch::Contains("has never been instantiated"));
    CHECK(w.fleet.clusters["p+c1"].log.empty());
  }
  w.op(w.lc, "instantiate");
  w.op(w.dig, "approve");
  CHECK(w.op(w.dig, "approve").message == "approved (unchanged)");

  auto r = w.op(w.dig, "instantiate");
  CHECK(r.delivery == lifecycle::Delivery::done);
  CHECK(r.status == "Instantiated");
  CHECK(r.revision == 1);
  CHECK(w.fleet.clusters["p+c1"].objects == std::set<std::string>{"a", "b"});
  auto h = w.history();
  CHECK(h["statusctxid"] == r.context);
  CHECK(h["actions"].back()["instance"] == r.context);
  CHECK(w.states() == std::vector<std::string>{"Created/0", "Approved/0", "Instantiated/1"});
  const std::string first = r.context;

  CHECK_THROWS_WITH(w.op(w.dig, "instantiate"), Catch::Contains("already instantiated"));
  CHECK_THROWS_WITH(w.op(w.dig, "approve"), Catch::Contains("already instantiated"));
  CHECK_THROWS_WITH(w.op(w.dig, "stop"), Catch::Contains("no deployment in progress"));

  // Update: move app1 to c2 and change b.
  w.plan = {{"app1", {{"p+c2", {"a", "b2"}}}}};
  auto u = w.op(w.dig, "update");
  CHECK(u.delivery == lifecycle::Delivery::done);
  CHECK(u.revision == 2);
  CHECK(u.message == "updated to revision 2");
  CHECK(w.fleet.clusters["p+c1"].objects.empty());
  CHECK(w.fleet.clusters["p+c2"].objects == std::set<std::string>{"a", "b2"});
  CHECK(w.history()["statusctxid"] == first);  // kept across updates
  CHECK(ac::header(*w.st, u.context).status_context == first);
  CHECK(ac::header(*w.st, first).status == "Updated");
  CHECK(w.states() == std::vector<std::string>{"Created/0", "Approved/0", "Instantiated/1", "Updated/1", "Instantiated/2"});

  // Rollback to revision 1 (body as the upstream file writes it: a string).
  auto rb = w.op(w.dig, "rollback", json{{"spec", {{"revision", "1"}}}});
  CHECK(rb.delivery == lifecycle::Delivery::done);
  CHECK(rb.context == first);
  CHECK(rb.revision == 3);
  CHECK(w.fleet.clusters["p+c1"].objects == std::set<std::string>{"a", "b"});
  CHECK(w.fleet.clusters["p+c2"].objects.empty());
  CHECK_THROWS_WITH(w.op(w.dig, "rollback", json{{"spec", {{"revision", 7}}}}), Catch::Contains("no revision 7"));
  CHECK_THROWS_WITH(w.op(w.dig, "rollback", json::object()), Catch::Contains("spec.revision"));

  auto t = w.op(w.dig, "terminate");
  CHECK(t.delivery == lifecycle::Delivery::done);
  CHECK(t.status == "Terminated");
  CHECK(w.fleet.clusters["p+c1"].objects.empty());
  CHECK(w.states().back() == "Terminated/0");
  CHECK(w.history()["actions"].back()["instance"] == first);
  CHECK_THROWS_WITH(w.op(w.dig, "terminate"), Catch::Contains("not instantiated"));

  // Re-instantiate from Terminated: a new context; the old ones are dropped.
  auto again = w.op(w.dig, "instantiate");
  CHECK(again.delivery == lifecycle::Delivery::done);
  CHECK(again.context != first);
  CHECK(ac::list(*w.st, w.dig) == std::vector<std::string>{again.context});
}

TEST_CASE("a failed plan changes nothing", "[lifecycle]") {
  World w;
  w.op(w.lc, "instantiate");
  w.op(w.dig, "approve");
  auto before = w.st->dump();
  auto o = w.options();
  o.planner = [](store::Store&, const resource::Key&, const std::string&, const std::string&) -> ac::AppContext {
    fail(ErrorKind::invalid, "chart 'x' does not render");
  };
  CHECK_THROWS_WITH(lifecycle::run(*w.st, resource::kind("deploymentIntentGroup"), w.dig, "instantiate",
                                   json::object(), system_clock(), o),
                    Catch::Contains("does not render"));
  CHECK(w.st->dump() == before);
}

TEST_CASE("no-wait leaves the work queued, resume delivers it", "[lifecycle]") {
  World w;
  w.op(w.lc, "instantiate");
  w.op(w.dig, "approve");
  auto o = w.options();
  o.wait = false;
  auto r = lifecycle::run(*w.st, resource::kind("deploymentIntentGroup"), w.dig, "instantiate", json::object(),
                          system_clock(), o);
  CHECK(r.delivery == lifecycle::Delivery::pending);
  CHECK(r.status == "Created");
  CHECK(w.fleet.clusters["p+c1"].log.empty());
  CHECK(sync::resumable(*w.st) == std::vector<std::string>{r.context});

  auto res = lifecycle::resume(*w.st, w.options());
  REQUIRE(res.size() == 1);
  CHECK(res[0].delivery == lifecycle::Delivery::done);
  CHECK(res[0].status == "Instantiated");
  CHECK(w.fleet.clusters["p+c1"].objects.size() == 2);
  CHECK(lifecycle::resume(*w.st, w.options()).empty());
}

TEST_CASE("a timeout leaves the delivery pending, a later operation finishes it first", "[lifecycle]") {
  World w;
  w.op(w.lc, "instantiate");
  w.op(w.dig, "approve");
  w.fleet.clusters["p+c1"].always_unreachable = true;
  auto o = w.options();
  o.timeout = 100ms;
  auto r = lifecycle::run(*w.st, resource::kind("deploymentIntentGroup"), w.dig, "instantiate", json::object(),
                          system_clock(), o);
  CHECK(r.delivery == lifecycle::Delivery::pending);
  CHECK(r.status == "Instantiating");
  w.fleet.clusters["p+c1"].always_unreachable = false;
  // Terminate first resumes the interrupted instantiate, then terminates.
  auto t = w.op(w.dig, "terminate");
  CHECK(t.delivery == lifecycle::Delivery::done);
  auto& log = w.fleet.clusters["p+c1"].log;
  REQUIRE(log.size() == 4);
  CHECK(log[0] == "apply a");
  CHECK(log[3] == "remove a");
}

TEST_CASE("a failed delivery reports failed and run_operation throws", "[lifecycle]") {
  World w;
  w.op(w.lc, "instantiate");
  w.op(w.dig, "approve");
  w.plan = {{"app1", {{"p+c1", {"a", "fail:b"}}}}};
  auto r = w.op(w.dig, "instantiate");
  CHECK(r.delivery == lifecycle::Delivery::failed);
  CHECK(r.status == "InstantiateFailed");
  REQUIRE_FALSE(r.failures.empty());
  // The state history records the instantiation (rsync accepted it).
  CHECK(w.states().back() == "Instantiated/1");
}

TEST_CASE("admin logical cloud instantiate, update, terminate", "[lifecycle]") {
  World w;
  CHECK(w.op(w.lc, "update").message == "not instantiated (unchanged)");
  CHECK(w.op(w.lc, "instantiate").message == "instantiated");
  CHECK_THROWS_WITH(w.op(w.lc, "instantiate"), Catch::Contains("already instantiated"));
  CHECK(w.op(w.lc, "update").message == "updated");
  CHECK_THROWS_WITH(w.op(w.lc, "stop"), Catch::Contains("no deployment in progress"));
  CHECK(w.op(w.lc, "terminate").message == "terminated");
  auto si = json::parse(w.st->get(w.lc)->state_info);
  auto& a = si["actions"];
  REQUIRE(a.size() == 4);
  CHECK(a[1]["revision"] == 1);
  CHECK(a[2]["state"] == "Updated");
  CHECK(a[3]["revision"] == 3);
}

TEST_CASE("deleting a DIG removes its AppContexts, children first", "[lifecycle]") {
  World w;
  w.op(w.lc, "instantiate");
  w.op(w.dig, "approve");
  auto r = w.op(w.dig, "instantiate");
  REQUIRE(r.delivery == lifecycle::Delivery::done);
  w.plan = {{"app1", {{"p+c2", {"a"}}}}};
  auto u = w.op(w.dig, "update");
  REQUIRE(u.delivery == lifecycle::Delivery::done);
  // A child context (service discovery's kind) under the running one.
  ac::AppContext child;
  child.id = random_context_id();
  child.owner = {"deploymentIntentGroup", w.dig};
  child.parent = u.context;
  ac::save(*w.st, child);
  const auto& k = resource::kind("deploymentIntentGroup");
  CHECK_THROWS_WITH(w.st->write([&] { lifecycle::before_delete(*w.st, k, *w.st->get(w.dig)); }),
                    Catch::Contains("it is Instantiated"));
  REQUIRE(w.op(w.dig, "terminate").delivery == lifecycle::Delivery::done);
  REQUIRE(ac::list(*w.st, w.dig).size() == 3);

  w.st->write([&] { lifecycle::before_delete(*w.st, k, *w.st->get(w.dig)); });
  CHECK(ac::list(*w.st, w.dig).empty());
  for (const auto& id : {r.context, u.context, child.id}) CHECK_FALSE(ac::exists(*w.st, id));
  CHECK(ac::active_contexts(*w.st).empty());
}

namespace {

// A hook provider that writes into cluster p+c1's log when its steps run,
// so that a test sees them in order with the deliveries.
struct LoggingHooks : lifecycle::OperationHooks {
  FakeCluster& cluster;
  explicit LoggingHooks(FakeCluster& c) : cluster(c) {}
  std::string name() const override { return "log"; }
  std::vector<lifecycle::HookStep> steps(const store::Store&, const resource::Key&, lifecycle::HookPoint p) const override {
    if (p != lifecycle::HookPoint::pre_termination && p != lifecycle::HookPoint::post_termination) return {};
    return {{"log", lifecycle::hook_point_name(p), "", true}};
  }
  lifecycle::HookOutcome run(const lifecycle::HookCall&, const lifecycle::HookStep& step) const override {
    std::lock_guard lock(cluster.m);
    cluster.log.push_back("hook " + step.name);
    return {true, "logged", ""};
  }
};

}  // namespace

TEST_CASE("a terminate interrupted before its pre-termination hooks runs them before any child is terminated",
          "[lifecycle][hooks]") {
  World w;
  lifecycle::Runtime rt;
  FakeCluster& c1 = w.fleet.clusters["p+c1"];
  rt.hooks.push_back(std::make_unique<LoggingHooks>(c1));
  auto o = w.options();
  o.runtime = &rt;
  w.op(w.lc, "instantiate");
  w.op(w.dig, "approve");
  auto r = lifecycle::run(*w.st, resource::kind("deploymentIntentGroup"), w.dig, "instantiate", json::object(),
                          system_clock(), o);
  REQUIRE(r.delivery == lifecycle::Delivery::done);
  // A child context (service discovery's kind) delivered under it.
  ac::AppContext child;
  child.id = random_context_id();
  child.owner = {"deploymentIntentGroup", w.dig};
  child.parent = r.context;
  ac::App app;
  app.name = "kid";
  ac::Cluster cl;
  cl.name = "p+c1";
  cl.resources.push_back({"kid+ConfigMap", child.intern("kid")});
  app.clusters.push_back(cl);
  child.apps.push_back(app);
  w.st->write([&] {
    ac::save(*w.st, child);
    ac::enqueue(*w.st, child.id, ac::event::instantiate);
  });
  REQUIRE(lifecycle::resume(*w.st, o).size() == 1);
  REQUIRE(c1.objects == std::set<std::string>{"a", "b", "kid"});

  // The terminate is recorded, then the process stops (as kill -9 would)
  // before its pre-termination hook ran: `emco sync` continues it.
  auto no_wait = o;
  no_wait.wait = false;
  lifecycle::run(*w.st, resource::kind("deploymentIntentGroup"), w.dig, "terminate", json::object(), system_clock(),
                 no_wait);
  c1.log.clear();
  auto resumed = lifecycle::resume(*w.st, o);
  for (const auto& x : resumed) CHECK(x.delivery == lifecycle::Delivery::done);
  CHECK(c1.objects.empty());
  INFO(json(c1.log).dump());
  REQUIRE(c1.log.size() == 5);
  CHECK(c1.log.front() == "hook pre-termination");
  CHECK(c1.log.back() == "hook post-termination");
  CHECK(std::find(c1.log.begin(), c1.log.end(), "remove kid") < std::find(c1.log.begin(), c1.log.end(), "remove a"));
}
