// `emco lc stop` on a level-1 logical cloud: an instantiate that keeps
// retrying a refusing cluster, run by one emco process, is ended by
// `emco lc stop` from another; the cloud is left InstantiateStopped, and once
// the cluster is back a terminate removes everything from both clusters.

#include <chrono>
#include <functional>
#include <thread>

#include "core/util/strings.hpp"
#include "world.hpp"

using namespace emco;
using namespace emco::lctest;

namespace {

// Polls `done` until it holds or `limit` passes.
bool eventually(const std::function<bool()>& done, std::chrono::seconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return done();
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("lc stop from another process ends a level-1 instantiate, and terminate cleans up", "[logical_cloud][sim][stop]") {
  World w(2);
  w.permit_namespace();
  w.quota();
  for (const auto& n : w.names) w.reference(n);
  sim::Fault refuse;
  refuse.refuse = true;
  w.sim.set_fault(w.names[1], refuse);

  // Under ASan the binary's LSan must not fail it for the system libgit2's leaks.
  std::ofstream(w.dir / "lsan.supp") << "leak:libgit2.so\nleak:libpcre2-8.so\nleak:libssh2.so\nleak:libcrypto.so\n";
  const std::string emco = "EMCO_AUTO_RESUME=0 LSAN_OPTIONS=suppressions='" + (w.dir / "lsan.supp").string() +
                           "' EMCO_WORKSPACE='" + w.dir.string() + "' " + std::string(EMCO_BINARY_DIR) + "/emco";
  auto state = [&] {
    auto r = sh(w.dir, emco + " lc status proj/tenant -o json");
    REQUIRE(r.code == 0);
    return json::parse(r.out);
  };

  // The instantiate, in a process of its own (exit code to inst.rc).
  const fs::path rc = w.dir / "inst.rc", log = w.dir / "inst.log";
  auto started = sh(w.dir, "( " + emco + " lc instantiate proj/tenant --timeout 5m > '" + log.string() +
                               "' 2>&1; echo $? > '" + rc.string() + "' ) > /dev/null 2>&1 &");
  REQUIRE(started.code == 0);
  // It delivers to the healthy cluster and keeps retrying the refusing one.
  REQUIRE(eventually([&] { return w.objects(w.names[0]) == standard_objects(); }, std::chrono::seconds(60)));
  CHECK(w.objects(w.names[1]).empty());
  CHECK_FALSE(fs::exists(rc));

  auto stop = sh(w.dir, emco + " lc stop proj/tenant");
  INFO(stop.out);
  REQUIRE(stop.code == 0);
  bool ended = eventually([&] { return fs::exists(rc) && !slurp(rc).empty(); }, std::chrono::seconds(30));
  INFO(slurp(log));
  REQUIRE(ended);
  CHECK(trim(slurp(rc)) != "0");
  json s = state();
  INFO(s.dump(2));
  CHECK(s["deployedStatus"] == "InstantiateStopped");
  CHECK(w.objects(w.names[1]).empty());

  // The cluster is back: terminate removes the cloud from both clusters.
  w.sim.set_fault(w.names[1], sim::Fault{});
  auto term = sh(w.dir, emco + " lc terminate proj/tenant");
  INFO(term.out);
  REQUIRE(term.code == 0);
  CHECK(state()["deployedStatus"] == "Terminated");
  for (const auto& n : w.names) CHECK(w.objects(n).empty());
  // And the cloud can be instantiated again, on both.
  auto again = sh(w.dir, emco + " lc instantiate proj/tenant");
  INFO(again.out);
  REQUIRE(again.code == 0);
  for (const auto& n : w.names) CHECK(w.objects(n) == standard_objects());
}
