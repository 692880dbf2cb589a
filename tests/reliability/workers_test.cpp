// Distributed delivery (issue 21 "Must show" 3), end to end: several
// `emco sync --worker` processes, each with a workspace directory, HOME and
// TMPDIR of its own (standing in for machines: they share only the
// PostgreSQL database), deliver a DIG's (app, cluster) jobs to an `emco sim`
// fleet. PostgreSQL only: a SQLite workspace is delivered by one process.

#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <iostream>
#include <iterator>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/reliability/fleet.hpp"

using namespace emco::test;
using namespace std::chrono;
using nlohmann::json;

namespace {

const std::map<std::string, std::string> k_no_auto = {{"EMCO_AUTO_RESUME", "0"}};

// A "machine": a directory with its own HOME, TMPDIR and workspace on the
// fleet's database (emco init --store with the same URL).
struct Machine {
  fs::path dir;
  std::map<std::string, std::string> env;
};

Machine machine(Fleet& f, const std::string& name) {
  Machine m;
  m.dir = f.root() / ("machine-" + name);
  fs::create_directories(m.dir / "tmp");
  std::ifstream in(f.root() / ".emco" / "store");
  std::string url((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!url.empty() && (url.back() == '\n' || url.back() == ' ')) url.pop_back();
  REQUIRE(!url.empty());
  m.env = {{"EMCO_AUTO_RESUME", "0"},
           {"HOME", m.dir.string()},
           {"TMPDIR", (m.dir / "tmp").string()},
           {"EMCO_WORKSPACE", m.dir.string()}};
  Exit init = f.emco({"init", m.dir.string(), "--store", url}, m.env);
  INFO(init.err);
  REQUIRE(init.code == 0);
  return m;
}

std::string cluster_name(int c) {
  char name[16];
  std::snprintf(name, sizeof name, "c%02d", c);
  return name;
}

// Every cluster of the fleet answers after `ms` milliseconds (0: at once).
void set_latency(Fleet& f, int ms) {
  emco::sim::Fault fault;
  fault.latency_ms = ms;
  for (int c = 0; c < f.clusters(); ++c) f.sim().set_fault(cluster_name(c), fault);
}

// How often each of the DIG's ConfigMaps was written, per cluster.
std::map<std::string, uint64_t> configmap_writes(Fleet& f, const std::string& cluster) {
  std::map<std::string, uint64_t> out;
  for (const auto& [path, n] : f.sim().writes_served(cluster))
    if (path.find("/configmaps") != std::string::npos) out[path] = n;
  return out;
}

uint64_t all_writes(Fleet& f) {
  uint64_t n = 0;
  for (int c = 0; c < f.clusters(); ++c)
    for (const auto& [path, k] : configmap_writes(f, cluster_name(c))) n += k;
  return n;
}

json worker_report(const Exit& e) {
  INFO(e.err);
  REQUIRE(e.code == 0);
  return json::parse(e.out);
}

bool delivered_everywhere(Fleet& f, const std::string& release) {
  for (int c = 0; c < f.clusters(); ++c)
    if (f.held(cluster_name(c)).size() != static_cast<size_t>(f.apps())) return false;
  (void)release;
  return true;
}

}  // namespace

TEST_CASE("workers on three machines deliver every (app, cluster) job exactly once, spread over them",
          "[postgresql][workers]") {
  Fleet f(6, 10);
  // Clusters slow enough that the run outlasts the workers' start-up.
  set_latency(f, 200);
  std::vector<Machine> machines;
  for (const char* n : {"a", "b", "c"}) machines.push_back(machine(f, n));
  // Queued, not delivered: the workers do all of it.
  Exit queued = f.emco({"dig", "instantiate", Fleet::dig("dig1"), "--no-wait"}, k_no_auto);
  INFO(queued.err);
  REQUIRE(queued.code == 8);  // queued, pending
  std::vector<Proc> workers;
  for (auto& m : machines)
    workers.push_back(f.start({"sync", "--worker", "--until-idle", "--parallel", "2", "-o", "json"}, m.env));
  size_t total = 0;
  for (auto& w : workers) {
    Exit e;
    bool ended = w.wait_until(steady_clock::now() + seconds(120), e);
    if (!ended) w.kill9();
    REQUIRE(ended);
    json r = worker_report(e);
    std::cerr << "workers: " << r["worker"].get<std::string>() << " ran " << r["jobs"] << " jobs, drove "
              << r["driven"].size() << " contexts, " << r["roundTrips"] << " round trips\n";
    CHECK(r["jobs"].get<size_t>() > 0);  // spread: every worker took some
    CHECK(r["failed"].get<size_t>() == 0);
    total += r["jobs"].get<size_t>();
  }
  CHECK(total == static_cast<size_t>(f.apps() * f.clusters()));
  // Each (app, cluster) applied exactly once: one write of each ConfigMap.
  for (int c = 0; c < f.clusters(); ++c) {
    auto writes = configmap_writes(f, cluster_name(c));
    CHECK(writes.size() == static_cast<size_t>(f.apps()));
    for (const auto& [path, n] : writes) {
      INFO(cluster_name(c) << " " << path);
      CHECK(n == 1);
    }
  }
  CHECK(delivered_everywhere(f, "dig1"));
  CHECK(f.status_line("dig1") == "Instantiated Applied=" + std::to_string(f.apps() * f.clusters()));
  // The same status whichever machine asks.
  Exit here = f.emco({"dig", "status", Fleet::dig("dig1"), "-o", "json"}, k_no_auto);
  Exit there = f.emco({"dig", "status", Fleet::dig("dig1"), "-o", "json"}, machines[1].env);
  REQUIRE(here.code == 0);
  REQUIRE(there.code == 0);
  CHECK(here.out == there.out);
  CHECK(f.queued() == 0);
}

TEST_CASE("the emco that instantiates is a worker too: one machine alone finishes", "[postgresql][workers]") {
  Fleet f(3, 4);
  Exit e = f.emco({"dig", "instantiate", Fleet::dig("dig1")}, k_no_auto);
  INFO(e.err);
  REQUIRE(e.code == 0);
  CHECK(delivered_everywhere(f, "dig1"));
  CHECK(f.status_line("dig1") == "Instantiated Applied=12");
}

TEST_CASE("a worker killed with kill -9 loses its lease and another finishes its jobs", "[postgresql][workers]") {
  Fleet f(4, 10);
  // Slow clusters: the first worker is still in the middle of its jobs
  // when it dies.
  set_latency(f, 150);
  Machine a = machine(f, "a"), b = machine(f, "b");
  Exit queued = f.emco({"dig", "instantiate", Fleet::dig("dig1"), "--no-wait"}, k_no_auto);
  REQUIRE(queued.code == 8);
  Proc victim = f.start({"sync", "--worker", "--parallel", "4"}, a.env);
  REQUIRE(eventually([&] { return all_writes(f) >= 4; }, seconds(60)));
  victim.kill9();
  victim.wait();
  const uint64_t before = all_writes(f);
  INFO("writes when the first worker died: " << before);
  CHECK(before < static_cast<uint64_t>(f.apps() * f.clusters()));
  set_latency(f, 0);
  auto start = steady_clock::now();
  Proc rescuer = f.start({"sync", "--worker", "--until-idle", "-o", "json"}, b.env);
  Exit e;
  bool ended = rescuer.wait_until(start + seconds(120), e);
  if (!ended) rescuer.kill9();
  REQUIRE(ended);
  json r = worker_report(e);
  std::cerr << "workers: after kill -9 the second worker finished in "
            << duration_cast<milliseconds>(steady_clock::now() - start).count() << " ms, " << r["jobs"]
            << " jobs\n";
  CHECK(r["jobs"].get<size_t>() > 0);
  CHECK(delivered_everywhere(f, "dig1"));
  CHECK(f.status_line("dig1") == "Instantiated Applied=" + std::to_string(f.apps() * f.clusters()));
  CHECK(f.queued() == 0);
}

TEST_CASE("emco dig stop reaches every worker within a second", "[postgresql][workers]") {
  Fleet f(6, 10);
  set_latency(f, 200);
  std::vector<Machine> machines;
  for (const char* n : {"a", "b", "c"}) machines.push_back(machine(f, n));
  Exit queued = f.emco({"dig", "instantiate", Fleet::dig("dig1"), "--no-wait"}, k_no_auto);
  REQUIRE(queued.code == 8);
  std::vector<Proc> workers;
  for (auto& m : machines)
    workers.push_back(f.start({"sync", "--worker", "--until-idle", "--parallel", "2", "-o", "json"}, m.env));
  REQUIRE(eventually([&] { return all_writes(f) >= 3; }, seconds(60)));
  Exit stop = f.emco({"dig", "stop", Fleet::dig("dig1")}, k_no_auto);
  const auto stopped_at = steady_clock::now();
  INFO(stop.err);
  REQUIRE(stop.code == 0);
  // Within a second every worker has seen the flag: nothing is written
  // after that (a request already sent may still land meanwhile). Each
  // worker then lets go of the context's jobs and, with nothing left,
  // exits: stop-to-exit is measured for each.
  std::vector<bool> exited(workers.size(), false);
  std::optional<uint64_t> at_one_second;
  milliseconds slowest{0};
  while (std::find(exited.begin(), exited.end(), false) != exited.end() &&
         steady_clock::now() < stopped_at + seconds(5)) {
    for (size_t i = 0; i < workers.size(); ++i) {
      Exit e;
      if (exited[i] || !workers[i].wait_until(steady_clock::now(), e)) continue;
      exited[i] = true;
      slowest = std::max(slowest, duration_cast<milliseconds>(steady_clock::now() - stopped_at));
      worker_report(e);
    }
    if (!at_one_second && steady_clock::now() >= stopped_at + seconds(1)) at_one_second = all_writes(f);
    std::this_thread::sleep_for(milliseconds(20));
  }
  for (size_t i = 0; i < workers.size(); ++i)
    if (!exited[i]) workers[i].kill9();
  // Stop-to-exit under 5 s, on a loaded 2-core machine.
  REQUIRE(std::find(exited.begin(), exited.end(), false) == exited.end());
  std::cerr << "workers: every worker exited within " << slowest.count() << " ms of 'emco dig stop'\n";
  if (!at_one_second) {
    std::this_thread::sleep_for(stopped_at + seconds(1) - steady_clock::now());
    at_one_second = all_writes(f);
  }
  std::this_thread::sleep_for(milliseconds(500));
  CHECK(all_writes(f) == *at_one_second);
  CHECK(all_writes(f) < static_cast<uint64_t>(f.apps() * f.clusters()));
  CHECK(f.state("dig1") == "InstantiateStopped");
  CHECK(f.queued() == 0);
}

TEST_CASE("emco sync --worker on a SQLite workspace says it needs PostgreSQL", "[sqlite][workers]") {
  Fleet f(1, 1);
  Exit e = f.emco({"sync", "--worker"}, k_no_auto);
  CHECK(e.code == 64);
  CHECK(e.err.find("PostgreSQL") != std::string::npos);
}
