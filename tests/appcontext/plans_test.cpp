// Stored plans: an app planned as before is stored once, an update loads only
// what changed, and workspaces written before plans existed are converted.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>

#include "core/appcontext/appcontext.hpp"
#include "core/store/database.hpp"
#include "core/store/plan_codec.hpp"
#include "core/store/workspace.hpp"
#include "core/util/error.hpp"
#include "tests/test_store.hpp"

using namespace emco;
namespace ac = emco::appcontext;
namespace fs = std::filesystem;

namespace {

// A context of `apps` apps on `clusters` clusters; app `changed` (if any)
// gets a different manifest, and `skip_cluster` (if >= 0) is left out of it.
ac::AppContext fleet(const std::string& id, int apps, int clusters, int changed = -1, int skip_cluster = -1) {
  ac::AppContext ctx;
  ctx.id = id;
  ctx.owner = {"deploymentIntentGroup",
               resource::Key::parse("project=p/compositeApp=ca/compositeAppVersion=v1/deploymentIntentGroup=dig")};
  ctx.created = "2026-11-22T00:00:00.000Z";
  for (int a = 0; a < apps; ++a) {
    ac::App app;
    app.name = "app" + std::to_string(a);
    auto cm = ctx.intern("kind: ConfigMap\nmetadata:\n  name: " + app.name + (a == changed ? "-v2" : "") + "\n");
    auto crd = ctx.intern("kind: CustomResourceDefinition\nmetadata:\n  name: x\n");
    for (int c = 0; c < clusters; ++c) {
      if (a == changed && c == skip_cluster) continue;
      ac::Cluster cl;
      cl.name = "p+c" + std::to_string(c);
      cl.group = c + 1;
      cl.resources = {{"cm+ConfigMap", cm}};
      cl.hooks = {{"crd-install", {{"x+CustomResourceDefinition", crd}}}};
      app.clusters.push_back(cl);
    }
    ctx.apps.push_back(app);
  }
  return ctx;
}

int64_t count(store::Store& st, const std::string& table) {
  auto& s = st.database().statement("SELECT COUNT(*) FROM " + table);
  s.step();
  return s.int64(0);
}

// Same apps, clusters, groups, resources (names, order, content) and hooks.
void check_same(const ac::AppContext& a, const ac::AppContext& b) {
  REQUIRE(a.apps.size() == b.apps.size());
  for (size_t i = 0; i < a.apps.size(); ++i) {
    const auto& x = a.apps[i];
    const auto& y = b.apps[i];
    CHECK(x.name == y.name);
    REQUIRE(x.clusters.size() == y.clusters.size());
    for (size_t j = 0; j < x.clusters.size(); ++j) {
      const auto& p = x.clusters[j];
      const auto& q = y.clusters[j];
      CHECK(p.name == q.name);
      CHECK(p.group == q.group);
      REQUIRE(p.resources.size() == q.resources.size());
      for (size_t k = 0; k < p.resources.size(); ++k) {
        CHECK(p.resources[k].name == q.resources[k].name);
        CHECK(p.resources[k].text() == q.resources[k].text());
      }
      REQUIRE(p.hooks.size() == q.hooks.size());
      for (size_t k = 0; k < p.hooks.size(); ++k) {
        CHECK(p.hooks[k].event == q.hooks[k].event);
        REQUIRE(p.hooks[k].resources.size() == q.hooks[k].resources.size());
        for (size_t r = 0; r < p.hooks[k].resources.size(); ++r)
          CHECK(p.hooks[k].resources[r].text() == q.hooks[k].resources[r].text());
      }
    }
  }
}

std::string diff_text(const std::vector<ac::ClusterDiff>& diffs) {
  std::string out;
  for (const auto& d : diffs) {
    if (d.empty() && d.presence == ac::ClusterDiff::Presence::both) continue;
    out += d.app + "/" + d.cluster + ":" + std::to_string(static_cast<int>(d.presence));
    for (const auto& r : d.added) out += " +" + r;
    for (const auto& r : d.changed) out += " ~" + r;
    for (const auto& r : d.removed) out += " -" + r;
    out += "\n";
  }
  return out;
}

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/emco-plans-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
};

