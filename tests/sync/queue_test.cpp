// The persisted event queue and the rsync state machine over an in-memory
// workspace and fake clusters.

#include <catch2/catch.hpp>

#include <unistd.h>

#include "core/appcontext/appcontext.hpp"
#include "core/appcontext/job_rows.hpp"
#include "core/store/store.hpp"
#include "core/sync/queue.hpp"
#include "core/sync/worker.hpp"
#include "core/util/clock.hpp"
#include "fake_target.hpp"
#include "tests/test_store.hpp"

using namespace emco;
using namespace emco::sync;
using namespace emco::sync::testing;
using namespace std::chrono_literals;
namespace ac = emco::appcontext;

namespace {

// A context with apps -> clusters -> resources; manifests are object names.
ac::AppContext make_context(const std::map<std::string, std::map<std::string, std::vector<std::string>>>& apps,
                            const std::string& status_ctx = {}) {
  ac::AppContext c;
  c.id = random_context_id();
  c.owner.kind = "deploymentIntentGroup";
  c.owner.key.parts = {{"project", "p"}, {"compositeApp", "ca"}, {"version", "v1"}, {"deploymentIntentGroup", "dig"}};
  c.meta["Namespace"] = "default";
  c.created = "2026-01-01T00:00:00.000Z";
  c.status_context = status_ctx;
  for (const auto& [app, clusters] : apps) {
    ac::App a;
    a.name = app;
    for (const auto& [cluster, objects] : clusters) {
      ac::Cluster cl;
      cl.name = cluster;
      for (const auto& o : objects) cl.resources.push_back({o + "+ConfigMap", c.intern(o)});
      a.clusters.push_back(std::move(cl));
    }
    c.apps.push_back(std::move(a));
  }
  return c;
}

DriveOptions fast(Fleet& fleet) {
  DriveOptions o;
  o.engine.backoff_initial = 5ms;
  o.engine.backoff_max = 20ms;
  o.engine.poll = 10ms;
  o.engine.ready_poll = 5ms;
  o.factory = fleet.factory();
  return o;
}

std::string status_of(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                      const std::string& res) {
  auto s = ac::resource_state(st, ctx, app, cluster, res);
  return s ? s->status : "Pending";
}

std::vector<std::string> queue_states(store::Store& st, const std::string& ctx) {
  std::vector<std::string> v;
  for (const auto& e : ac::queue(st, ctx)) v.push_back(e.event + ":" + e.status);
  return v;
}

}  // namespace

TEST_CASE("the state machine table is the newest code's", "[sync][queue]") {
  CHECK(transition("Instantiate").desired == "Instantiated");
  CHECK(transition("Update").current == "Instantiating");
  CHECK(transition("UpdateDelete").desired == "Updated");
  CHECK(transition("UpdateDelete").error == "UpdatedFailed");
  CHECK(transition("Terminate").sources.size() == 8);
  CHECK(transition("Read").sources.size() == 4);
  CHECK(transition("Read").error == "InstantiateFailed");
  CHECK_THROWS_AS(transition("Migrate"), Error);
}

