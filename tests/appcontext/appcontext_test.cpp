#include <catch2/catch.hpp>

#include <optional>
#include <sstream>
#include <tuple>

#include "core/appcontext/appcontext.hpp"
#include "core/store/archive.hpp"
#include "core/store/database.hpp"
#include "core/store/status_codec.hpp"
#include "core/store/vault.hpp"
#include "core/util/sha256.hpp"
#include "core/util/error.hpp"
#include "tests/test_store.hpp"

using namespace emco;
namespace ac = emco::appcontext;

namespace {

int64_t count(store::Store& st, const std::string& table) {
  auto& s = st.database().statement("SELECT COUNT(*) FROM " + table);
  s.step();
  return s.int64(0);
}

ac::AppContext sample(const std::string& id, int clusters) {
  ac::AppContext ctx;
  ctx.id = id;
  ctx.owner = {"deploymentIntentGroup", resource::Key::parse("project=p/compositeApp=ca/compositeAppVersion=v1/deploymentIntentGroup=dig")};
  ctx.meta = {{"Project", "p"}, {"Release", "r1"}, {"Namespace", "default"}};
  ctx.created = "2026-11-22T00:00:00.000Z";
  ctx.revision = 1;
  ac::App a;
  a.name = "collectd";
  a.dependencies.push_back({"other", "Ready", 5});
  auto svc = ctx.intern("kind: Service\nmetadata:\n  name: s\n");
  auto dep = ctx.intern("kind: Deployment\nmetadata:\n  name: d\n");
  auto crd = ctx.intern("kind: CustomResourceDefinition\nmetadata:\n  name: x\n");
  for (int i = 0; i < clusters; ++i) {
    ac::Cluster c;
    c.name = "p+c" + std::to_string(i);
    c.group = i + 1;
    c.resources = {{"s+Service", svc}, {"d+Deployment", dep}};
    c.hooks = {{"crd-install", {{"x+CustomResourceDefinition", crd}}}};
    a.clusters.push_back(c);
  }
  ctx.apps.push_back(a);
  ac::App b;
  b.name = "other";
  ctx.apps.push_back(b);
  return ctx;
}

}  // namespace

