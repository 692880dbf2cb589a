// Issue #6 point 6, end to end with the built emco binary on an `emco sim`
// fleet: (a) SIGKILL at random points of instantiate and terminate, then
// `emco sync`; (b) 20% injected errors and a flapping cluster; (c) `emco dig
// stop` from another process during a retry; (d) PRAGMA integrity_check after
// each; (e) two processes on different DIGs of one workspace at once; and the
// automatic resume of an interrupted run by the next emco command.

#include <catch2/catch.hpp>

#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <iostream>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/reliability/fleet.hpp"

using namespace emco::test;
using namespace std::chrono;
using nlohmann::json;

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

TEST_CASE("kill -9 at random points of instantiate and terminate, then emco sync finishes the work", "[reliability]") {
  const int clusters = env_int("EMCO_RELIABILITY_CLUSTERS", 50);
  const int apps = env_int("EMCO_RELIABILITY_APPS", 20);
  // Fewer trials where processes are slow (ASan, CI on PostgreSQL).
  const int trials = effort("EMCO_RELIABILITY_TRIALS", 20, 4);
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
      // After a kill during terminate, objects the killed process deleted
      // without recording it are Absent when emco sync deletes them again.
      if (inst) {
        REQUIRE(f.status_line("dig1") == applied_line(f, "Instantiated"));
      } else {
        json counts = f.status("dig1").value("deployedCounts", json::object());
        CAPTURE(counts.dump());
        REQUIRE(f.state("dig1") == "Terminated");
        REQUIRE(counts.value("Deleted", 0) + counts.value("Absent", 0) == apps * clusters);
        REQUIRE(counts.size() == static_cast<size_t>(counts.contains("Deleted") + counts.contains("Absent")));
      }
      REQUIRE(f.queued() == 0);
    }
  }
  std::cerr << "reliability: " << killed << " of " << 2 * trials << " runs killed mid-operation\n";
  REQUIRE(f.integrity() == "ok");
}

namespace {

// `emco sim fault ARGS...` against the fleet's simulator, then waits until the
// simulator has read it (it re-reads faults.json within half a second).
void fault(Fleet& f, const std::vector<std::string>& args, const std::string& probe_cluster,
           bool (*applied)(const emco::sim::Fault&)) {
  std::vector<std::string> a = {"sim", "fault", "--dir", (f.root() / "sim").string()};
  a.insert(a.end(), args.begin(), args.end());
  Exit e = f.emco(a);
  INFO(e.err);
  REQUIRE(e.code == 0);
  REQUIRE(eventually([&] { return applied(f.sim().fault(probe_cluster)); }, seconds(10)));
}

bool refusing(const emco::sim::Fault& x) { return x.refuse; }
bool healthy(const emco::sim::Fault& x) { return x == emco::sim::Fault{}; }

// Status reports a cluster being retried.
bool retrying(Fleet& f, const std::string& dig) { return f.status_line(dig).find("Retrying=") != std::string::npos; }

}  // namespace

TEST_CASE("20% injected errors and a flapping cluster: instantiate converges with nothing lost", "[reliability]") {
  Fleet f(10, 5);
  fault(f, {"*", "--error-rate", "0.2", "--error-code", "500"}, "c00",
        [](const emco::sim::Fault& x) { return x.error_rate > 0; });
  fault(f, {"c09", "--error-rate", "0.2", "--error-code", "503", "--flap-period-ms", "600", "--flap-down-ms", "300"},
        "c09", [](const emco::sim::Fault& x) { return x.flap_period_ms > 0; });
  Exit e = f.emco({"dig", "instantiate", Fleet::dig("dig2")}, k_no_auto);
  INFO(e.err);
  REQUIRE(e.code == 0);
  fault(f, {"*", "--clear"}, "c09", healthy);
  auto want = everywhere(f, full(f, "dig2"));
  auto held = f.snapshot();
  INFO("difference: " << difference(held, want));
  REQUIRE(held == want);
  REQUIRE(f.status_line("dig2") == applied_line(f, "Instantiated"));
  REQUIRE(f.integrity() == "ok");
}