TEST_CASE("instantiate then terminate through the queue", "[sync][queue]") {
  auto st = emco::test::open_test_store();
  Fleet fleet;
  auto c = make_context({{"app1", {{"p+c1", {"a", "b"}}, {"p+c2", {"a"}}}}});
  ac::save(*st, c);
  ac::enqueue(*st, c.id, "Instantiate");
  CHECK(resumable(*st) == std::vector<std::string>{c.id});

  auto r = drive(*st, c.id, fast(fleet));
  CHECK(r.end == DriveEnd::drained);
  CHECK(r.status == "Instantiated");
  CHECK(ac::header(*st, c.id).desired == "Instantiated");
  CHECK(fleet.clusters["p+c1"].objects == std::set<std::string>{"a", "b"});
  CHECK(status_of(*st, c.id, "app1", "p+c1", "b+ConfigMap") == "Applied");
  CHECK(ac::active_contexts(*st).empty());
  CHECK(queue_states(*st, c.id) == std::vector<std::string>{"Instantiate:Done"});
  auto cs = ac::states(*st, c.id).clusters;
  REQUIRE(cs.size() == 2);
  CHECK(cs[0].connectivity == "Available");

  request_terminate(*st, c.id);
  CHECK_FALSE(ac::header(*st, c.id).pending_terminate);  // nobody else is working on it
  r = drive(*st, c.id, fast(fleet));
  CHECK(r.status == "Terminated");
  CHECK(fleet.clusters["p+c1"].objects.empty());
  // Reverse order within the cluster.
  auto& log = fleet.clusters["p+c1"].log;
  CHECK(std::vector<std::string>(log.end() - 2, log.end()) == std::vector<std::string>{"remove b", "remove a"});
  CHECK(status_of(*st, c.id, "app1", "p+c1", "a+ConfigMap") == "Deleted");

  // Terminate of a Terminated context: skipped, state untouched.
  ac::enqueue(*st, c.id, "Terminate");
  r = drive(*st, c.id, fast(fleet));
  CHECK(r.status == "Terminated");
  CHECK(queue_states(*st, c.id).back() == "Terminate:Skip");
}

TEST_CASE("an invalid event is skipped and sets the error state", "[sync][queue]") {
  auto st = emco::test::open_test_store();
  Fleet fleet;
  auto c = make_context({{"app1", {{"p+c1", {"a"}}}}});
  ac::save(*st, c);
  ac::enqueue(*st, c.id, "UpdateDelete", "123");
  auto r = drive(*st, c.id, fast(fleet));
  CHECK(r.status == "UpdatedFailed");
  auto q = ac::queue(*st, c.id);
  REQUIRE(q.size() == 1);
  CHECK(q[0].status == "Skip");
  CHECK(q[0].message.find("not valid in state Created") != std::string::npos);
  CHECK(fleet.clusters["p+c1"].log.empty());
}

TEST_CASE("a stopped context skips its events", "[sync][queue]") {
  auto st = emco::test::open_test_store();
  Fleet fleet;
  auto c = make_context({{"app1", {{"p+c1", {"a"}}}}});
  ac::save(*st, c);
  ac::enqueue(*st, c.id, "Instantiate");
  ac::set_stop(*st, c.id, true);
  auto r = drive(*st, c.id, fast(fleet));
  CHECK(r.status == "Created");
  CHECK(queue_states(*st, c.id) == std::vector<std::string>{"Instantiate:Skip"});
  CHECK(ac::active_contexts(*st).empty());
}

TEST_CASE("a failed apply leaves InstantiateFailed and an Error element", "[sync][queue]") {
  auto st = emco::test::open_test_store();
  Fleet fleet;
  auto c = make_context({{"app1", {{"p+c1", {"a", "fail:b"}}}}});
  ac::save(*st, c);
  ac::enqueue(*st, c.id, "Instantiate");
  auto r = drive(*st, c.id, fast(fleet));
  CHECK(r.status == "InstantiateFailed");
  auto q = ac::queue(*st, c.id);
  CHECK(q[0].status == "Error");
  CHECK(q[0].message.find("p+c1") != std::string::npos);
  CHECK(status_of(*st, c.id, "app1", "p+c1", "fail:b+ConfigMap") == "Failed");
}