TEST_CASE("content is hashed and interned", "[appcontext]") {
  CHECK(emco::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  ac::AppContext ctx;
  auto a = ctx.intern("x");
  auto b = ctx.intern(std::string("x"));
  CHECK(a.get() == b.get());
  CHECK(ctx.intern("y").get() != a.get());
  CHECK(ac::make_content("x")->hash == a->hash);
}

TEST_CASE("save and load round-trip with content stored once", "[appcontext]") {
  auto st = emco::test::open_test_store();
  auto ctx = sample("100", 3);
  ac::save(*st, ctx);
  CHECK(ac::exists(*st, "100"));
  auto n = count(*st, "ac_contents");
  CHECK(n == 3);
  auto back = ac::load(*st, "100");
  CHECK(back.id == "100");
  CHECK(back.owner.kind == "deploymentIntentGroup");
  CHECK(back.owner.key == ctx.owner.key);
  CHECK(back.meta == ctx.meta);
  CHECK(back.revision == 1);
  CHECK(back.status == ac::status::created);
  REQUIRE(back.apps.size() == 2);
  CHECK(back.apps[0].name == "collectd");
  CHECK(back.apps[1].name == "other");
  CHECK(back.apps[1].clusters.empty());
  REQUIRE(back.apps[0].dependencies.size() == 1);
  CHECK(back.apps[0].dependencies[0].app == "other");
  CHECK(back.apps[0].dependencies[0].wait == 5);
  REQUIRE(back.apps[0].clusters.size() == 3);
  const auto& c = back.apps[0].clusters[2];
  CHECK(c.name == "p+c2");
  CHECK(c.group == 3);
  REQUIRE(c.resources.size() == 2);
  CHECK(c.resources[0].name == "s+Service");
  CHECK(c.resources[1].text() == "kind: Deployment\nmetadata:\n  name: d\n");
  REQUIRE(c.hooks.size() == 1);
  CHECK(c.hooks[0].event == "crd-install");
  CHECK(c.hooks[0].resources[0].name == "x+CustomResourceDefinition");
  // Loaded content is shared between clusters, too.
  CHECK(back.apps[0].clusters[0].resources[0].content.get() == c.resources[0].content.get());
  CHECK(back.resource_count() == 9);
  auto found = ac::load_if_exists(*st, "100");
  REQUIRE(found);
  CHECK(found->owner.key == ctx.owner.key);
  CHECK(found->meta == ctx.meta);
  CHECK(found->resource_count() == 9);
  CHECK_THROWS_AS(ac::save(*st, ctx), Error);
  CHECK(ac::list(*st, ctx.owner.key) == std::vector<std::string>{"100"});
}

TEST_CASE("Secret objects are sealed at rest in an encrypted workspace, and status reads without the key", "[appcontext][vault]") {
  auto st = emco::test::open_test_store();
  const store::VaultKey k = store::generate_key();
  st->use_key(k);
  st->write([&] { st->set_meta("vault.key", k.id); });
  auto ctx = sample("300", 1);
  const std::string secret = "kind: Secret\nmetadata:\n  name: tls\ndata:\n  tls.key: UFJJVkFURQ==\n";
  ctx.apps[0].clusters[0].resources.push_back({"tls+Secret", ctx.intern(secret)});
  ac::save(*st, ctx);
  const std::string hash = ctx.apps[0].clusters[0].resources.back().hash();
  auto raw = [&](const std::string& h) {
    auto& s = st->database().statement("SELECT data FROM ac_contents WHERE hash = ?");
    s.bind(1, h);
    REQUIRE(s.step());
    std::string out(s.blob(0));
    s.reset();
    return out;
  };
  CHECK(raw(hash).rfind("emco-sealed:1:" + k.id, 0) == 0);
  CHECK(raw(ctx.apps[0].clusters[0].resources[0].hash()).rfind("kind: Service", 0) == 0);  // others as they are
  CHECK(ac::load(*st, "300").apps[0].clusters[0].resources.back().text() == secret);

  // Another key: status-style loads keep the sealed text, others fail naming it.
  st->use_key(store::generate_key());
  CHECK(store::is_sealed(ac::load(*st, "300", ac::Sealed::keep).apps[0].clusters[0].resources.back().text()));
  CHECK_THROWS_WITH(ac::load(*st, "300"), Catch::Contains("a Secret of AppContext 300"));

  // rotate-key re-seals it (with the current key set), and export keeps it sealed.
  st->use_key(k);
  const store::VaultKey k2 = store::generate_key();
  CHECK(store::rotate_key(*st, k2) == 1);
  CHECK(store::sealed_key_id(raw(hash)) == k2.id);
  CHECK(ac::load(*st, "300").apps[0].clusters[0].resources.back().text() == secret);
  std::ostringstream archive;
  store::export_workspace(*st, archive, {});
  CHECK(archive.str().find("UFJJVkFURQ") == std::string::npos);
}

TEST_CASE("rotate-key encrypts a workspace that was not, Secret objects included", "[appcontext][vault]") {
  auto st = emco::test::open_test_store();
  auto ctx = sample("301", 1);
  ctx.apps[0].clusters[0].resources.push_back({"tls+Secret", ctx.intern("kind: Secret\ndata: {k: UFJJVkFURQ==}\n")});
  ac::save(*st, ctx);
  CHECK(store::unsealed_secrets(*st) == 1);
  std::ostringstream refused;
  CHECK_THROWS_WITH(store::export_workspace(*st, refused, {}), Catch::Contains("not encrypted"));
  const store::VaultKey k = store::generate_key();
  CHECK(store::rotate_key(*st, k) == 1);
  CHECK(st->encrypted());
  CHECK(store::unsealed_secrets(*st) == 0);
  CHECK(ac::load(*st, "301").apps[0].clusters[0].resources.back().text() == "kind: Secret\ndata: {k: UFJJVkFURQ==}\n");
}

TEST_CASE("missing context is not found", "[appcontext]") {
  auto st = emco::test::open_test_store();
  CHECK_FALSE(ac::exists(*st, "42"));
  CHECK_FALSE(ac::find_header(*st, "42"));
  CHECK_FALSE(ac::load_if_exists(*st, "42"));
  try {
    ac::load(*st, "42");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::not_found);
    CHECK(e.message() == "appcontext '42' not found");
  }
}

