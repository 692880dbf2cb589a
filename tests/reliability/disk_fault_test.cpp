// Issue #23 item 3, disk faults: during apply, instantiate, update and
// terminate, every write emco makes to a file is made to fail in turn
// (tests/reliability/shim/fault_shim.cpp, preloaded): ENOSPC from that write
// on (a full disk stays full) and EIO on that write only; and the whole
// workspace read-only (EROFS). Each time emco must report the fault (never
// crash or claim success it did not have), leave a sound database holding
// the state before or the state after (never a mix), and once the fault is
// gone `emco sync` (or, if the operation was never recorded, running it
// again) must end exactly where a clean run ends.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>

#include <nlohmann/json.hpp>

#include "tests/reliability/fleet.hpp"
#include "tests/shell.hpp"

using namespace emco::test;
using nlohmann::json;

namespace {

const std::map<std::string, std::string> k_plain = {{"EMCO_AUTO_RESUME", "0"}};

bool mentions(const std::string& text, std::initializer_list<const char*> parts) {
  for (const char* p : parts)
    if (text.find(p) != std::string::npos) return true;
  return false;
}

// What the workspace holds that the operations change: the DIG's history
// length and state, and which of the extra project's resources exist.
struct Held {
  size_t actions = 0;
  std::string state;
  std::string extra;  // per resource of extra.yaml: "+" present, "-" absent
  bool operator==(const Held&) const = default;
};

Held held(Fleet& f) {
  Held h;
  Exit e = f.emco({"dig", "history", Fleet::dig("dig1"), "-o", "json"}, k_plain);
  REQUIRE(e.code == 0);
  const json history = json::parse(e.out);
  h.actions = history["actions"].size();
  h.state = history["actions"].back().value("state", "");
  for (const char* anchor : {"projects/extra", "projects/extra/composite-apps/ca/v1", "projects/extra/composite-apps/ca/v1/apps/a00"}) {
    Exit g = f.emco({"get", anchor, "-o", "json"}, k_plain);
    h.extra += g.code == 0 ? "+" : "-";
  }
  return h;
}

struct World {
  std::map<std::string, std::set<std::string>> clusters;
  std::string git_tree;
  std::string status;
  bool operator==(const World&) const = default;
};

World world(Fleet& f) {
  json s = f.status("dig1");
  // Absent (deleted by a run whose record was lost, then found gone) counts
  // as Deleted.
  std::map<std::string, int> counts;
  if (s.contains("deployedCounts"))
    for (const auto& [state, n] : s["deployedCounts"].items())
      counts[state == "Absent" ? "Deleted" : state] += n.get<int>();
  std::string status = s.value("deployedStatus", "");
  for (const auto& [state, n] : counts) status += " " + state + "=" + std::to_string(n);
  return {f.snapshot(), f.git_tree(), status};
}

struct Operation {
  std::string name;
  std::vector<std::string> args;
  std::function<void()> prepare;
};

struct Tally {
  long points = 0, failed_runs = 0;
};

// Fails each file write of `op` in turn with `mode`; returns what it tried.
Tally fault_every_write(Fleet& f, const Operation& op, const std::string& mode, bool sticky) {
  op.prepare();
  const Held start = held(f);
  fs::remove(f.root() / "steps");
  Exit counted = f.emco(op.args, f.fault_env(mode, 0, sticky));
  INFO(op.name << " (counting run): " << counted.err);
  REQUIRE(counted.code == 0);
  long steps = 0;
  std::ifstream(f.root() / "steps") >> steps;
  REQUIRE(steps > 0);
  const Held after = held(f);
  const World clean = world(f);
  REQUIRE_FALSE(start == after);
  const size_t recorded_actions = after.actions - start.actions;  // what the operation adds to the history

#ifdef __SANITIZE_ADDRESS__
  // Several times slower under ASan: every 3rd write keeps the sanitizer
  // run within ctest's limit (the plain build fails every one).
  const long stride = 3;
#else
  const long stride = 1;
#endif
  Tally t;
  for (long at = 1; at <= steps; at += stride) {
    CAPTURE(op.name, mode, at, steps);
    op.prepare();
    const Held before = held(f);
    REQUIRE(before.extra == start.extra);
    Exit e = f.emco(op.args, f.fault_env(mode, at, sticky));
    INFO("faulted run: exit " << e.code << "\n" << e.err);
    // Reported, not crashed: an exit status of emco's, never a signal or an
    // internal error; a failure names what the disk said.
    REQUIRE(e.code < 64);
    if (e.code != 0) {
      ++t.failed_runs;
      REQUIRE(mentions(e.err, {"No space left", "disk is full", "disk I/O error", "Input/output error",
                               "I/O error"}));
    }
    REQUIRE(f.integrity() == "ok");
    const Held now = held(f);
    INFO("state now: " << now.state << " (" << now.actions << " actions), before: " << before.state << " ("
                       << before.actions << "), after: " << after.state);
    const bool done = now.actions == before.actions + recorded_actions && now.state == after.state && now.extra == after.extra;
    REQUIRE((now == before || done));
    // Success is claimed only for what was done (a write that failed
    // without consequence, such as a log line, may pass unreported).
    if (e.code == 0) REQUIRE(done);

    // The fault is gone: emco sync finishes what was recorded, and what was
    // not is run again.
    f.run_ok({"sync"});
    if (held(f) == before) f.run_ok(op.args);
    World w = world(f);
    REQUIRE(w.clusters == clean.clusters);
    REQUIRE(w.git_tree == clean.git_tree);
    REQUIRE(w.status == clean.status);
    REQUIRE(f.queued() == 0);
    ++t.points;
  }
  std::cerr << "disk faults: " << op.name << " (" << mode << (sticky ? ", from then on" : ", once") << "): " << steps
            << " writes failed in turn, " << t.failed_runs << " runs reported the fault\n";
  REQUIRE(t.failed_runs > 0);
  return t;
}

std::string placement(const std::string& where) {
  return "---\nversion: emco/v2\nresourceContext:\n  anchor: projects/proj/composite-apps/ca/v1/"
         "deployment-intent-groups/dig1/generic-placement-intents/gpi/app-intents\nmetadata:\n  name: a01-placement\n"
         "spec:\n  app: a01\n  intent:\n    allOf:\n      - clusterProvider: p\n" +
         where;
}

}  // namespace