// Turns version 9's status table back into version 8's: a row per resource
// state beside the (app, cluster) rows.
const char* const k_back_to_version_8 = R"sql(
DROP TABLE ac_status;
CREATE TABLE ac_resource_status(
  ctx TEXT NOT NULL,
  app TEXT NOT NULL,
  cluster TEXT NOT NULL,
  resource TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'Pending',
  message TEXT NOT NULL DEFAULT '',
  time TEXT NOT NULL DEFAULT '',
  ready TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(ctx, app, cluster, resource)
) WITHOUT ROWID;
CREATE TABLE ac_cluster_status(
  ctx TEXT NOT NULL,
  app TEXT NOT NULL,
  cluster TEXT NOT NULL,
  connectivity TEXT NOT NULL DEFAULT 'Unknown',
  readback TEXT NOT NULL DEFAULT '',
  time TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(ctx, app, cluster)
);
)sql";

}  // namespace

TEST_CASE("an app planned as before is stored once", "[appcontext][plans]") {
  auto st = emco::test::open_test_store();
  ac::save(*st, fleet("1", 4, 20));
  CHECK(count(*st, "ac_plans") == 4);
  ac::save(*st, fleet("2", 4, 20, 2));
  CHECK(count(*st, "ac_plans") == 5);  // only app2's new plan
  check_same(ac::load(*st, "2"), fleet("2", 4, 20, 2));
  // Removing the first context drops its plan and content no one else uses.
  ac::remove(*st, "1");
  CHECK(count(*st, "ac_plans") == 4);
  CHECK(count(*st, "ac_contents") == 5);  // 4 ConfigMaps and the CRD
  ac::remove(*st, "2");
  CHECK(count(*st, "ac_plans") == 0);
  CHECK(count(*st, "ac_plan_contents") == 0);
  CHECK(count(*st, "ac_contents") == 0);
}

TEST_CASE("an update loads only the apps that changed, with the same diff as full loads", "[appcontext][plans]") {
  auto st = emco::test::open_test_store();
  ac::save(*st, fleet("1", 5, 30));
  ac::save(*st, fleet("2", 5, 30, 3, 7));
  auto pair = ac::load_changed(*st, "1", "2");
  REQUIRE(pair.old_ctx.apps.size() == 5);
  REQUIRE(pair.new_ctx.apps.size() == 5);
  for (int a = 0; a < 5; ++a) {
    CHECK(pair.old_ctx.apps[a].elided == (a != 3));
    CHECK(pair.new_ctx.apps[a].elided == (a != 3));
    CHECK(pair.new_ctx.apps[a].plan_digest.size() == 64);
  }
  CHECK(pair.new_ctx.apps[0].clusters.empty());
  CHECK(pair.new_ctx.apps[3].clusters.size() == 29);

  auto full = diff_text(ac::diff(ac::load(*st, "1"), ac::load(*st, "2")));
  auto fresh = diff_text(ac::diff(fleet("1", 5, 30), fleet("2", 5, 30, 3, 7)));  // never stored: no digests
  CHECK(diff_text(ac::diff(pair.old_ctx, pair.new_ctx)) == full);
  CHECK(full == fresh);
  CHECK(full.find("app3/p+c7:2 -cm+ConfigMap -x+CustomResourceDefinition\n") != std::string::npos);
  CHECK(full.find("app3/p+c0:0 ~cm+ConfigMap\n") != std::string::npos);

  // An elided app is stored by its plan digest: the same plans, no new rows.
  pair.new_ctx.id = "3";
  ac::save(*st, pair.new_ctx);
  CHECK(count(*st, "ac_plans") == 6);
  check_same(ac::load(*st, "3"), ac::load(*st, "2"));
  // Not without a stored plan to stand for it.
  pair.new_ctx.id = "4";
  pair.new_ctx.apps[0].plan_digest = std::string(64, '0');
  CHECK_THROWS_AS(ac::save(*st, pair.new_ctx), Error);
  CHECK_FALSE(ac::exists(*st, "4"));
}