TEST_CASE("an interrupted event stays pending and resumes", "[sync][queue]") {
  auto st = emco::test::open_test_store();
  Fleet fleet;
  fleet.clusters["p+c2"].always_unreachable = true;
  auto c = make_context({{"app1", {{"p+c1", {"a"}}, {"p+c2", {"a"}}}}});
  ac::save(*st, c);
  ac::enqueue(*st, c.id, "Instantiate");
  auto o = fast(fleet);
  o.engine.deadline = std::chrono::steady_clock::now() + 100ms;
  auto r = drive(*st, c.id, o);
  CHECK(r.end == DriveEnd::interrupted);
  CHECK(ac::header(*st, c.id).status == "Instantiating");
  CHECK(queue_states(*st, c.id) == std::vector<std::string>{"Instantiate:Pending"});
  CHECK(resumable(*st) == std::vector<std::string>{c.id});
  CHECK(status_of(*st, c.id, "app1", "p+c2", "a+ConfigMap") == "Retrying");
  auto cs = ac::states(*st, c.id).clusters;
  REQUIRE(cs.size() == 2);
  CHECK(cs[1].connectivity == "Retrying");

  fleet.clusters["p+c2"].always_unreachable = false;
  r = drive(*st, c.id, fast(fleet));
  CHECK(r.end == DriveEnd::drained);
  CHECK(r.status == "Instantiated");
  CHECK(status_of(*st, c.id, "app1", "p+c2", "a+ConfigMap") == "Applied");
}

TEST_CASE("update applies the difference, then deletes what is gone", "[sync][queue]") {
  auto st = emco::test::open_test_store();
  Fleet fleet;
  auto old_ctx = make_context({{"app1", {{"p+c1", {"a", "b"}}}}, {"app2", {{"p+c1", {"x"}}}}});
  ac::save(*st, old_ctx);
  ac::enqueue(*st, old_ctx.id, "Instantiate");
  REQUIRE(drive(*st, old_ctx.id, fast(fleet)).status == "Instantiated");
  fleet.clusters["p+c1"].log.clear();

  // app1 moves from c1 to c2 with a changed b; app2 unchanged.
  auto new_ctx = make_context({{"app1", {{"p+c2", {"a", "b2"}}}}, {"app2", {{"p+c1", {"x"}}}}}, old_ctx.id);
  ac::save(*st, new_ctx);
  ac::enqueue(*st, new_ctx.id, "Update", old_ctx.id);
  auto r = drive(*st, new_ctx.id, fast(fleet));
  CHECK(r.end == DriveEnd::drained);
  CHECK(r.status == "Instantiated");
  CHECK(ac::header(*st, old_ctx.id).status == "Updated");
  CHECK(fleet.clusters["p+c2"].objects == std::set<std::string>{"a", "b2"});
  CHECK(fleet.clusters["p+c1"].objects == std::set<std::string>{"x"});
  // Only removals reached c1: x was not re-sent.
  CHECK(fleet.clusters["p+c1"].log == std::vector<std::string>{"remove b", "remove a"});
  // Statuses live in the status context (the old one).
  CHECK(status_of(*st, old_ctx.id, "app1", "p+c2", "b2+ConfigMap") == "Applied");
  CHECK(status_of(*st, old_ctx.id, "app1", "p+c1", "a+ConfigMap") == "Deleted");
  CHECK(queue_states(*st, old_ctx.id).back() == "UpdateDelete:Done");

  // Rollback: Update from the new context back to the old one (source Updated).
  ac::enqueue(*st, old_ctx.id, "Update", new_ctx.id);
  r = drive(*st, old_ctx.id, fast(fleet));
  CHECK(r.status == "Instantiated");
  CHECK(ac::header(*st, new_ctx.id).status == "Updated");
  CHECK(fleet.clusters["p+c1"].objects == std::set<std::string>{"a", "b", "x"});
  CHECK(fleet.clusters["p+c2"].objects.empty());
}