TEST_CASE("emco dig stop from another process ends a retrying instantiate at once", "[reliability]") {
  Fleet f(4, 2);
  fault(f, {"*", "--refuse"}, "c00", refusing);
  Proc a = f.start({"dig", "instantiate", Fleet::dig("dig1"), "--timeout", "5m"}, k_no_auto);
  REQUIRE(eventually([&] { return retrying(f, "dig1"); }, seconds(60)));
  Exit stop = f.emco({"dig", "stop", Fleet::dig("dig1")}, k_no_auto);
  auto stopped_at = steady_clock::now();
  INFO(stop.err);
  REQUIRE(stop.code == 0);
  // The engine checks the stop flag every 200 ms and cancels its backoff
  // waits: the issue asks for 1 s; the bound here is looser for loaded CI.
  Exit end;
  bool ended = a.wait_until(stopped_at + seconds(5), end);
  if (!ended) a.kill9();
  REQUIRE(ended);
  std::cerr << "reliability: instantiate ended "
            << duration_cast<milliseconds>(steady_clock::now() - stopped_at).count() << " ms after 'emco dig stop'\n";
  INFO(end.err);
  CHECK(end.code == 1);
  CHECK(f.state("dig1") == "InstantiateStopped");
  CHECK(f.status_line("dig1").rfind("InstantiateFailed", 0) == 0);
  CHECK(f.queued() == 0);
  REQUIRE(f.integrity() == "ok");
}

TEST_CASE("a cluster that accepts and never answers does not hold emco past --timeout", "[reliability][hostile]") {
  Fleet f(2, 1);
  emco::sim::Fault silent;
  silent.latency_ms = 120000;  // every request to c01 waits two minutes before its answer
  f.sim().set_fault("c01", silent);
  auto start = steady_clock::now();
  Proc a = f.start({"dig", "instantiate", Fleet::dig("dig1"), "--timeout", "3s"}, k_no_auto);
  Exit end;
  // The bound is loose for loaded CI; what matters is that it is not the
  // two minutes the cluster would take, nor the 30 s request time-out.
  bool ended = a.wait_until(start + seconds(20), end);
  if (!ended) a.kill9();
  REQUIRE(ended);
  std::cerr << "reliability: instantiate with --timeout 3s against a silent cluster ended after "
            << duration_cast<milliseconds>(steady_clock::now() - start).count() << " ms\n";
  INFO(end.err);
  CHECK(end.code == 8);
  CHECK(end.err.find("emco sync") != std::string::npos);
  // The other cluster got its objects; the silent one's work stays queued.
  CHECK(f.held("c00") == std::set<std::string>{"dig1-a00=v1"});
  CHECK(f.queued() == 1);
  f.sim().set_fault("c01", {});
  Exit sync = f.emco({"sync"}, k_no_auto);
  INFO(sync.err);
  CHECK(sync.code == 0);
  CHECK(f.held("c01") == std::set<std::string>{"dig1-a00=v1"});
  REQUIRE(f.integrity() == "ok");
}

TEST_CASE("two emco processes on different DIGs of one workspace both succeed", "[reliability]") {
  Fleet f(20, 5);
  const auto both = [&] {
    auto want = everywhere(f, full(f, "dig1"));
    for (auto& [c, objects] : want)
      for (const auto& o : full(f, "dig2")) objects.insert(o);
    return want;
  }();
  Proc one = f.start({"dig", "instantiate", Fleet::dig("dig1")}, k_no_auto);
  Proc two = f.start({"dig", "instantiate", Fleet::dig("dig2")}, k_no_auto);
  Exit e1 = one.wait(), e2 = two.wait();
  INFO(e1.err << e2.err);
  REQUIRE(e1.code == 0);
  REQUIRE(e2.code == 0);
  REQUIRE(f.snapshot() == both);
  REQUIRE(f.status_line("dig1") == applied_line(f, "Instantiated"));
  REQUIRE(f.status_line("dig2") == applied_line(f, "Instantiated"));

  // Terminating one while the other is re-read and terminated too.
  Proc t1 = f.start({"dig", "terminate", Fleet::dig("dig1")}, k_no_auto);
  Proc t2 = f.start({"dig", "terminate", Fleet::dig("dig2")}, k_no_auto);
  Exit s = f.emco({"dig", "status", Fleet::dig("dig1"), "-o", "json"}, k_no_auto);
  Exit x1 = t1.wait(), x2 = t2.wait();
  INFO(x1.err << x2.err << s.err);
  REQUIRE(x1.code == 0);
  REQUIRE(x2.code == 0);
  REQUIRE(s.code == 0);
  REQUIRE(f.snapshot() == everywhere(f, {}));
  REQUIRE(f.integrity() == "ok");
}

