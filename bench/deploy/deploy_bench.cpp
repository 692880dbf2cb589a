// Deployment benchmark (issue #6 point 7):
//  1. instantiate A apps (2 ConfigMaps each) onto N simulated clusters, then
//     an update changing one value in one app: requests sent and times;
//  2. `emco dig status` (deployed counts) for a context of N clusters x R
//     resources vs the sqlite3 shell reading the same status rows (counting
//     the clusters with a failed resource: every row's states are read).
//
//  3. (--mode rollout, issue 24) instantiate of A apps onto N clusters all at
//     once vs in 10 waves (a rollout strategy with no minSuccessTime), side
//     by side, --runs times each (terminated in between): medians of the
//     wall time, of the time the gates took, and the rollout's overhead
//     beyond its gates relative to the plain instantiate.
//
// usage: deploy_bench --clusters N --apps A --resources R --work DIR [--parallel P]
//        deploy_bench --mode rollout --clusters N --apps A --work DIR [--parallel P] [--runs R]
// Prints one JSON object with the figures.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <filesystem>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/support/sim_fleet.hpp"
#include "core/appcontext/appcontext.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/lifecycle/rollout.hpp"
#include "core/manifest/batch.hpp"
#include "core/manifest/manifest.hpp"
#include "core/status/status.hpp"
#include "core/store/store.hpp"
#include "sim/sim.hpp"
#include "plugins/builtin.hpp"

using namespace emco;
using nlohmann::json;
using namespace std::chrono;
namespace ac = emco::appcontext;
namespace fs = std::filesystem;

using bench::arg;
using bench::dig_key;
using bench::secs;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::string loadavg() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