TEST_CASE("a live lease keeps other drivers out, a dead one is taken over", "[sync][queue]") {
  auto st = emco::test::open_test_store();
  Fleet fleet;
  auto c = make_context({{"app1", {{"p+c1", {"a"}}}}});
  ac::save(*st, c);
  ac::enqueue(*st, c.id, "Instantiate");
  ac::set_status(*st, c.id, "Instantiating");  // as a process that died while working leaves it
  // Our parent process is alive and holds a fresh lease.
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  st->write([&] { st->set_meta("sync.lease." + c.id, std::to_string(getppid()) + " " + std::to_string(now)); });
  CHECK(held_by_live_process(*st, c.id));
  CHECK(resumable(*st).empty());
  CHECK(drive(*st, c.id, fast(fleet)).end == DriveEnd::busy);
  request_terminate(*st, c.id);
  CHECK(ac::header(*st, c.id).pending_terminate);

  // A stale heartbeat: taken over. The pending terminate skips Instantiate.
  st->write([&] { st->set_meta("sync.lease." + c.id, std::to_string(getppid()) + " 1000"); });
  CHECK_FALSE(held_by_live_process(*st, c.id));
  auto r = drive(*st, c.id, fast(fleet));
  CHECK(r.end == DriveEnd::drained);
  CHECK(queue_states(*st, c.id) == std::vector<std::string>{"Instantiate:Skip", "Terminate:Done"});
  CHECK(r.status == "Terminated");
  CHECK_FALSE(ac::header(*st, c.id).pending_terminate);
}

TEST_CASE("work queued for this process to deliver is held from the transaction that queues it", "[sync][queue]") {
  auto st = emco::test::open_test_store();
  Fleet fleet;
  auto c = make_context({{"app1", {{"p+c1", {"a"}}}}});
  auto other = make_context({{"app1", {{"p+c2", {"a"}}}}});
  st->write([&] {
    ac::save(*st, c);
    ac::save(*st, other);
    enqueue_to_deliver(*st, c.id, "Instantiate");
    ac::enqueue(*st, other.id, "Instantiate");  // queued for whoever comes (as --no-wait leaves it)
  });
  // A command starting now (auto-resume) leaves c to this process; `other`
  // is anybody's.
  CHECK(held_by_live_process(*st, c.id));
  CHECK(resumable(*st) == std::vector<std::string>{other.id});
  CHECK(drive(*st, c.id, fast(fleet)).end == DriveEnd::drained);
  CHECK_FALSE(held_by_live_process(*st, c.id));

  // Given up without delivering: resumable by the next command.
  auto later = make_context({{"app1", {{"p+c1", {"b"}}}}});
  ac::save(*st, later);
  enqueue_to_deliver(*st, later.id, "Instantiate");
  CHECK(held_by_live_process(*st, later.id));
  release_lease(*st, later.id);
  CHECK(resumable(*st) == std::vector<std::string>{other.id, later.id});

  // Another live process's lease stays its own; a terminate is then left
  // to it (PendingTerminate) and this process holds nothing.
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  const std::string parents = std::to_string(getppid()) + " " + std::to_string(now);
  st->write([&] { st->set_meta("sync.lease." + other.id, parents); });
  request_terminate(*st, other.id);
  CHECK(st->meta("sync.lease." + other.id) == parents);
  CHECK(ac::header(*st, other.id).pending_terminate);
  // An unheld one: the terminating process holds it.
  request_terminate(*st, c.id);
  CHECK(held_by_live_process(*st, c.id));
  CHECK(drive(*st, c.id, fast(fleet)).end == DriveEnd::drained);
  CHECK(ac::header(*st, c.id).status == "Terminated");
}

TEST_CASE("auto-resume's background slot: one live sync at a time, not held for ever by a reused pid", "[sync][queue]") {
  auto st = emco::test::open_test_store();
  const int64_t now = ac::jobs::clock_ms(*st);
  const auto set = [&](const std::string& v) { st->write([&] { st->set_meta("sync.background", v); }); };
  const std::string parent = std::to_string(getppid());  // alive for the whole test

  CHECK(claim_background_slot(*st));  // free
  CHECK_FALSE(claim_background_slot(*st));  // this process holds it now
  set_background_slot(*st, getppid());
  CHECK_FALSE(claim_background_slot(*st));  // a live sync started just now
  set_background_slot(*st, 0);
  CHECK(claim_background_slot(*st));  // freed

  // Started longer ago than any background sync runs: its pid belongs to
  // somebody else by now.
  const int64_t limit = std::chrono::duration_cast<std::chrono::milliseconds>(k_background_timeout + 1min).count();
  set(parent + " " + std::to_string(now - limit - 1000));
  CHECK(claim_background_slot(*st));
  set(parent + " " + std::to_string(now - limit + 60000));
  CHECK_FALSE(claim_background_slot(*st));
  set("999999999 " + std::to_string(now));  // no such process
  CHECK(claim_background_slot(*st));
  set(parent);  // an earlier emco's slot: the pid alone, held while it lives
  CHECK_FALSE(claim_background_slot(*st));
}