TEST_CASE("departed clusters are those no app of the new context places", "[appcontext][plans]") {
  auto st = emco::test::open_test_store();
  ac::save(*st, fleet("1", 3, 10));
  ac::save(*st, fleet("2", 3, 10, 1, 4));  // app1 leaves c4, app0 and app2 keep it
  CHECK(ac::departed_clusters(*st, "1", "2").empty());
  auto one_app = fleet("3", 1, 10, 0, 4);
  ac::save(*st, one_app);  // app0 alone, without c4; app1 and app2 are gone
  CHECK(ac::departed_clusters(*st, "1", "3") == std::vector<std::string>{"p+c4"});
  CHECK(ac::departed_clusters(*st, "3", "1").empty());
  CHECK(ac::departed_clusters(*st, "1", "1").empty());
}

TEST_CASE("a damaged plan is reported, not misread", "[appcontext][plans]") {
  store::PlanWriter w;
  w.cluster("p+c1", 1);
  w.resource("", "cm+ConfigMap", "abc");
  std::string data = w.finish();
  store::PlanReader ok(data, "test");
  CHECK(ok.next() == store::PlanReader::Item::cluster);
  CHECK(ok.cluster_name() == "p+c1");
  CHECK(ok.next() == store::PlanReader::Item::resource);
  CHECK(ok.resource_name() == "cm+ConfigMap");
  CHECK(ok.hash() == "abc");
  CHECK(ok.next() == store::PlanReader::Item::end);

  for (size_t cut = 1; cut < data.size(); ++cut) {
    auto read_all = [&] {
      store::PlanReader rd(std::string_view(data).substr(0, cut), "app 'a' of appcontext '1'");
      while (rd.next() != store::PlanReader::Item::end) {
      }
    };
    CHECK_THROWS_WITH(read_all(), Catch::Contains("the stored plan of app 'a' of appcontext '1' is malformed"));
  }
  CHECK_THROWS_AS(store::PlanReader("EPL1R", "x").next(), Error);  // a resource before any cluster
  CHECK(store::PlanReader("EPL1E", "x").next() == store::PlanReader::Item::end);  // an app on no cluster
}

