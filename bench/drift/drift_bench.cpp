// Drift benchmark (issue 24, item 4): A apps (a ConfigMap and a Service
// each) delivered to N simulated clusters; then, in one process, the status
// read-back (status::dig_status at output=detail: every object read back,
// one cluster after another, as `emco dig status -o detail` does) and the
// drift check (lifecycle::drift::check: every object read back and compared,
// --parallel clusters at once, as `emco dig diff --live` does), with the
// requests each sent. Both run twice, alternating, on the same warm
// connections; the second pair gives the ratio (goal: drift <= 2x the
// read-back). Then one object per cluster is deleted behind emco's back and
// the drift check must find exactly those.
//
// usage: drift_bench --clusters N --apps A --work DIR [--parallel P]
// Prints one JSON object with the figures; exit 1 when a goal is missed.

#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/support/sim_fleet.hpp"
#include "core/appcontext/appcontext.hpp"
#include "core/lifecycle/drift.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/manifest/batch.hpp"
#include "core/manifest/manifest.hpp"
#include "core/status/status.hpp"
#include "core/store/store.hpp"
#include "plugins/builtin.hpp"
#include "sim/sim.hpp"

using namespace emco;
using nlohmann::json;
using namespace std::chrono;
namespace fs = std::filesystem;

using bench::arg;
using bench::secs;

namespace {

const resource::Key& dig_key() {
  static const resource::Key k = bench::dig_key("dig1");
  return k;
}

}  // namespace

int main(int argc, char** argv) {
  const int clusters = std::stoi(arg(argc, argv, "clusters", "20"));
  const int apps = std::stoi(arg(argc, argv, "apps", "10"));
  const int parallel = std::stoi(arg(argc, argv, "parallel", "16"));
  const fs::path work = arg(argc, argv, "work", "/tmp/emco-drift-bench");
  fs::create_directories(work);
  json out = {{"clusters", clusters}, {"apps", apps}, {"parallel", parallel}};

  auto fleet = bench::start_fleet(work, clusters, {"dig1"});
  sim::Simulator& sim = *fleet.sim;
  const auto& names = fleet.names;
  auto& st = fleet.store;
  const lifecycle::Runtime& runtime = plugins::builtin_runtime();
  lifecycle::OperationOptions o;
  o.runtime = &runtime;
  o.timeout = hours(1);
  o.parallel = 64;
  o.planner = [&](store::Store&, const resource::Key& key, const std::string& status_ctx, const std::string&) {
    return bench::two_object_plan(key, status_ctx, names, apps, "1");
  };
  auto requests = [&] {
    uint64_t n = 0;
    for (const auto& c : names) n += sim.requests_served(c);
    return n;
  };
  auto t0 = steady_clock::now();
  auto inst = lifecycle::run(*st, resource::kind("deploymentIntentGroup"), dig_key(), "instantiate", json::object(),
                             emco::system_clock(), o);
  out["instantiate"] = {{"status", inst.status}, {"seconds", secs(t0, steady_clock::now())}};

  status::Query q;
  q.status = "deployed";
  q.output = "detail";
  auto live = lifecycle::live_targets(*st, &runtime);
  lifecycle::drift::Options d;
  d.parallel = parallel;
  lifecycle::drift::Options d1 = d;
  d1.parallel = 1;
  json runs = json::array();
  double status_s = 0, drift_s = 0, drift1_s = 0;
  size_t compared = 0;
  bool clean = true;
  for (int round = 0; round < 2; ++round) {
    uint64_t r0 = requests();
    auto a = steady_clock::now();
    json s = status::dig_status(*st, dig_key(), q, live);
    auto b = steady_clock::now();
    uint64_t r1 = requests();
    auto report = lifecycle::drift::check(*st, runtime, dig_key(), d);
    auto c = steady_clock::now();
    uint64_t r2 = requests();
    auto report1 = lifecycle::drift::check(*st, runtime, dig_key(), d1);
    auto e = steady_clock::now();
    compared = 0;
    for (const auto& cr : report.clusters) compared += cr.objects;
    clean = clean && !report.drift() && !report.unreachable() && !report1.drift();
    status_s = secs(a, b);
    drift_s = secs(b, c);
    drift1_s = secs(c, e);
    runs.push_back({{"status_detail_s", status_s}, {"status_requests", r1 - r0}, {"drift_s", drift_s},
                    {"drift_requests", r2 - r1}, {"drift_parallel_1_s", drift1_s}});
  }
  out["rounds"] = runs;
  out["objects"] = compared;
  out["ratio"] = drift_s / status_s;
  out["ratio_parallel_1"] = drift1_s / status_s;

  // One object per cluster deleted behind emco's back: the check finds
  // exactly those.
  for (const auto& n : names)
    live("p+" + n, "default")->remove("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app0-config\n");
  auto f0 = steady_clock::now();
  auto drifted = lifecycle::drift::check(*st, runtime, dig_key(), d);
  out["drifted"] = {{"objects", drifted.objects.size()}, {"seconds", secs(f0, steady_clock::now())}};
  bool found = drifted.objects.size() == names.size();
  for (const auto& obj : drifted.objects)
    found = found && obj.kind == lifecycle::drift::Kind::deleted && obj.resource == "app0-config+ConfigMap";
  out["drift_found_none_when_clean"] = clean;
  bool ok = inst.status == "Instantiated" && clean && found && compared == static_cast<size_t>(clusters * apps * 2) &&
            drift_s <= 2 * status_s;
  out["ok"] = ok;
  std::cout << out.dump(2) << std::endl;
  sim.stop();
  return ok ? 0 : 1;
}
