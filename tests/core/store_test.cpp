// The resource store: referential integrity, outcomes, transactions,
// migrations, concurrency.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <thread>

#include "core/resource/kinds.hpp"
#include "core/store/cluster_checks.hpp"
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

TEST_CASE("inside a write, what get and put learn stays exact: nested failures, removals, state, prefetch") {
  auto st = emco::test::open_test_store();
  const Key p = resource::parse_anchor("cluster-providers/p").key;
  st->write([&] {
    CHECK_FALSE(st->get(p));  // remembered as absent...
    CHECK(st->put(make("cluster-providers/p")) == PutOutcome::created);
    auto got = st->get(p);  // ...and then as written
    REQUIRE(got);
    CHECK(got->id > 0);
    CHECK(st->put(make("cluster-providers/p")) == PutOutcome::unchanged);
    st->set_state_info(p, R"({"actions":[]})");
    CHECK(st->get(p)->state_info == R"({"actions":[]})");
    // A nested write that fails: its savepoint undoes the cluster, and the
    // store does not remember it either.
    CHECK_THROWS(st->write([&] {
      st->put(make("cluster-providers/p/clusters/c"));
      REQUIRE(st->get(resource::parse_anchor("cluster-providers/p/clusters/c").key));
      throw Error(ErrorKind::failed, "undo");
    }));
    CHECK_FALSE(st->get(resource::parse_anchor("cluster-providers/p/clusters/c").key));
    CHECK(st->put(make("cluster-providers/p/clusters/c")) == PutOutcome::created);
    st->remove(resource::parse_anchor("cluster-providers/p/clusters/c").key);
    CHECK_FALSE(st->get(resource::parse_anchor("cluster-providers/p/clusters/c").key));
  });
  // 250 clusters, some with an attachment; prefetched in a later transaction
  // with as many absent keys, each get answers as a fresh read does.
  std::vector<Key> keys;
  st->write([&] {
    for (int i = 0; i < 250; ++i) {
      Resource r = make("cluster-providers/p/clusters/c" + std::to_string(i));
      if (i % 3 == 0) r.contents.push_back({"kubeconfig", "kc.yaml", "secret\0" + std::to_string(i)});
      st->put(r);
      keys.push_back(r.key);
      keys.push_back(resource::parse_anchor("cluster-providers/p/clusters/x" + std::to_string(i)).key);
    }
  });
  std::vector<std::optional<Resource>> fresh;
  for (const auto& k : keys) fresh.push_back(st->get(k));
  st->write([&] {
    st->prefetch(keys);
    for (size_t i = 0; i < keys.size(); ++i) {
      auto r = st->get(keys[i]);
      REQUIRE(r.has_value() == fresh[i].has_value());
      if (!r) continue;
      CHECK(r->id == fresh[i]->id);
      CHECK(r->data == fresh[i]->data);
      CHECK(r->state_info == fresh[i]->state_info);
      CHECK(r->contents == fresh[i]->contents);
    }
    CHECK(st->put(make("cluster-providers/p/clusters/c7")) == PutOutcome::unchanged);
    CHECK(st->put(make("cluster-providers/p/clusters/x7")) == PutOutcome::created);
  });
  CHECK(st->get(resource::parse_anchor("cluster-providers/p/clusters/x7").key));
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

TEST_CASE("a cluster deleted while a logical cloud comes to reference it: one wins, no reference dangles",
          "[concurrency]") {
  namespace fs = std::filesystem;
  auto root = fs::temp_directory_path() / ("emco-store-race-" + std::to_string(::getpid()));
  fs::remove_all(root);
  bool created = false;
  auto ws = emco::test::init_test_workspace(root, created);
  const char* cluster = "cluster-providers/p/clusters/c";
  const char* ref = "projects/pr/logical-clouds/lc/cluster-references/r";
  const json ref_spec = {{"clusterProvider", "p"}, {"cluster", "c"}};
  {
    auto st = Store::open(ws);
    st->write([&] {
      st->put(make("cluster-providers/p"));
      st->put(make(cluster));
      st->put(make("projects/pr"));
      st->put(make("projects/pr/logical-clouds/lc"));
    });
  }
  // Each round races, in two processes, the creation of a reference to the
  // cluster against the cluster's deletion; then puts things back.
  const int rounds = std::getenv("EMCO_QUICK") ? 30 : 100;
  int references_won = 0, deletes_won = 0;
  for (int round = 0; round < rounds; ++round) {
    int pipe_fd[2];
    REQUIRE(::pipe(pipe_fd) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::close(pipe_fd[1]);
      int rc = 0;
      try {
        auto st = Store::open(ws);
        char go;
        if (::read(pipe_fd[0], &go, 1) != 1) ::_exit(3);
        st->write([&] { st->put(make(ref, ref_spec)); });
      } catch (const Error& e) {
        rc = e.kind() == ErrorKind::not_found ? 1 : 2;
      } catch (...) {
        rc = 2;
      }
      ::_exit(rc);
    }
    ::close(pipe_fd[0]);
    auto st = Store::open(ws);
    REQUIRE(::write(pipe_fd[1], "g", 1) == 1);
    ::close(pipe_fd[1]);
    bool deleted = false;
    try {
      st->write([&] { st->remove(resource::parse_anchor(cluster).key); });
      deleted = true;
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::conflict);  // "it is referenced by ..."
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    const bool referenced = WEXITSTATUS(status) == 0;
    INFO("round " << round << ": child exit " << WEXITSTATUS(status) << ", deleted " << deleted);
    CHECK(WEXITSTATUS(status) != 2);  // the reference failed, if at all, for the missing cluster
    CHECK(referenced != deleted);     // exactly one of the two
    const bool has_cluster = st->get(resource::parse_anchor(cluster).key).has_value();
    const bool has_ref = st->get(resource::parse_anchor(ref).key).has_value();
    CHECK(has_cluster == !deleted);
    CHECK(has_ref == referenced);
    CHECK_FALSE((has_ref && !has_cluster));
    (referenced ? references_won : deletes_won)++;
    st->write([&] {
      if (has_ref) st->remove(resource::parse_anchor(ref).key);
      if (!has_cluster) st->put(make(cluster));
    });
  }
  CHECK(references_won + deletes_won == rounds);
  fs::remove_all(root);
}

TEST_CASE("writers on different resources do not wait for each other", "[concurrency][postgresql]") {
  namespace fs = std::filesystem;
  auto root = fs::temp_directory_path() / ("emco-store-nowait-" + std::to_string(::getpid()));
  fs::remove_all(root);
  bool created = false;
  auto ws = emco::test::init_test_workspace(root, created);
  auto a = Store::open(ws);
  auto b = Store::open(ws);
  a->write([&] {
    a->put(make("projects/p1"));
    a->put(make("projects/p2"));
  });
  int runs = 0;
  a->write([&] {
    ++runs;
    a->put(make("projects/p1/composite-apps/ca/v1"));
    // While a's transaction is open, b writes under another project and
    // commits: with exclusion (SQLite) this would wait for a forever.
    if (runs == 1) b->write([&] { b->put(make("projects/p2/composite-apps/ca/v1")); });
  });
  CHECK(runs >= 1);  // a may run again if its reads overlapped b's writes
  CHECK(b->list(resource::kind("compositeApp")).size() == 2);
  fs::remove_all(root);
}

TEST_CASE("a cluster's last check is kept, replaced by the next one, and goes with the cluster", "[cluster_checks]") {
  auto st = emco::test::open_test_store();
  st->write([&] {
    st->put(make("cluster-providers/p"));
    st->put(make("cluster-providers/p/clusters/c1"));
    st->put(make("cluster-providers/p/clusters/c2"));
  });
  const Key c1 = resource::parse_anchor("cluster-providers/p/clusters/c1").key;
  const Key c2 = resource::parse_anchor("cluster-providers/p/clusters/c2").key;
  CHECK_FALSE(cluster_check(*st, c1));
  CHECK(cluster_checks(*st).empty());
  const ClusterCheck up{"2026-11-27T10:00:00Z", true, "", "v1.29.0"};
  const ClusterCheck down{"2026-11-27T10:05:00Z", false, "reachable: connection refused", ""};
  record_cluster_check(*st, c1, up);
  record_cluster_check(*st, c2, up);
  CHECK(cluster_check(*st, c1) == up);
  record_cluster_check(*st, c1, down);  // the next check replaces it
  CHECK(cluster_check(*st, c1) == down);
  auto all = cluster_checks(*st);
  REQUIRE(all.size() == 2);
  CHECK(all[c1.str()] == down);
  CHECK(all[c2.str()] == up);
  CHECK(json::parse(cluster_status_json(down)) ==
        json{{"lastCheck", {{"time", "2026-11-27T10:05:00Z"}, {"reachable", false}, {"error", "reachable: connection refused"}}}});
  CHECK(json::parse(cluster_status_json(up))["lastCheck"]["serverVersion"] == "v1.29.0");
  // Changing the cluster keeps its check; deleting it removes the check.
  st->write([&] { st->put(make("cluster-providers/p/clusters/c1", json{{"description", "x"}})); });
  CHECK(cluster_check(*st, c1) == down);
  st->write([&] { st->remove(c1); });
  CHECK_FALSE(cluster_check(*st, c1));
  CHECK(cluster_checks(*st).size() == 1);
  try {
    record_cluster_check(*st, c1, up);
    FAIL("a check of a cluster that does not exist was recorded");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::not_found);
  }
}