TEST_CASE("a version 3 workspace keeps its contexts when plans are introduced", "[appcontext][plans][sqlite]") {
  TempDir tmp;
  store::Workspace ws{tmp.path};
  fs::create_directories(ws.dir());
  auto expected = fleet("42", 3, 5, 1, 2);
  {
    // Store it, then turn the database back into version 3's shape: a row
    // per (app, cluster) and per resource.
    auto st = store::Store::open(ws);
    ac::save(*st, expected);
    auto& db = st->database();
    db.exec(k_back_to_version_8);
    db.exec(R"sql(
DROP TABLE ac_owed_children;
DROP TABLE cluster_checks;
DROP TABLE sync_jobs;
DROP INDEX ac_apps_plan;
ALTER TABLE ac_apps DROP COLUMN plan;
ALTER TABLE ac_apps DROP COLUMN inputs;
DROP TABLE ac_plan_contents;
DROP TABLE ac_plans;
CREATE TABLE ac_clusters(
  id INTEGER PRIMARY KEY,
  ctx TEXT NOT NULL REFERENCES ac_contexts(id) ON DELETE CASCADE,
  app TEXT NOT NULL,
  cluster TEXT NOT NULL,
  grp INTEGER NOT NULL,
  UNIQUE(ctx, app, cluster)
);
CREATE TABLE ac_resources(
  cluster_id INTEGER NOT NULL REFERENCES ac_clusters(id) ON DELETE CASCADE,
  ord INTEGER NOT NULL,
  hook TEXT NOT NULL,
  name TEXT NOT NULL,
  hash TEXT NOT NULL,
  PRIMARY KEY(cluster_id, ord)
);
CREATE INDEX ac_resources_hash ON ac_resources(hash);
)sql");
    db.set_schema_version(3);
    for (const auto& app : expected.apps)
      for (const auto& cl : app.clusters) {
        auto& c = db.statement("INSERT INTO ac_clusters(ctx, app, cluster, grp) VALUES(?,?,?,?) RETURNING id");
        c.bind(1, expected.id);
        c.bind(2, app.name);
        c.bind(3, cl.name);
        c.bind(4, cl.group);
        c.step();
        const int64_t cid = c.int64(0);
        c.reset();
        int ord = 0;
        auto put = [&](const std::string& hook, const ac::Resource& r) {
          auto& s = db.statement("INSERT INTO ac_resources(cluster_id, ord, hook, name, hash) VALUES(?,?,?,?,?)");
          s.bind(1, cid);
          s.bind(2, ord++);
          s.bind(3, hook);
          s.bind(4, r.name);
          s.bind(5, r.hash());
          s.exec();
        };
        for (const auto& r : cl.resources) put("", r);
        for (const auto& g : cl.hooks)
          for (const auto& r : g.resources) put(g.event, r);
      }
  }
  auto st = store::Store::open(ws);
  CHECK(st->database().schema_version() == store::Store::schema_version());
  check_same(ac::load(*st, "42"), expected);
  CHECK(count(*st, "ac_plans") == 3);
  // Version 3's tables are gone.
  CHECK_THROWS_AS(count(*st, "ac_clusters"), store::DatabaseError);
  CHECK_THROWS_AS(count(*st, "ac_resources"), store::DatabaseError);
  // A later context that plans the apps the same way shares the converted plans.
  ac::save(*st, fleet("43", 3, 5, 1, 2));
  CHECK(count(*st, "ac_plans") == 3);
}

TEST_CASE("a version 7 workspace opens with nothing owed by its contexts, then owing, noting and settling children",
          "[appcontext][children][sqlite]") {
  TempDir tmp;
  store::Workspace ws{tmp.path};
  fs::create_directories(ws.dir());
  auto parent = fleet("7", 1, 1);
  {
    auto st = store::Store::open(ws);
    ac::save(*st, parent);
    ac::set_status(*st, "7", ac::status::instantiated);
    st->database().exec(k_back_to_version_8);
    st->database().exec("DROP TABLE ac_owed_children;");
    st->database().set_schema_version(7);
  }
  auto st = store::Store::open(ws);
  CHECK(st->database().schema_version() == store::Store::schema_version());
  CHECK_FALSE(ac::owed_children(*st, "7"));
  CHECK(ac::owed_children_with_status(*st, ac::status::instantiated).empty());

  auto next = fleet("8", 1, 1);
  ac::save(*st, next);
  ac::owe_children(*st, "8", {"7"});
  ac::note_children_error(*st, "8", "child contexts (sds): no address");
  auto owed = ac::owed_children(*st, "8");
  REQUIRE(owed);
  CHECK(owed->replaced == std::vector<std::string>{"7"});
  CHECK(owed->error == "child contexts (sds): no address");
  CHECK(ac::owed_children_with_status(*st, ac::status::instantiated).empty());  // "8" is not delivered
  ac::set_status(*st, "8", ac::status::instantiated);
  REQUIRE(ac::owed_children_with_status(*st, ac::status::instantiated).size() == 1);
  // Owing again (a new operation) clears the error.
  ac::owe_children(*st, "8", {});
  CHECK(ac::owed_children(*st, "8")->error.empty());
  CHECK(ac::settle_children(*st, "8"));
  CHECK_FALSE(ac::settle_children(*st, "8"));  // settled once
  ac::note_children_error(*st, "8", "late");     // nothing to note on
  CHECK_FALSE(ac::owed_children(*st, "8"));
  // The record goes with its context.
  ac::owe_children(*st, "8", {});
  ac::remove(*st, "8");
  CHECK_FALSE(ac::owed_children(*st, "8"));
}