TEST_CASE("work a killed emco left queued resumes in the background with the next emco command", "[reliability]") {
  Fleet f(6, 3);
  fault(f, {"*", "--refuse"}, "c00", refusing);
  Proc a = f.start({"dig", "instantiate", Fleet::dig("dig1")}, k_no_auto);
  REQUIRE(eventually([&] { return retrying(f, "dig1"); }, seconds(60)));
  a.kill9();
  REQUIRE(a.wait().code == 128 + 9);
  fault(f, {"*", "--clear"}, "c00", healthy);
  REQUIRE(f.snapshot() != everywhere(f, full(f, "dig1")));

  // Any command that opens the workspace returns at once and leaves an
  // `emco sync` behind, one per workspace.
  Exit list = f.emco({"dig", "list"});
  INFO(list.err);
  REQUIRE(list.code == 0);
  REQUIRE(list.err.find("in the background") != std::string::npos);
  Exit second = f.emco({"cluster", "list"});
  CHECK(second.err.find("in the background") == std::string::npos);

  bool delivered = eventually([&] { return f.snapshot() == everywhere(f, full(f, "dig1")); }, seconds(60));
  INFO("sync.log: " << f.emco({"status"}, k_no_auto).out << [&] {
    std::ifstream in(f.root() / ".emco" / "sync.log");
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }());
  REQUIRE(delivered);
  REQUIRE(eventually([&] { return f.queued() == 0; }, seconds(30)));
  REQUIRE(f.status_line("dig1") == applied_line(f, "Instantiated"));
  // The background process exits once the queue is empty.
  auto at = list.err.find("(pid ");
  REQUIRE(at != std::string::npos);
  long pid = std::atol(list.err.c_str() + at + 5);
  REQUIRE(eventually([&] { return ::kill(static_cast<pid_t>(pid), 0) != 0; }, seconds(30)));
  REQUIRE(f.integrity() == "ok");
}

TEST_CASE("deploy status end to end: Pending while queued, then Applied, then Deleted", "[reliability][status]") {
  Fleet f(2, 2);
  auto deployed = [&](const std::string& cluster, const std::string& app) {
    Exit e = f.emco({"dig", "status", Fleet::dig("dig1"), "-o", "json", "--cluster", "p+" + cluster, "--app", app}, k_no_auto);
    INFO(e.err);
    REQUIRE(e.code == 0);
    json s = json::parse(e.out);
    return s["apps"][0]["clusters"][0]["resources"][0].value("deployedStatus", "");
  };
  // Queued and not attempted: Pending.
  Exit queued = f.emco({"dig", "instantiate", Fleet::dig("dig1"), "--no-wait"}, k_no_auto);
  INFO(queued.err);
  REQUIRE(queued.code == 8);
  CHECK(deployed("c00", "a00") == "Pending");
  CHECK(f.status("dig1")["deployedCounts"] == json{{"Pending", 4}});
  Exit sync = f.emco({"sync"}, k_no_auto);
  INFO(sync.err);
  REQUIRE(sync.code == 0);
  CHECK(deployed("c01", "a01") == "Applied");
  CHECK(f.status("dig1")["deployedCounts"] == json{{"Applied", 4}});
  Exit term = f.emco({"dig", "terminate", Fleet::dig("dig1")}, k_no_auto);
  INFO(term.err);
  REQUIRE(term.code == 0);
  CHECK(deployed("c00", "a00") == "Deleted");
  CHECK(f.status("dig1")["deployedCounts"] == json{{"Deleted", 4}});
  REQUIRE(f.integrity() == "ok");
}

