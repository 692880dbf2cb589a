// The rows of distributed delivery (core/appcontext/job_rows.hpp) on a
// real PostgreSQL server: claims never overlap, leases expire by the
// server's clock, a job is finished only by the worker holding it.

#include <catch2/catch.hpp>

#include <set>
#include <thread>

#include "core/appcontext/appcontext.hpp"
#include "core/appcontext/job_rows.hpp"
#include "tests/test_store.hpp"

using namespace emco;
namespace ac = emco::appcontext;
namespace jobs = emco::appcontext::jobs;

namespace {

void save_context(store::Store& st, const std::string& id) {
  ac::AppContext ctx;
  ctx.id = id;
  ctx.owner = {"deploymentIntentGroup",
               resource::Key::parse("project=p/compositeApp=ca/compositeAppVersion=v1/deploymentIntentGroup=dig")};
  ctx.created = "2026-11-24T00:00:00.000Z";
  ac::save(st, ctx);
}

std::vector<jobs::Offer> offers(int n) {
  std::vector<jobs::Offer> out;
  for (int i = 0; i < n; ++i) out.push_back({i, "a", "p+c" + std::to_string(i), 2});
  return out;
}

}  // namespace

TEST_CASE("SQLite workspaces have no distributed delivery", "[sqlite][jobs]") {
  auto st = test::open_test_store();
  CHECK_FALSE(jobs::available(*st));
}

TEST_CASE("two workers claiming at once never get the same job", "[postgresql][jobs]") {
  auto st = test::open_test_store();
  REQUIRE(jobs::available(*st));
  save_context(*st, "100");
  jobs::offer(*st, "100", 1, "coord", offers(200));
  // Two connections (two "machines") claim in small batches concurrently.
  std::vector<std::set<int64_t>> got(2);
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w)
    threads.emplace_back([&, w] {
      auto own = store::Store::open_location(st->location(), st->data_dir());
      for (;;) {
        auto c = jobs::claim(*own, "w" + std::to_string(w), 10000, 7);
        if (c.empty()) break;
        for (const auto& j : c) got[static_cast<size_t>(w)].insert(j.job);
      }
    });
  for (auto& t : threads) t.join();
  for (int64_t j : got[0]) CHECK(got[1].count(j) == 0);
  CHECK(got[0].size() + got[1].size() == 200);
  CHECK_FALSE(jobs::claimable(*st));
}

TEST_CASE("an expired lease makes a job claimable again, and only its holder finishes it", "[postgresql][jobs]") {
  auto st = test::open_test_store();
  save_context(*st, "200");
  jobs::offer(*st, "200", 1, "coord", offers(1));
  auto first = jobs::claim(*st, "dead", 300, 10);
  REQUIRE(first.size() == 1);
  CHECK(jobs::claim(*st, "other", 10000, 10).empty());  // leased
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  auto second = jobs::claim(*st, "other", 10000, 10);
  REQUIRE(second.size() == 1);
  CHECK(second[0].id == first[0].id);
  // The dead worker comes back: its renew and finish find the job gone.
  CHECK(jobs::renew(*st, "dead", 10000).empty());
  CHECK_FALSE(jobs::finish(*st, first[0].id, "dead", true, ""));
  CHECK(jobs::collect(*st, "200", 1, "coord").empty());
  CHECK(jobs::finish(*st, second[0].id, "other", false, "refused"));
  auto ended = jobs::collect(*st, "200", 1, "coord");
  REQUIRE(ended.size() == 1);
  CHECK_FALSE(ended[0].ok);
  CHECK(ended[0].message == "refused");
  CHECK(ended[0].steps == 2);
  CHECK(jobs::collect(*st, "200", 1, "coord").empty());  // reported once
  // Offered again (a resumed event): a failed job is ready again, and is
  // collected afresh by the new coordinator once it ends.
  jobs::offer(*st, "200", 1, "coord2", offers(1));
  auto again = jobs::claim(*st, "other", 10000, 10);
  REQUIRE(again.size() == 1);
  CHECK(jobs::finish(*st, again[0].id, "other", true, ""));
  CHECK(jobs::collect(*st, "200", 1, "coord2").size() == 1);
  jobs::forget(*st, "200", 1);
  CHECK(jobs::collect(*st, "200", 1, "coord2").empty());
}

TEST_CASE("jobs of a stopped context are not claimed", "[postgresql][jobs]") {
  auto st = test::open_test_store();
  save_context(*st, "300");
  jobs::offer(*st, "300", 1, "coord", offers(3));
  ac::set_stop(*st, "300", true);
  CHECK(jobs::claim(*st, "w", 10000, 10).empty());
  CHECK_FALSE(jobs::claimable(*st));
  ac::set_stop(*st, "300", false);
  CHECK(jobs::claim(*st, "w", 10000, 10, "other-context").empty());
  CHECK(jobs::claim(*st, "w", 10000, 10, "300").size() == 3);
}
