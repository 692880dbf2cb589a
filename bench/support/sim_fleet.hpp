#pragma once
// What the benchmarks that deploy on simulated clusters share (bench/deploy,
// bench/drift): command-line arguments, timing, the workspace's setup batch
// and a synthetic plan that skips Helm (what they measure is delivery).

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/appcontext/appcontext.hpp"
#include "core/resource/kinds.hpp"
#include "core/store/store.hpp"
#include "sim/sim.hpp"

namespace emco::bench {

double secs(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b);
// The value after "--NAME" in argv, `fallback` when absent.
std::string arg(int argc, char** argv, const std::string& name, const std::string& fallback);
// DIG `name` of composite app proj/ca/v1.
resource::Key dig_key(const std::string& name);
// A batch (emco/v2 documents) for: provider p with every simulated cluster,
// project proj, level-0 logical cloud lc on the first cluster, composite app
// ca v1 with profile prof, and DIGs `digs` of it in lc.
std::string setup_yaml(const std::vector<std::string>& clusters, const sim::Simulator& sim,
                       const std::vector<std::string>& digs);
// A plan of DIG `key` as an OperationOptions::planner returns it: `apps` apps,
// each a ConfigMap (data.replicas: `first_value` in app0, "1" in the others)
// and a Service labelled as emco labels them, on every cluster of `clusters`
// (provider p).
appcontext::AppContext two_object_plan(const resource::Key& key, const std::string& status_ctx,
                                       const std::vector<std::string>& clusters, int apps,
                                       const std::string& first_value);

// A workspace over simulated clusters, set up by start_fleet.
struct SimFleet {
  std::unique_ptr<sim::Simulator> sim;
  std::vector<std::string> names;  // the clusters (provider p)
  store::Workspace workspace;
  std::unique_ptr<store::Store> store;
};
// Starts `clusters` simulated clusters under WORK/sim, makes a workspace at
// WORK/ws with setup_yaml(digs), instantiates the logical cloud lc and
// approves the DIGs (with the built-in plugins).
SimFleet start_fleet(const std::filesystem::path& work, int clusters, const std::vector<std::string>& digs);

}  // namespace emco::bench