TEST_CASE("children are removed first and unused content is dropped", "[appcontext]") {
  auto st = emco::test::open_test_store();
  ac::save(*st, sample("1", 2));
  auto child = sample("2", 1);
  child.parent = "1";
  child.apps[0].clusters[0].resources[0].content = child.intern("kind: Service\nmetadata:\n  name: other\n");
  ac::save(*st, child);
  CHECK(ac::header(*st, "1").children == std::vector<std::string>{"2"});
  ac::enqueue(*st, "2", ac::event::instantiate);
  ac::set_resource_status(*st, "2", "collectd", "p+c0", "s+Service", ac::resource_status::applied, "", "t");
  CHECK(count(*st, "ac_contents") == 4);
  ac::remove(*st, "1");
  CHECK_FALSE(ac::exists(*st, "1"));
  CHECK_FALSE(ac::exists(*st, "2"));
  CHECK(count(*st, "ac_contents") == 0);
  CHECK(count(*st, "ac_status") == 0);
  CHECK(ac::active_contexts(*st).empty());
  CHECK_THROWS_AS(ac::remove(*st, "1"), Error);
}

TEST_CASE("removing a child updates the parent's list", "[appcontext]") {
  auto st = emco::test::open_test_store();
  ac::save(*st, sample("1", 1));
  auto child = sample("2", 1);
  child.parent = "1";
  ac::save(*st, child);
  ac::remove(*st, "2");
  CHECK(ac::header(*st, "1").children.empty());
  CHECK(count(*st, "ac_contents") == 3);
}

TEST_CASE("header setters", "[appcontext]") {
  auto st = emco::test::open_test_store();
  ac::save(*st, sample("7", 1));
  ac::set_status(*st, "7", ac::status::instantiating);
  ac::set_desired(*st, "7", ac::status::instantiated);
  ac::set_stop(*st, "7", true);
  ac::set_pending_terminate(*st, "7", true);
  ac::set_meta(*st, "7", "LogicalCloud", "lc1");
  auto h = ac::header(*st, "7");
  CHECK(h.status == "Instantiating");
  CHECK(h.desired == "Instantiated");
  CHECK(h.stop);
  CHECK(h.pending_terminate);
  CHECK(h.meta.at("LogicalCloud") == "lc1");
  CHECK(h.meta.at("Project") == "p");
  CHECK_THROWS_AS(ac::set_status(*st, "8", "x"), Error);
}