int rollout_mode(int argc, char** argv) {
  const int clusters = std::stoi(arg(argc, argv, "clusters", "20"));
  const int apps = std::stoi(arg(argc, argv, "apps", "10"));
  const int parallel = std::stoi(arg(argc, argv, "parallel", "32"));
  const int runs = std::stoi(arg(argc, argv, "runs", "3"));
  const fs::path work = arg(argc, argv, "work", "/tmp/emco-rollout-bench");
  fs::create_directories(work);
  const auto& runtime = plugins::builtin_runtime();
  auto fleet = bench::start_fleet(work, clusters, {"plain", "waves"});
  auto& st = fleet.store;
  manifest::ReadOptions ro;
  manifest::BatchOptions bo;
  bo.runtime = &runtime;
  manifest::run_batch(*st, manifest::Verb::apply,
                      {manifest::parse_text("version: emco/v2\nresourceContext: {anchor: projects/proj/composite-apps/ca/"
                                            "v1/deployment-intent-groups/waves/emco-rollout-strategies}\n"
                                            "metadata: {name: ten}\nspec: {waves: 10, minSuccessTime: 0s}\n",
                                            "strategy", work.string(), ro)},
                      bo);
  lifecycle::OperationOptions o;
  o.runtime = &runtime;
  o.timeout = hours(1);
  o.parallel = parallel;
  o.planner = [&](store::Store&, const resource::Key& key, const std::string& status_ctx, const std::string&) {
    return bench::two_object_plan(key, status_ctx, fleet.names, apps, "1");
  };
  const auto& dig = resource::kind("deploymentIntentGroup");
  std::vector<double> plain, waves, gates;
  bool ok = true;
  const std::string load_before = loadavg();
  for (int i = 0; i < runs; ++i)
    for (const char* which : {"plain", "waves"}) {
      auto t0 = steady_clock::now();
      auto r = lifecycle::run(*st, dig, dig_key(which), "instantiate", json::object(), emco::system_clock(), o);
      auto t1 = steady_clock::now();
      ok = ok && r.status == "Instantiated" && r.delivery == lifecycle::Delivery::done;
      if (std::string(which) == "plain") {
        plain.push_back(secs(t0, t1));
      } else {
        waves.push_back(secs(t0, t1));
        json ro_state = lifecycle::rollout::of_context(*st, r.context);
        double gate = 0;
        for (const auto& w : ro_state["waves"]) gate += w.value("gateMs", 0) / 1000.0;
        gates.push_back(gate);
        ok = ok && ro_state.value("state", "") == "done" && ro_state["waves"].size() == 10;
      }
      auto term = lifecycle::run(*st, dig, dig_key(which), "terminate", json::object(), emco::system_clock(), o);
      ok = ok && term.status == "Terminated";
    }
  const double p = median(plain), w = median(waves), g = median(gates);
  json out = {{"mode", "rollout"},
              {"clusters", clusters},
              {"apps", apps},
              {"objects", apps * 2 * clusters},
              {"runs", runs},
              {"parallel", parallel},
              {"plain_instantiate_seconds", plain},
              {"rollout_instantiate_seconds", waves},
              {"rollout_gate_seconds", gates},
              {"median_plain_seconds", p},
              {"median_rollout_seconds", w},
              {"median_gate_seconds", g},
              {"overhead_beyond_gates", p > 0 ? (w - g - p) / p : 0},
              {"overhead_with_gates", p > 0 ? (w - p) / p : 0},
              {"loadavg_before", load_before},
              {"loadavg_after", loadavg()}};
  std::cout << out.dump(2) << "\n";
  fleet.sim->stop();
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (arg(argc, argv, "mode", "deploy") == "rollout") return rollout_mode(argc, argv);
  const int clusters = std::stoi(arg(argc, argv, "clusters", "20"));
  const int apps = std::stoi(arg(argc, argv, "apps", "10"));
  const int resources = std::stoi(arg(argc, argv, "resources", "100"));
  const int parallel = std::stoi(arg(argc, argv, "parallel", "32"));
  const fs::path work = arg(argc, argv, "work", "/tmp/emco-deploy-bench");
  fs::create_directories(work);
  json out = {{"clusters", clusters}, {"apps", apps}};

  auto fleet = bench::start_fleet(work, clusters, {"dig1", "big"});
  sim::Simulator& sim = *fleet.sim;
  const auto& names = fleet.names;
  auto& st = fleet.store;
  const store::Workspace& ws = fleet.workspace;
  lifecycle::OperationOptions setup;
  setup.runtime = &plugins::builtin_runtime();

  std::string value = "1";
  lifecycle::OperationOptions o = setup;
  o.timeout = hours(1);
  o.parallel = parallel;
  o.planner = [&](store::Store&, const resource::Key& key, const std::string& status_ctx, const std::string&) {
    return bench::two_object_plan(key, status_ctx, names, apps, value);
  };
  auto requests = [&] {
    uint64_t n = 0;
    for (const auto& c : names) n += sim.requests_served(c);
    return n;
  };

  uint64_t r0 = requests();
  auto t0 = steady_clock::now();
  auto inst = lifecycle::run(*st, resource::kind("deploymentIntentGroup"), dig_key("dig1"), "instantiate", json::object(),
                             emco::system_clock(), o);
  auto t1 = steady_clock::now();
  uint64_t r1 = requests();
  value = "2";
  auto upd = lifecycle::run(*st, resource::kind("deploymentIntentGroup"), dig_key("dig1"), "update", json::object(),
                            emco::system_clock(), o);
  auto t2 = steady_clock::now();
  uint64_t r2 = requests();
  out["instantiate"] = {{"status", inst.status}, {"seconds", secs(t0, t1)}, {"requests", r1 - r0},
                        {"objects", apps * 2 * clusters}};
  out["update"] = {{"status", upd.status}, {"seconds", secs(t1, t2)}, {"requests", r2 - r1},
                   {"changed_objects", clusters}, {"fraction_of_instantiate", secs(t1, t2) / secs(t0, t1)}};
  sim.stop();

  // Status of N clusters x R resources: a context saved with every status recorded.
  ac::AppContext big;
  big.id = random_context_id();
  big.owner = {"deploymentIntentGroup", dig_key("big")};
  big.meta["Namespace"] = "default";
  big.created = "2026-01-01T00:00:00.000Z";
  ac::App app;
  app.name = "big";
  std::vector<ac::ContentRef> contents;
  for (int i = 0; i < resources; ++i)
    contents.push_back(big.intern("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm" + std::to_string(i) + "\n"));
  for (const auto& n : names) {
    ac::Cluster cl;
    cl.name = "p+" + n;
    for (int i = 0; i < resources; ++i) cl.resources.push_back({"cm" + std::to_string(i) + "+ConfigMap", contents[static_cast<size_t>(i)]});
    app.clusters.push_back(std::move(cl));
  }
  big.apps.push_back(std::move(app));
  st->write([&] {
    ac::save(*st, big);
    for (const auto& n : names)
      for (int i = 0; i < resources; ++i)
        ac::set_resource_status(*st, big.id, "big", "p+" + n, "cm" + std::to_string(i) + "+ConfigMap",
                                i % 10 == 0 ? "Failed" : "Applied", "", "");
    auto si = json::parse(st->get(dig_key("big"))->state_info);
    si["actions"].push_back({{"state", "Instantiated"}, {"instance", big.id}, {"time", ""}, {"revision", 1}});
    si["statusctxid"] = big.id;
    st->set_state_info(dig_key("big"), si.dump());
  });
  status::Query q;
  q.status = "deployed";
  q.output = "summary";
  auto s0 = steady_clock::now();
  json s = status::dig_status(*st, dig_key("big"), q);
  auto s1 = steady_clock::now();
  q.output = "all";
  json all = status::dig_status(*st, dig_key("big"), q);
  auto s2 = steady_clock::now();
  // One row per (app, cluster) holds its resources' states as one encoded
  // value (schema 9), so the shell cannot group by state; instr() over each
  // row makes it read every row's states, the same bytes the summary decodes.
  std::string sql = "sqlite3 " + ws.database().string() +
                    " \"SELECT COUNT(*) FROM ac_status WHERE ctx = '" + big.id +
                    "' AND instr(resources, CAST('Failed' AS BLOB)) > 0\" > /dev/null";
  auto q0 = steady_clock::now();
  int rc = std::system(sql.c_str());
  auto q1 = steady_clock::now();
  out["status"] = {{"resources", clusters * resources},
                   {"summary_seconds", secs(s0, s1)},
                   {"all_seconds", secs(s1, s2)},
                   {"sqlite3_seconds", secs(q0, q1)},
                   {"sqlite3_rc", rc},
                   {"ratio_summary_to_sqlite3", secs(s0, s1) / secs(q0, q1)},
                   {"counts", s["deployedCounts"]}};
  std::cout << out.dump(2) << "\n";
  bool ok = inst.status == "Instantiated" && upd.status == "Instantiated" && rc == 0;
  return ok ? 0 : 1;
}