TEST_CASE("a version 8 workspace keeps its resource and cluster states in one row per cluster",
          "[appcontext][status][sqlite]") {
  TempDir tmp;
  store::Workspace ws{tmp.path};
  fs::create_directories(ws.dir());
  {
    auto st = store::Store::open(ws);
    ac::save(*st, fleet("8", 2, 3));
    st->database().exec(k_back_to_version_8);
    st->database().exec(R"sql(
INSERT INTO ac_resource_status VALUES('8', 'app0', 'p+c0', 'x+Deployment', 'Applied', 'ok', 't1', 'true');
INSERT INTO ac_resource_status VALUES('8', 'app0', 'p+c0', 'a+ConfigMap', 'Failed', 'boom', 't2', '');
INSERT INTO ac_resource_status VALUES('8', 'app0', 'p+c1', 'a+ConfigMap', 'Committed', 'commit 1', 't3', '');
INSERT INTO ac_resource_status VALUES('8', 'app1', 'p+c0', 'a+ConfigMap', 'Committed', 'commit 1', 't3', '');
INSERT INTO ac_resource_status VALUES('9', 'app0', 'p+c0', 'a+ConfigMap', 'Deleted', '', 't4', '');
INSERT INTO ac_cluster_status VALUES('8', 'app0', 'p+c0', 'Available', '{"a":1}', 't0');
INSERT INTO ac_cluster_status VALUES('8', 'app1', 'p+c2', 'Retrying', '', 't5');
)sql");
    st->database().set_schema_version(8);
  }
  auto st = store::Store::open(ws);
  CHECK(st->database().schema_version() == store::Store::schema_version());
  CHECK_THROWS_AS(count(*st, "ac_resource_status"), store::DatabaseError);
  CHECK_THROWS_AS(count(*st, "ac_cluster_status"), store::DatabaseError);
  auto states = ac::resource_states(*st, "8");
  REQUIRE(states.size() == 4);
  auto same = [](const ac::ResourceState& s, const std::vector<std::string>& want) {
    return std::vector<std::string>{s.app, s.cluster, s.resource, s.status, s.message, s.time, s.ready} == want;
  };
  CHECK(same(states[0], {"app0", "p+c0", "a+ConfigMap", "Failed", "boom", "t2", ""}));
  CHECK(same(states[1], {"app0", "p+c0", "x+Deployment", "Applied", "ok", "t1", "true"}));
  CHECK(same(states[2], {"app0", "p+c1", "a+ConfigMap", "Committed", "commit 1", "t3", ""}));
  CHECK(same(states[3], {"app1", "p+c0", "a+ConfigMap", "Committed", "commit 1", "t3", ""}));
  CHECK(ac::resource_states(*st, "9").size() == 1);  // every row converts, as stored
  auto clusters = ac::states(*st, "8").clusters;
  REQUIRE(clusters.size() == 2);  // only the clusters whose connectivity was recorded
  CHECK(clusters[0].app == "app0");
  CHECK(clusters[0].connectivity == "Available");
  CHECK(clusters[0].readback == "{\"a\":1}");
  CHECK(clusters[0].time == "t0");
  CHECK(clusters[1].cluster == "p+c2");
  CHECK(clusters[1].connectivity == "Retrying");
  // Writes from here on merge with the converted rows.
  ac::set_resource_ready(*st, "8", "app0", "p+c0", "a+ConfigMap", "false");
  CHECK(ac::resource_state(*st, "8", "app0", "p+c0", "a+ConfigMap")->ready == "false");
  CHECK(ac::resource_state(*st, "8", "app0", "p+c0", "a+ConfigMap")->message == "boom");
  CHECK(ac::states(*st, "8").clusters[0].readback == "{\"a\":1}");
}