TEST_CASE("one meta field reads as the header's meta has it", "[appcontext]") {
  auto st = emco::test::open_test_store();
  ac::save(*st, sample("7", 1));
  ac::set_meta(*st, "7", "hooks", R"([{"operation":"instantiate"}])");
  ac::set_meta(*st, "7", "empty", "");
  for (const auto& [name, value] : ac::header(*st, "7").meta) CHECK(ac::meta_field(*st, "7", name) == value);
  CHECK(ac::meta_field(*st, "7", "hooks") == R"([{"operation":"instantiate"}])");
  CHECK(ac::meta_field(*st, "7", "empty") == "");
  CHECK(ac::meta_field(*st, "7", "rollout") == std::nullopt);
  // find_meta_field: the same, and nullopt instead of Error(not_found) for a context that is not stored.
  CHECK(ac::find_meta_field(*st, "7", "hooks") == R"([{"operation":"instantiate"}])");
  CHECK(ac::find_meta_field(*st, "7", "rollout") == std::nullopt);
  CHECK(ac::find_meta_field(*st, "no-such-context", "hooks") == std::nullopt);
  CHECK_THROWS_AS(ac::meta_field(*st, "no-such-context", "hooks"), Error);
  // Values that are not strings read as their JSON text, as in the header's map.
  auto& u = st->database().statement("UPDATE ac_contexts SET meta = ? WHERE id = ?");
  u.bind(1, std::string(R"({"n":3,"o":{"a":[1,"x"]},"s":"t\"q","z":null})"));
  u.bind(2, std::string("7"));
  u.exec();
  const auto meta = ac::header(*st, "7").meta;
  CHECK(meta.size() == 4);
  for (const auto& [name, value] : meta) CHECK(ac::meta_field(*st, "7", name) == value);
  CHECK(ac::meta_field(*st, "7", "n") == "3");
  CHECK(ac::meta_field(*st, "7", "o") == R"({"a":[1,"x"]})");
  CHECK(ac::meta_field(*st, "7", "s") == "t\"q");
  CHECK(ac::meta_field(*st, "7", "z") == "null");
  CHECK(ac::meta_field(*st, "7", "a") == std::nullopt);  // a key below the top level is not a field
  // A duplicate name reads as its last value; a meta that is not an object
  // or not JSON fails as the header's does.
  auto set_meta_text = [&](const std::string& text) {
    auto& w = st->database().statement("UPDATE ac_contexts SET meta = ? WHERE id = ?");
    w.bind(1, text);
    w.bind(2, std::string("7"));
    w.exec();
  };
  set_meta_text(R"({"d":"1","e":"x","d":"2"})");
  CHECK(ac::meta_field(*st, "7", "d") == "2");
  CHECK(ac::header(*st, "7").meta.at("d") == "2");
  for (const std::string text : {R"({"d":"1")", R"({"d":"1"} x)", R"(["d"])", "7", "", "null"}) {
    INFO(text);
    set_meta_text(text);
    std::string header_error, field_error;
    std::optional<std::string> field = "unset";
    try {
      (void)ac::header(*st, "7");
    } catch (const std::exception& e) {
      header_error = e.what();
    }
    try {
      field = ac::meta_field(*st, "7", "d");
    } catch (const std::exception& e) {
      field_error = e.what();
    }
    CHECK(field_error == header_error);
    if (header_error.empty()) CHECK(field == std::nullopt);
  }
  try {
    ac::meta_field(*st, "8", "hooks");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::not_found);
    CHECK(e.message() == "appcontext '8' not found");
  }
}

TEST_CASE("resource and cluster states", "[appcontext]") {
  auto st = emco::test::open_test_store();
  ac::save(*st, sample("7", 1));
  CHECK_FALSE(ac::resource_state(*st, "7", "collectd", "p+c0", "s+Service"));
  ac::set_resource_status(*st, "7", "collectd", "p+c0", "s+Service", ac::resource_status::failed, "boom", "t1");
  ac::set_resource_ready(*st, "7", "collectd", "p+c0", "s+Service", "false");
  ac::set_resource_status(*st, "7", "collectd", "p+c0", "s+Service", ac::resource_status::applied, "", "t2");
  ac::set_resource_ready(*st, "7", "collectd", "p+c0", "d+Deployment", "true");
  auto all = ac::resource_states(*st, "7");
  REQUIRE(all.size() == 2);
  CHECK(all[0].resource == "d+Deployment");
  CHECK(all[0].status == "Pending");
  CHECK(all[0].ready == "true");
  CHECK(all[1].status == "Applied");
  CHECK(all[1].message.empty());
  CHECK(all[1].time == "t2");
  CHECK(all[1].ready == "false");
  // states(): the same resource states, and no cluster before a
  // connectivity or read-back is recorded.
  auto both = ac::states(*st, "7");
  REQUIRE(both.resources.size() == 2);
  CHECK(both.resources[1].resource == all[1].resource);
  CHECK(both.resources[1].status == "Applied");
  CHECK(both.clusters.empty());
  ac::set_cluster_state(*st, "7", "collectd", "p+c0", ac::connectivity::retrying, "t1");
  ac::set_cluster_readback(*st, "7", "collectd", "p+c0", "{}", "t3");
  ac::set_cluster_readback(*st, "7", "collectd", "p+c1", "{\"b\":2}", "t4");  // a cluster without resource states
  both = ac::states(*st, "7");
  CHECK(both.resources.size() == 2);
  auto& cs = both.clusters;
  REQUIRE(cs.size() == 2);
  CHECK(cs[0].connectivity == "Retrying");
  CHECK(cs[0].readback == "{}");
  CHECK(cs[0].time == "t3");
  CHECK(cs[1].cluster == "p+c1");
  CHECK(cs[1].connectivity == "Unknown");
  CHECK(cs[1].readback == "{\"b\":2}");
  ac::clear_states(*st, "7");
  CHECK(ac::resource_states(*st, "7").empty());
  CHECK(ac::states(*st, "7").clusters.empty());
}

