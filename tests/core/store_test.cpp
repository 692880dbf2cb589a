// The resource store: referential integrity, outcomes, transactions,
// migrations, concurrency.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <sys/stat.h>
#include <thread>

#include "core/resource/kinds.hpp"
#include "core/store/database.hpp"
#include "core/store/store.hpp"
#include "core/util/error.hpp"
#include "tests/test_store.hpp"

using namespace emco;
using namespace emco::store;
using resource::Key;
using nlohmann::json;

namespace {

Resource make(const std::string& anchor, json spec = json::object()) {
  auto a = resource::parse_anchor(anchor);
  Resource r;
  r.kind = a.kind;
  r.key = a.key;
  r.data = json{{"metadata", {{"name", a.key.parts.back().second}}}, {"spec", spec}}.dump();
  return r;
}

}  // namespace

TEST_CASE("parents and references must exist, outcomes say what changed") {
  auto st = emco::test::open_test_store();
  st->write([&] {
    CHECK_THROWS_WITH(st->put(make("cluster-providers/p/clusters/c")),
                      "cluster provider 'p' does not exist");
    CHECK(st->put(make("cluster-providers/p")) == PutOutcome::created);
    CHECK(st->put(make("cluster-providers/p")) == PutOutcome::unchanged);
    CHECK(st->put(make("cluster-providers/p/clusters/c")) == PutOutcome::created);
    CHECK(st->put(make("projects/pr")) == PutOutcome::created);
    CHECK(st->put(make("projects/pr/logical-clouds/lc", {{"level", "0"}})) == PutOutcome::created);
    CHECK_THROWS_WITH(st->put(make("projects/pr/logical-clouds/lc/cluster-references/r",
                                   {{"clusterProvider", "p"}, {"cluster", "nope"}})),
                      "cluster 'p/nope' named in spec.cluster does not exist");
    CHECK(st->put(make("projects/pr/logical-clouds/lc/cluster-references/r", {{"clusterProvider", "p"}, {"cluster", "c"}})) ==
          PutOutcome::created);
    CHECK(st->put(make("projects/pr/logical-clouds/lc", {{"level", "1"}})) == PutOutcome::configured);
  });
}

TEST_CASE("deletes are refused while children or referrers remain") {
  auto st = emco::test::open_test_store();
  st->write([&] {
    st->put(make("cluster-providers/p"));
    st->put(make("cluster-providers/p/clusters/c"));
    st->put(make("projects/pr"));
    st->put(make("projects/pr/logical-clouds/lc"));
    st->put(make("projects/pr/logical-clouds/lc/cluster-references/r", {{"clusterProvider", "p"}, {"cluster", "c"}}));
  });
  auto before = st->dump();
  try {
    st->write([&] { st->remove(Key{{{"clusterProvider", "p"}}}); });
    FAIL("expected a conflict");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::conflict);
    CHECK(e.message() == "cannot delete cluster provider 'p': it still has 1 child: cluster 'p/c'");
  }
  try {
    st->write([&] { st->remove(Key{{{"clusterProvider", "p"}, {"cluster", "c"}}}); });
    FAIL("expected a conflict");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::conflict);
    CHECK(e.message() == "cannot delete cluster 'p/c': it is referenced by cluster reference 'pr/lc/r'");
  }
  CHECK(st->dump() == before);
  st->write([&] {
    st->remove(resource::parse_anchor("projects/pr/logical-clouds/lc/cluster-references/r").key);
    st->remove(Key{{{"clusterProvider", "p"}, {"cluster", "c"}}});
  });
  CHECK_FALSE(st->get(Key{{{"clusterProvider", "p"}, {"cluster", "c"}}}));
}

