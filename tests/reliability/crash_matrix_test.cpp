// Issue #23 item 4, a crash matrix: emco is killed (SIGKILL) at *every* step
// of instantiate, update, rollback, terminate and logical-cloud instantiate,
// over a fleet with direct (kubeconfig) and GitOps (a local bare repository)
// delivery. A step is a write to a file, a rename or unlink, or a send to a
// peer (tests/reliability/shim/fault_shim.cpp, preloaded into the emco
// process): killing before step k of n, for every k, covers every point at
// which the process can leave a trace, including between a git commit and
// its push and between a push and the status write.
//
// After each kill, `emco sync` must finish the operation (or, when the kill
// came before the operation was recorded, running it again must), and then
// the clusters, the repository's tree and the status must equal those of a
// clean run. EMCO_CRASH_STRIDE=N tries every Nth step only (default: all;
// every 4th under ASan and on PostgreSQL).
//
// What it found: a kill while libgit2 updated a ref left `.lock` files in the
// workspace's git cache and in a file:// remote, and every later push failed
// (fixed in plugins/targets/gitops/git_delivery.cpp).

#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <iostream>

#include <nlohmann/json.hpp>

#include "tests/reliability/fleet.hpp"

using namespace emco::test;
using nlohmann::json;

namespace {

const std::map<std::string, std::string> k_plain = {{"EMCO_AUTO_RESUME", "0"}};

// Everything a clean run leaves outside the workspace.
struct World {
  std::map<std::string, std::set<std::string>> clusters;
  std::string git_tree;
  std::set<std::string> cloud;
  bool operator==(const World&) const = default;
};

World world(const Fleet& f) { return {f.snapshot(), f.git_tree(), f.cloud_objects()}; }

std::string describe(const World& w) {
  std::string out;
  for (const auto& [c, objects] : w.clusters) {
    out += c + ":";
    for (const auto& o : objects) out += " " + o;
    out += "; ";
  }
  out += "cloud objects " + std::to_string(w.cloud.size()) + "; repository:\n" + w.git_tree;
  return out;
}

// How many times a DIG's or a logical cloud's state changed (the operation
// was recorded when this grows).
size_t dig_actions(Fleet& f, const std::string& dig) {
  Exit e = f.emco({"dig", "history", Fleet::dig(dig), "-o", "json"}, k_plain);
  REQUIRE(e.code == 0);
  return json::parse(e.out).value("actions", json::array()).size();
}

size_t cloud_actions(Fleet& f, const std::string& lc) {
  Exit e = f.emco({"lc", "status", "proj/" + lc, "-o", "json"}, k_plain);
  INFO(e.err);
  REQUIRE(e.code == 0);
  return json::parse(e.out)["states"].value("actions", json::array()).size();
}

// The status a user reads, without times: the deployed state and its counts.
std::string dig_status(Fleet& f) { return f.status_line("dig1"); }

// After terminate, objects a killed process deleted without recording it
// are Absent when emco sync deletes them again: both mean "not there".
std::string terminated_status(Fleet& f) {
  json s = f.status("dig1");
  int gone = 0, other = 0;
  if (s.contains("deployedCounts"))
    for (const auto& [state, n] : s["deployedCounts"].items())
      (state == "Deleted" || state == "Absent" ? gone : other) += n.get<int>();
  return s.value("deployedStatus", "") + " gone=" + std::to_string(gone) + " other=" + std::to_string(other);
}

std::string cloud_status(Fleet& f) {
  Exit e = f.emco({"lc", "status", "proj/lc1", "-o", "json"}, k_plain);
  REQUIRE(e.code == 0);
  json s = json::parse(e.out);
  std::string out = s.value("deployedStatus", "");
  for (const auto& c : s["clusters"]) {
    out += " " + c.value("cluster", "") + ":";
    for (const auto& r : c["resources"]) out += " " + r.value("status", "");
  }
  return out;
}

// One row of the matrix.
struct Operation {
  std::string name;
  std::vector<std::string> args;
  std::function<void()> prepare;     // from any state the row leaves, to the operation's start (clean runs)
  std::function<size_t()> recorded;  // grows once the operation is recorded
  std::function<std::string()> status;
};

// Kills `op` before each of its steps in turn; returns the steps covered.
long crash_every_step(Fleet& f, const Operation& op, int stride) {
  op.prepare();
  fs::remove(f.root() / "steps");
  Exit counted = f.emco(op.args, f.fault_env("count", 0));
  INFO(op.name << " (counting run): " << counted.err);
  REQUIRE(counted.code == 0);
  long steps = 0;
  std::ifstream(f.root() / "steps") >> steps;
  REQUIRE(steps > 0);
  const World clean = world(f);
  const std::string clean_status = op.status();

  long covered = 0;
  int killed = 0;
  for (long at = 1; at <= steps; at += stride) {
    CAPTURE(op.name, at, steps);
    op.prepare();
    const size_t before = op.recorded();
    Exit k = f.emco(op.args, f.fault_env("kill", at));
    INFO("killed run: " << k.err);
    // A run may take fewer steps than the counting run (a retry that was not
    // needed, a shorter read): then it ends normally.
    REQUIRE((k.code == 128 + 9 || k.code == 0));
    if (k.code == 128 + 9) ++killed;
    f.run_ok({"sync"});
    if (op.recorded() == before) f.run_ok(op.args);  // killed before the operation was recorded
    World now = world(f);
    INFO("now:   " << describe(now) << "\nclean: " << describe(clean));
    REQUIRE(now == clean);
    REQUIRE(op.status() == clean_status);
    REQUIRE(f.queued() == 0);
    ++covered;
  }
  std::cerr << "crash matrix: " << op.name << ": " << steps << " steps, " << covered << " crash points tried, "
            << killed << " killed\n";
  REQUIRE(killed > 0);
  return covered;
}

std::string placement(const char* app, const std::string& where) {
  return "---\nversion: emco/v2\nresourceContext:\n  anchor: projects/proj/composite-apps/ca/v1/"
         "deployment-intent-groups/dig1/generic-placement-intents/gpi/app-intents\nmetadata:\n  name: " +
         std::string(app) + "-placement\nspec:\n  app: " + app + "\n  intent:\n    allOf:\n      - clusterProvider: p\n" +
         where;
}

}  // namespace