TEST_CASE("event queue and active set", "[appcontext]") {
  auto st = emco::test::open_test_store();
  ac::save(*st, sample("7", 1));
  ac::save(*st, sample("8", 1));
  CHECK_FALSE(ac::next_pending(*st, "7"));
  CHECK_FALSE(ac::has_pending(*st, "7"));
  CHECK_FALSE(ac::any_active(*st));
  CHECK(ac::enqueue(*st, "8", ac::event::update, "7") == 1);
  CHECK(ac::enqueue(*st, "7", ac::event::instantiate) == 1);
  CHECK(ac::enqueue(*st, "7", ac::event::terminate) == 2);
  CHECK(ac::active_contexts(*st) == std::vector<std::string>{"7", "8"});
  CHECK(ac::any_active(*st));
  CHECK(ac::has_pending(*st, "7"));
  auto e = ac::next_pending(*st, "7");
  REQUIRE(e);
  CHECK(e->event == "Instantiate");
  ac::mark(*st, "7", e->seq, ac::queue_status::done);
  e = ac::next_pending(*st, "7");
  REQUIRE(e);
  CHECK(e->seq == 2);
  ac::mark(*st, "7", 2, ac::queue_status::error, "cluster unreachable");
  CHECK_FALSE(ac::next_pending(*st, "7"));
  CHECK_FALSE(ac::has_pending(*st, "7"));
  CHECK(ac::has_pending(*st, "8"));
  auto q = ac::queue(*st, "7");
  REQUIRE(q.size() == 2);
  CHECK(q[1].status == "Error");
  CHECK(q[1].message == "cluster unreachable");
  CHECK(ac::queue(*st, "8")[0].ucid == "7");
  ac::deactivate(*st, "7");
  CHECK(ac::active_contexts(*st) == std::vector<std::string>{"8"});
  ac::deactivate(*st, "8");
  CHECK_FALSE(ac::any_active(*st));
  CHECK_THROWS_AS(ac::mark(*st, "7", 9, "Done"), Error);
  CHECK_THROWS_AS(ac::enqueue(*st, "9", "Instantiate"), Error);
}

TEST_CASE("diff classifies resources per app and cluster", "[appcontext]") {
  auto old_ctx = sample("1", 2);
  auto new_ctx = sample("2", 3);
  auto& c0 = new_ctx.apps[0].clusters[0];
  c0.resources[1].content = new_ctx.intern("kind: Deployment\nmetadata:\n  name: d\n  labels: {a: b}\n");
  c0.resources.erase(c0.resources.begin());
  c0.put({"cm+ConfigMap", new_ctx.intern("kind: ConfigMap\n")});
  new_ctx.apps.pop_back();  // "other" removed
  auto d = ac::diff(old_ctx, new_ctx);
  REQUIRE(d.size() == 3);  // collectd x 3 clusters; "other" had no clusters
  CHECK(d[0].cluster == "p+c0");
  CHECK(d[0].presence == ac::ClusterDiff::Presence::both);
  CHECK(d[0].changed == std::vector<std::string>{"d+Deployment"});
  CHECK(d[0].added == std::vector<std::string>{"cm+ConfigMap"});
  CHECK(d[0].removed == std::vector<std::string>{"s+Service"});
  CHECK(d[0].unchanged == std::vector<std::string>{"x+CustomResourceDefinition"});
  CHECK(d[0].old_cluster == &old_ctx.apps[0].clusters[0]);
  CHECK(d[0].new_cluster == &c0);
  CHECK(d[1].empty());
  CHECK(d[2].presence == ac::ClusterDiff::Presence::added);
  CHECK(d[2].added.size() == 3);
  CHECK(d[2].old_cluster == nullptr);
  CHECK(d[2].new_cluster == &new_ctx.apps[0].clusters[2]);
  auto back = ac::diff(new_ctx, old_ctx);
  CHECK(back[2].presence == ac::ClusterDiff::Presence::removed);
  CHECK(back[2].removed.size() == 3);
  CHECK(back[2].new_cluster == nullptr);
}