TEST_CASE("label references need a labelled cluster and pin the labels") {
  auto st = emco::test::open_test_store();
  st->write([&] {
    st->put(make("cluster-providers/p"));
    st->put(make("cluster-providers/p/clusters/c1"));
    st->put(make("cluster-providers/p/clusters/c1/labels/edge"));
    st->put(make("projects/pr"));
    st->put(make("projects/pr/composite-apps/ca/v1", {{"compositeAppVersion", "v1"}}));
  });
  Resource app = make("projects/pr/composite-apps/ca/v1/apps/web");
  app.contents.push_back({"file", "web.tgz", "bytes"});
  st->write([&] {
    st->put(app);
    st->put(make("projects/pr/logical-clouds/lc"));
    st->put(make("projects/pr/composite-apps/ca/v1/composite-profiles/cp"));
    st->put(make("projects/pr/composite-apps/ca/v1/deployment-intent-groups/d",
                 {{"logicalCloud", "lc"}, {"compositeProfile", "cp"}, {"version", "r1"}}));
    st->put(make("projects/pr/composite-apps/ca/v1/deployment-intent-groups/d/generic-placement-intents/g"));
  });
  json bad = {{"app", "web"}, {"intent", {{"allOf", {{{"clusterProvider", "p"}, {"clusterLabel", "core"}}}}}}};
  CHECK_THROWS_WITH(st->write([&] {
    st->put(make("projects/pr/composite-apps/ca/v1/deployment-intent-groups/d/generic-placement-intents/g/app-intents/a", bad));
  }),
                    Catch::Contains("has label 'core'"));
  json good = {{"app", "web"}, {"intent", {{"allOf", {{{"clusterProvider", "p"}, {"clusterLabel", "edge"}}}}}}};
  st->write([&] {
    st->put(make("projects/pr/composite-apps/ca/v1/deployment-intent-groups/d/generic-placement-intents/g/app-intents/a", good));
  });
  CHECK_THROWS_WITH(st->write([&] { st->remove(resource::parse_anchor("cluster-providers/p/clusters/c1/labels/edge").key); }),
                    Catch::Contains("referenced by app placement intent"));
  auto stored = st->get(app.key);
  REQUIRE(stored);
  REQUIRE(stored->contents.size() == 1);
  CHECK(stored->contents[0].data == "bytes");
}

TEST_CASE("a failed write transaction changes nothing") {
  auto st = emco::test::open_test_store();
  st->write([&] { st->put(make("projects/a")); });
  auto before = st->dump();
  CHECK_THROWS(st->write([&] {
    st->put(make("projects/b"));
    st->put(make("projects/missing/logical-clouds/x"));
  }));
  CHECK(st->dump() == before);
}

TEST_CASE("workspaces: found by walking up, private modes, refuse newer schemas") {
  namespace fs = std::filesystem;
  auto root = fs::temp_directory_path() / ("emco-store-test-" + std::to_string(::getpid()));
  fs::remove_all(root);
  bool created = false;
  auto ws = emco::test::init_test_workspace(root, created);
  CHECK(created);
  struct stat s {};
  REQUIRE(::stat(ws.dir().c_str(), &s) == 0);
  CHECK((s.st_mode & 0777) == 0700);
  fs::create_directories(root / "a" / "b");
  CHECK(find_workspace(std::nullopt, root / "a" / "b").root == ws.root);
  CHECK_THROWS_AS(find_workspace(std::nullopt, fs::temp_directory_path()), Error);
  init_workspace(root, created);
  CHECK_FALSE(created);


  // Concurrent writers wait for each other instead of failing.
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      try {
        auto st = Store::open(ws);
        for (int i = 0; i < 25; ++i)
          st->write([&] { st->put(make("projects/t" + std::to_string(t) + "-" + std::to_string(i))); });
      } catch (...) {
        ++failures;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  {
    auto st = Store::open(ws);
    CHECK(st->list(resource::kind("project")).size() == 100);
    st->database().transaction([&] { st->database().set_schema_version(Store::schema_version() + 1); });
  }
  try {
    Store::open(ws);
    FAIL("a workspace of a newer schema was opened");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::workspace);
    CHECK(e.message().find("is newer than this emco supports") != std::string::npos);
  }
  fs::remove_all(root);
}