TEST_CASE("a lease held on another machine is live while its heartbeat is fresh", "[sync][queue]") {
  auto st = emco::test::open_test_store();
  auto c = make_context({{"app1", {{"p+c1", {"a"}}}}});
  ac::save(*st, c);
  ac::enqueue(*st, c.id, "Instantiate");
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  // No such pid here, but the holder is on another host: only its
  // heartbeat says whether it is alive (a shared database, issue 21).
  st->write([&] { st->set_meta("sync.lease." + c.id, "999999999 " + std::to_string(now) + " elsewhere.example 0123abcd"); });
  CHECK(held_by_live_process(*st, c.id));
  CHECK(resumable(*st).empty());
  st->write([&] { st->set_meta("sync.lease." + c.id, "999999999 1000 elsewhere.example 0123abcd"); });
  CHECK_FALSE(held_by_live_process(*st, c.id));
  // The same pid on this machine is dead however fresh its heartbeat.
  st->write([&] { st->set_meta("sync.lease." + c.id, "999999999 " + std::to_string(now) + " " + emco::sync::worker_host() + " 0123abcd"); });
  CHECK_FALSE(held_by_live_process(*st, c.id));
}

TEST_CASE("a Read event records readiness and connectivity without touching the clusters", "[sync][queue]") {
  auto st = emco::test::open_test_store();
  Fleet fleet;
  auto c = make_context({{"app1", {{"p+c1", {"a", "b"}}, {"p+c2", {"a"}}}}});
  ac::save(*st, c);
  ac::enqueue(*st, c.id, "Instantiate");
  REQUIRE(drive(*st, c.id, fast(fleet)).status == "Instantiated");
  const size_t sent = fleet.clusters["p+c1"].log.size();
  fleet.clusters["p+c1"].not_ready_reads["b"] = 1;
  fleet.clusters["p+c2"].always_unreachable = true;

  request_read(*st, c.id);
  auto r = drive(*st, c.id, fast(fleet));
  CHECK(r.end == DriveEnd::drained);
  CHECK(r.status == "Instantiated");
  CHECK(queue_states(*st, c.id).back() == "Read:Done");
  CHECK(fleet.clusters["p+c1"].log.size() == sent);  // nothing applied or deleted
  CHECK(ac::resource_state(*st, c.id, "app1", "p+c1", "a+ConfigMap")->ready == "true");
  CHECK(ac::resource_state(*st, c.id, "app1", "p+c1", "b+ConfigMap")->ready == "false");
  std::map<std::string, std::string> conn;
  for (const auto& cs : ac::states(*st, c.id).clusters) conn[cs.cluster] = cs.connectivity;
  CHECK(conn == std::map<std::string, std::string>{{"p+c1", "Available"}, {"p+c2", "Retrying"}});

  // Not valid on a terminated context: skipped with the error state.
  request_terminate(*st, c.id);
  fleet.clusters["p+c2"].always_unreachable = false;
  REQUIRE(drive(*st, c.id, fast(fleet)).status == "Terminated");
  request_read(*st, c.id);
  CHECK(drive(*st, c.id, fast(fleet)).status == "InstantiateFailed");
  CHECK(queue_states(*st, c.id).back() == "Read:Skip");
}