TEST_CASE("put replaces a duplicate key in place", "[appcontext]") {
  ac::AppContext ctx;
  ac::Cluster c;
  c.put({"a+X", ctx.intern("1")});
  c.put({"b+X", ctx.intern("2")});
  c.put({"a+X", ctx.intern("3")});
  REQUIRE(c.resources.size() == 2);
  CHECK(c.resources[0].text() == "3");
  CHECK(c.find("b+X")->text() == "2");
  CHECK(c.find("zz") == nullptr);
}

TEST_CASE("a batch of status changes rewrites each cluster's row once, later changes winning", "[appcontext][status]") {
  auto st = emco::test::open_test_store();
  ac::save(*st, sample("7", 1));
  // 40 clusters: more than one read statement's worth (32), the last short.
  std::vector<std::string> clusters;
  for (int i = 0; i < 40; ++i) clusters.push_back("p+c" + std::to_string(100 + i));
  ac::set_resource_ready(*st, "7", "collectd", clusters[3], "z+Service", "true");  // an existing row to merge with
  std::vector<ac::StatusChange> changes;
  auto add = [&](ac::StatusChange::What what, const std::string& cluster, std::string_view resource,
                 std::string_view value, std::string_view message, std::string_view time) {
    ac::StatusChange& c = changes.emplace_back();
    c.what = what;
    c.app = "collectd";
    c.cluster = cluster;
    c.resource = resource;
    c.value = value;
    c.message = message;
    c.time = time;
  };
  using W = ac::StatusChange::What;
  for (const auto& c : clusters) {
    add(W::status, c, "b+Deployment", ac::resource_status::applied, "commit 1", "t1");
    add(W::status, c, "a+ConfigMap", ac::resource_status::applied, "commit 1", "t1");
  }
  for (size_t i = 0; i < clusters.size(); i += 2) add(W::connectivity, clusters[i], "", ac::connectivity::available, "", "t0");
  add(W::status, clusters[5], "a+ConfigMap", ac::resource_status::failed, "boom", "t2");  // later: wins
  add(W::ready, clusters[5], "a+ConfigMap", "false", "", "");
  st->write([&] { ac::put_status_changes(*st, "7", changes); });

  auto all = ac::resource_states(*st, "7");
  REQUIRE(all.size() == 81);
  for (size_t i = 0; i + 1 < all.size(); ++i)  // ordered by cluster, then resource
    CHECK(std::tie(all[i].cluster, all[i].resource) < std::tie(all[i + 1].cluster, all[i + 1].resource));
  auto c3 = ac::resource_state(*st, "7", "collectd", clusters[3], "z+Service");
  REQUIRE(c3);
  CHECK(c3->status == "Pending");
  CHECK(c3->ready == "true");
  CHECK(ac::resource_state(*st, "7", "collectd", clusters[3], "b+Deployment")->message == "commit 1");
  auto c5 = ac::resource_state(*st, "7", "collectd", clusters[5], "a+ConfigMap");
  REQUIRE(c5);
  CHECK(c5->status == "Failed");
  CHECK(c5->message == "boom");
  CHECK(c5->time == "t2");
  CHECK(c5->ready == "false");
  auto conn = ac::states(*st, "7").clusters;
  REQUIRE(conn.size() == 20);  // the clusters whose connectivity was recorded
  CHECK(conn[0].cluster == clusters[0]);
  CHECK(conn[0].connectivity == "Available");
  CHECK(conn[0].time == "t0");
  // A read-back alone records the cluster, connectivity Unknown; recorded
  // connectivity stays.
  ac::set_cluster_readback(*st, "7", "collectd", clusters[1], "{}", "t3");
  ac::set_cluster_readback(*st, "7", "collectd", clusters[0], "{}", "t3");
  conn = ac::states(*st, "7").clusters;
  REQUIRE(conn.size() == 21);
  CHECK(conn[0].connectivity == "Available");
  CHECK(conn[1].cluster == clusters[1]);
  CHECK(conn[1].connectivity == "Unknown");
  CHECK(ac::resource_state(*st, "7", "collectd", clusters[1], "a+ConfigMap"));  // its states stay
  size_t counted = 0;
  ac::for_each_resource_status(*st, "7", "collectd", [&](std::string_view, std::string_view, std::string_view status) {
    counted += status == "Applied";
  });
  CHECK(counted == 79);
}