TEST_CASE("disk full and I/O errors at every write of apply, instantiate, update, terminate",
          "[reliability][disk-faults][sqlite]") {
  Fleet f(2, 2, Shape{.gitops = true});
  const std::string dig = Fleet::dig("dig1");
  {
    std::ofstream(f.root() / "placement-a.yaml") << placement("        clusterLabel: edge\n");
    std::ofstream(f.root() / "placement-b.yaml") << placement("        cluster: c00\n");
    std::ofstream(f.root() / "extra.yaml")
        << "---\nversion: emco/v2\nresourceContext:\n  anchor: projects\nmetadata:\n  name: extra\n"
           "---\nversion: emco/v2\nresourceContext:\n  anchor: projects/extra/composite-apps\nmetadata:\n  name: ca\n"
           "spec:\n  compositeAppVersion: v1\n"
           "---\nversion: emco/v2\nresourceContext:\n  anchor: projects/extra/composite-apps/ca/v1/apps\nmetadata:\n"
           "  name: a00\nfile: charts/a00\n";
  }
  auto running = [&] {
    std::string s = f.state("dig1");
    return s == "Instantiated" || s == "Updated";
  };
  auto to_a = [&] {
    f.run_ok({"apply", "-f", "placement-a.yaml"});
    if (!running()) f.run_ok({"dig", "instantiate", dig});
    f.run_ok({"dig", "update", dig});
  };
  const std::vector<Operation> ops = {
      {"apply", {"apply", "-f", "extra.yaml"},
       [&] {
         Exit g = f.emco({"get", "projects/extra"}, k_plain);
         if (g.code == 0) f.run_ok({"delete", "-f", "extra.yaml"});
       }},
      {"instantiate", {"dig", "instantiate", dig},
       [&] {
         if (running()) f.run_ok({"dig", "terminate", dig});
       }},
      {"update", {"dig", "update", dig},
       [&] {
         to_a();
         f.run_ok({"apply", "-f", "placement-b.yaml"});
       }},
      {"terminate", {"dig", "terminate", dig},
       [&] {
         if (!running()) f.run_ok({"dig", "instantiate", dig});
       }},
  };
  long points = 0;
  for (const auto& op : ops) {
    points += fault_every_write(f, op, "enospc", true).points;
    points += fault_every_write(f, op, "eio", false).points;
  }
  std::cerr << "disk faults: " << points << " fault points covered\n";
}

// Found by the test above on a loaded CI machine (about 1 run in 100): a
// GitOps command starts libgit2's initialisation on a thread of its own, and
// OpenSSL's first initialisation (through libssh2) registers OpenSSL's
// exit-time cleanup from that thread. A command that failed early then exited
// with the cleanup registered after the thread's join, so it ran first and
// freed OpenSSL's locks under the still-initialising thread: SIGSEGV after
// the error was printed. The probe does what such a command does, with the
// thread held just after OpenSSL registered its cleanup (the shim's
// EMCO_FAULT_SLOW_THREAD_ATEXIT_MS) while the process exits; the shim's
// EMCO_FAULT_CHECK_EXIT_ORDER fails the run (status 99) if a library's
// cleanup runs before that thread has ended.
TEST_CASE("a process that exits while libgit2 is still starting ends with its own exit status",
          "[reliability][disk-faults][sqlite]") {
  auto vars = shim_preload_env();
  vars["EMCO_FAULT_SLOW_THREAD_ATEXIT_MS"] = "1500";
  vars["EMCO_FAULT_CHECK_EXIT_ORDER"] = "1";
  std::string env;
  for (const auto& [k, v] : vars) env += k + "='" + v + "' ";
  Ran r = sh(fs::temp_directory_path(), env + "'" + EMCO_WARM_UP_EXIT_PROBE + "' 300");
  INFO(r.out);
  REQUIRE(r.code == 3);
}

TEST_CASE("a read-only workspace: every command says so, exit 6, and nothing changes", "[reliability][disk-faults][sqlite]") {
  Fleet f(2, 1);
  const std::string dig = Fleet::dig("dig1");
  const std::string before = f.status_line("dig1");
  for (const auto& args : std::vector<std::vector<std::string>>{{"dig", "instantiate", dig},
                                                                {"delete", "projects/proj/composite-apps/ca/v1/"
                                                                           "deployment-intent-groups/dig2"}}) {
    Exit e = f.emco(args, f.fault_env("erofs", 1, true));
    INFO(e.err);
    REQUIRE(e.code == 6);
    REQUIRE(mentions(e.err, {"Read-only file system"}));
  }
  // Reading too: a WAL database cannot be opened without writing its -shm
  // file, and emco says why.
  Exit get = f.emco({"dig", "status", dig, "-o", "json"}, f.fault_env("erofs", 1, true));
  INFO(get.err);
  REQUIRE(get.code == 6);
  REQUIRE(mentions(get.err, {"Read-only file system"}));
  REQUIRE(f.integrity() == "ok");
  REQUIRE(f.status_line("dig1") == before);
  REQUIRE(f.state("dig2") == "Approved");
  f.run_ok({"dig", "instantiate", dig});
}
