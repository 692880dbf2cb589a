// Status queries (spec/status.md) over a DIG delivered to fake clusters.

#include <catch2/catch.hpp>

#include "core/status/status.hpp"
#include "world.hpp"

using namespace emco;
using namespace emco::testing;

namespace {

struct Deployed : World {
  lifecycle::OperationResult inst;
  Deployed() {
    plan = {{"app1", {{"p+c1", {"a", "b"}}, {"p+c2", {"a"}}}}, {"app2", {{"p+c1", {"x"}}}}};
    op(lc, "instantiate");
    op(dig, "approve");
    inst = op(dig, "instantiate");
  }
  json query(const std::string& qs) { return status::dig_status(*st, dig, status::parse_query(qs), fleet.factory()); }
};

}  // namespace

TEST_CASE("status before instantiation has only the history", "[status]") {
  World w;
  auto s = status::dig_status(*w.st, w.dig, status::parse_query(""));
  CHECK(s["name"] == "dig");
  CHECK(s["states"]["actions"].size() == 1);
  CHECK_FALSE(s.contains("status"));
  CHECK_FALSE(s.contains("apps"));
}

TEST_CASE("deployed status with new and deprecated field names", "[status]") {
  Deployed d;
  auto s = d.query("status=deployed");
  CHECK(s["deployedStatus"] == "Instantiated");
  CHECK(s["deployedCounts"] == json{{"Applied", 4}});
  CHECK(s["compositeProfile"] == "prof");
  CHECK(s["states"]["statusctxid"] == d.inst.context);
  REQUIRE(s["apps"].size() == 2);
  auto c1 = s["apps"][0]["clusters"][0];
  CHECK(c1["clusterProvider"] == "p");
  CHECK(c1["cluster"] == "c1");
  CHECK(c1["connectivity"] == "Available");
  CHECK(c1["resources"][0]["deployedStatus"] == "Applied");
  CHECK(c1["resources"][0]["GVK"]["Kind"] == "ConfigMap");
  CHECK_FALSE(s.contains("readyCounts"));

  auto old = d.query("");  // upstream default: type=rsync with the old names
  CHECK(old["status"] == "Instantiated");
  CHECK(old["rsyncStatus"] == json{{"Applied", 4}});
  CHECK(old["apps"][0]["clusters"][0]["readyStatus"] == "Available");
  CHECK(old["apps"][0]["clusters"][0]["resources"][0]["rsyncStatus"] == "Applied");
  CHECK_FALSE(old.contains("deployedStatus"));

  auto summary = d.query("status=deployed&output=summary");
  CHECK_FALSE(summary.contains("apps"));
  CHECK(summary["deployedCounts"] == json{{"Applied", 4}});
}

TEST_CASE("ready reads the live objects", "[status]") {
  Deployed d;
  d.fleet.clusters["p+c1"].objects.erase("b");       // deleted behind emco's back
  d.fleet.clusters["p+c2"].not_ready_reads["a"] = 1;  // not ready at the first read
  auto s = d.query("status=ready");
  CHECK(s["readyCounts"] == json{{"NotPresent", 1}, {"NotReady", 1}, {"Ready", 2}});
  CHECK(s["readyStatus"] == "NotReady");
  auto again = d.query("status=ready&app=app2");
  CHECK(again["readyStatus"] == "Ready");
  auto deprecated = d.query("type=cluster&app=app2");
  CHECK(deprecated["clusterStatus"] == json{{"Ready", 1}});
  CHECK(deprecated["apps"][0]["clusters"][0]["resources"][0]["clusterStatus"] == "Ready");
}

TEST_CASE("filters and list variants", "[status]") {
  Deployed d;
  auto s = d.query("status=deployed&cluster=p%2Bc2");
  REQUIRE(s["apps"].size() == 1);  // app2 has nothing on c2
  CHECK(s["deployedCounts"] == json{{"Applied", 1}});
  s = d.query("status=deployed&resource=b");
  CHECK(s["deployedCounts"] == json{{"Applied", 1}});
  CHECK(d.query("apps")["apps"] == json{"app1", "app2"});
  auto clusters = d.query("clusters&app=app1");
  CHECK(clusters["clustersByApp"].size() == 1);
  CHECK(clusters["clustersByApp"][0]["clusters"].size() == 2);
  auto res = d.query("resources&cluster=p+c1");
  CHECK(res["resourcesByApp"].size() == 2);
  CHECK(res["resourcesByApp"][0]["resources"].size() == 2);
  CHECK_THROWS_WITH(d.query("app=nope"), Catch::Contains("app 'nope'"));
  CHECK_THROWS_WITH(d.query("cluster=c1"), Catch::Contains("invalid cluster 'c1'"));
  CHECK_THROWS_WITH(d.query("status=bogus"), Catch::Contains("invalid status"));
  CHECK_THROWS_WITH(d.query("instance="), Catch::Contains("must not be empty"));
  CHECK_THROWS_WITH(d.query("colour=red"), Catch::Contains("unknown status parameter"));
}

TEST_CASE("instance selects an earlier revision, counts follow updates", "[status]") {
  Deployed d;
  d.plan = {{"app1", {{"p+c1", {"a"}}}}};
  auto u = d.op(d.dig, "update");
  REQUIRE(u.delivery == lifecycle::Delivery::done);
  auto now = d.query("status=deployed");
  CHECK(now["deployedCounts"] == json{{"Applied", 1}});
  CHECK(now["states"]["statusctxid"] == d.inst.context);
  auto before = d.query("status=deployed&instance=" + d.inst.context);
  // The old context's resources: b, a on c2 and x were deleted by the update.
  CHECK(before["deployedCounts"] == json{{"Applied", 1}, {"Deleted", 3}});
  CHECK(before["deployedStatus"] == "Updated");
  CHECK_THROWS_WITH(d.query("instance=42"), Catch::Contains("no instance '42'"));
}

TEST_CASE("the workspace summary lists DIGs, clouds and queued work", "[status]") {
  Deployed d;
  auto s = status::workspace_status(*d.st);
  REQUIRE(s["resources"].size() == 2);
  CHECK(s["resources"][0]["kind"] == "logical cloud");
  auto dig = s["resources"][1];
  CHECK(dig["state"] == "Instantiated");
  CHECK(dig["revision"] == 1);
  CHECK(dig["deployedStatus"] == "Instantiated");
  CHECK(dig["deployedCounts"] == json{{"Applied", 4}});
  CHECK(s["queued"].empty());
}