namespace {

// One resource's deployed status and message, from `emco dig status -o json`.
std::pair<std::string, std::string> resource_status(Fleet& f, const std::string& dig, const std::string& cluster,
                                                    const std::string& app, const std::string& name) {
  Exit e = f.emco({"dig", "status", Fleet::dig(dig), "-o", "json", "--cluster", "p+" + cluster, "--app", app,
                   "--resource", name},
                  k_no_auto);
  INFO(e.err);
  REQUIRE(e.code == 0);
  const json s = json::parse(e.out);
  const json& r = s["apps"][0]["clusters"][0]["resources"][0];
  return {r.value("deployedStatus", ""), r.value("message", "")};
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("status after a partly failed instantiate (Applied, Failed with the answer, Skipped) and its terminate (Deleted, Absent)",
          "[reliability][status]") {
  Fleet f(2, 2, Shape{.refused_object = true});
  std::ofstream(f.root() / "dependency.yaml")
      << "version: emco/v2\nresourceContext:\n  anchor: projects/proj/composite-apps/ca/v1/apps/a01/dependency\n"
         "metadata:\n  name: a01-needs-a00\nspec:\n  app: a00\n  opStatus: Deployed\n  wait: 0\n";
  Exit dep = f.emco({"apply", "-f", "dependency.yaml"}, k_no_auto);
  INFO(dep.err);
  REQUIRE(dep.code == 0);

  // a00: its ConfigMap applied, its Widget refused (the cluster does not
  // serve the kind); a01 depends on a00 and is not attempted.
  Exit inst = f.emco({"dig", "instantiate", Fleet::dig("dig1")}, k_no_auto);
  INFO(inst.out << inst.err);
  CHECK(inst.code == 1);
  CHECK(has(inst.out, "(InstantiateFailed: 2 Applied, 2 Failed, 2 Skipped)"));
  CHECK(resource_status(f, "dig1", "c00", "a00", "dig1-a00").first == "Applied");
  auto [failed, answer] = resource_status(f, "dig1", "c01", "a00", "dig1-widget");
  CHECK(failed == "Failed");
  CHECK(has(answer, "cluster 'p+c01' does not serve kind 'Widget' in 'example.com/v1'"));
  auto [skipped, why] = resource_status(f, "dig1", "c00", "a01", "dig1-a01");
  CHECK(skipped == "Skipped");
  CHECK(has(why, "a00"));
  CHECK(f.queued() == 0);

  // Terminate deletes what was applied and finds the rest was never there:
  // nothing failed.
  Exit term = f.emco({"dig", "terminate", Fleet::dig("dig1")}, k_no_auto);
  INFO(term.out << term.err);
  CHECK(term.code == 0);
  CHECK(has(term.out, "(Terminated: 4 Absent, 2 Deleted)"));
  CHECK(f.status("dig1")["deployedCounts"] == json{{"Deleted", 2}, {"Absent", 4}});
  CHECK(resource_status(f, "dig1", "c00", "a00", "dig1-widget").first == "Absent");
  CHECK(resource_status(f, "dig1", "c01", "a01", "dig1-a01").first == "Absent");
  REQUIRE(f.integrity() == "ok");
}

TEST_CASE("status of an instantiate stopped while a cluster is down: Retrying, then NotCreated and nothing queued",
          "[reliability][status]") {
  Fleet f(2, 1);
  fault(f, {"c01", "--refuse"}, "c01", refusing);
  // The deadline passes while c01 refuses: its resource stays queued.
  Exit inst = f.emco({"dig", "instantiate", Fleet::dig("dig1"), "--timeout", "2s"}, k_no_auto);
  INFO(inst.out << inst.err);
  CHECK(inst.code == 8);
  CHECK(resource_status(f, "dig1", "c00", "a00", "dig1-a00").first == "Applied");
  auto [retrying_state, message] = resource_status(f, "dig1", "c01", "a00", "dig1-a00");
  CHECK(retrying_state == "Retrying");
  CHECK_FALSE(message.empty());
  CHECK(f.queued() == 1);
  // Stopped: what was never attempted is NotCreated, and nothing is queued.
  Exit stop = f.emco({"dig", "stop", Fleet::dig("dig1")}, k_no_auto);
  INFO(stop.err);
  REQUIRE(stop.code == 0);
  Exit sync = f.emco({"sync"}, k_no_auto);
  INFO(sync.err);
  CHECK(sync.code == 0);
  CHECK(resource_status(f, "dig1", "c01", "a00", "dig1-a00").first == "NotCreated");
  CHECK(f.queued() == 0);
  REQUIRE(f.integrity() == "ok");
}