TEST_CASE("kill -9 at every step of every operation, kube and GitOps: emco sync ends where a clean run ends",
          "[reliability][crash-matrix]") {
  // Every step; every 4th where processes are slow (ASan, CI on PostgreSQL).
  const int stride = effort("EMCO_CRASH_STRIDE", 1, 4);
  Fleet f(2, 2, Shape{.gitops = true, .level1_cloud = true});
  const std::string dig = Fleet::dig("dig1");

  // Placement A: both apps everywhere. Placement B: a01 on c00 only.
  {
    std::ofstream(f.root() / "placement-a.yaml") << placement("a01", "        clusterLabel: edge\n");
    std::ofstream(f.root() / "placement-b.yaml") << placement("a01", "        cluster: c00\n");
  }
  auto state = [&] { return f.state("dig1"); };
  auto running = [&] { return state() == "Instantiated" || state() == "Updated"; };
  auto to_a = [&] {
    f.run_ok({"apply", "-f", "placement-a.yaml"});
    if (!running()) f.run_ok({"dig", "instantiate", dig});
    f.run_ok({"dig", "update", dig});
  };

  // Every cluster, direct and GitOps, receives the DIG.
  f.run_ok({"dig", "instantiate", dig});
  REQUIRE(f.git_tree() != "");
  REQUIRE(f.snapshot().at("c00").size() == 2);
  f.run_ok({"dig", "terminate", dig});

  long covered = 0;
  covered += crash_every_step(
      f,
      {"instantiate", {"dig", "instantiate", dig},
       [&] {
         if (running()) f.run_ok({"dig", "terminate", dig});
       },
       [&] { return dig_actions(f, "dig1"); }, [&] { return dig_status(f); }},
      stride);
  covered += crash_every_step(
      f,
      {"terminate", {"dig", "terminate", dig},
       [&] {
         if (!running()) f.run_ok({"dig", "instantiate", dig});
       },
       [&] { return dig_actions(f, "dig1"); }, [&] { return terminated_status(f); }},
      stride);
  covered += crash_every_step(
      f,
      {"update", {"dig", "update", dig},
       [&] {
         to_a();
         f.run_ok({"apply", "-f", "placement-b.yaml"});
       },
       [&] { return dig_actions(f, "dig1"); }, [&] { return dig_status(f); }},
      stride);

  // The revision that holds placement B (the last update above delivered it).
  int revision_b = 0;
  {
    Exit h = f.emco({"dig", "history", dig, "-o", "json"}, k_plain);
    REQUIRE(h.code == 0);
    const json history = json::parse(h.out);
    for (const auto& a : history["actions"]) revision_b = std::max(revision_b, a.value("revision", 0));
    INFO(h.out);
    REQUIRE(revision_b > 1);
  }
  covered += crash_every_step(
      f,
      {"rollback", {"dig", "rollback", dig, "--revision", std::to_string(revision_b)}, to_a,
       [&] { return dig_actions(f, "dig1"); }, [&] { return dig_status(f); }},
      stride);

  covered += crash_every_step(
      f,
      {"logical-cloud instantiate", {"lc", "instantiate", "proj/lc1"},
       [&] {
         Exit s = f.emco({"lc", "status", "proj/lc1", "-o", "json"}, k_plain);
         REQUIRE(s.code == 0);
         if (json::parse(s.out).value("deployedStatus", "") == "Instantiated") f.run_ok({"lc", "terminate", "proj/lc1"});
       },
       [&] { return cloud_actions(f, "lc1"); }, [&] { return cloud_status(f); }},
      stride);

  std::cerr << "crash matrix: " << covered << " crash points covered\n";
  REQUIRE(f.integrity() == "ok");
}