namespace {
std::vector<store::ResourceStateView> decoded(std::string_view data) {
  std::vector<store::ResourceStateView> out;
  store::visit_resource_states(data, [&](const store::ResourceStateView& v) { out.push_back(v); });
  return out;
}
}  // namespace

TEST_CASE("stored resource states round-trip and damage is reported", "[appcontext][status]") {
  const std::string long_name(300, 'x'), long_message(200, 'm');
  std::vector<store::ResourceStateView> states = {
      {"a+ConfigMap", "Committed", "commit 7e6f", "2026-11-29T14:32:11.392Z", ""},
      {"b+Deployment", "Committed", "commit 7e6f", "2026-11-29T14:32:11.392Z", "true"},
      {"c+Service", "Failed", "", "2026-11-29T14:32:12.000Z", ""},
      {long_name, "Pending", long_message, "", ""},  // lengths over one varint byte
  };
  const std::string data = store::encode_resource_states(states);
  auto back = decoded(data);
  REQUIRE(back.size() == states.size());
  for (size_t i = 0; i < states.size(); ++i) {
    CHECK(back[i].resource == states[i].resource);
    CHECK(back[i].status == states[i].status);
    CHECK(back[i].message == states[i].message);
    CHECK(back[i].time == states[i].time);
    CHECK(back[i].ready == states[i].ready);
  }
  // The second state repeats the first's status, message and time: a byte each.
  const std::string two = store::encode_resource_states({states[0], states[1]});
  const std::string one = store::encode_resource_states({states[0]});
  CHECK(two.size() - one.size() == 1 + states[1].resource.size() + 3 + 1 + states[1].ready.size());
  CHECK(store::encode_resource_states({}).empty());
  CHECK(decoded("").empty());
  for (size_t cut = 1; cut < data.size(); ++cut) {
    std::optional<size_t> at;
    try {
      decoded(std::string_view(data).substr(0, cut));
    } catch (const store::MalformedStates& e) {
      at = e.at;
    }
    // A cut after the format byte or between two whole states is a shorter
    // valid list; anywhere else it is reported, at the cut.
    const bool whole = cut == 1 || cut == one.size() || cut == two.size() ||
                       cut == store::encode_resource_states({states[0], states[1], states[2]}).size();
    CHECK(at.has_value() != whole);
    if (at) CHECK(*at <= cut);
  }
  // Out of order (or repeated) names are damage, not a second entry.
  CHECK_THROWS_AS(decoded(store::encode_resource_states({states[1], states[0]})),
                  store::MalformedStates);
  CHECK_THROWS_AS(decoded(store::encode_resource_states({states[0], states[0]})),
                  store::MalformedStates);
  CHECK_THROWS_AS(decoded(std::string("\x02", 1)), store::MalformedStates);  // unknown format
}

TEST_CASE("damaged stored states are reported naming their cluster", "[appcontext][status]") {
  auto st = emco::test::open_test_store();
  ac::save(*st, sample("7", 1));
  ac::set_resource_ready(*st, "7", "collectd", "p+c0", "s+Service", "true");
  st->write([&] {
    auto& s = st->database().statement("UPDATE ac_status SET resources = ? WHERE ctx = '7'");
    s.bind_blob(1, std::string("\x01\x09s+Serv", 8));
    s.exec();
  });
  CHECK_THROWS_WITH(ac::resource_states(*st, "7"),
                    Catch::Contains("the stored resource states of context '7', app 'collectd', cluster 'p+c0' are "
                                    "malformed at byte"));
  CHECK_THROWS_AS(ac::set_resource_ready(*st, "7", "collectd", "p+c0", "s+Service", "false"), Error);
}
