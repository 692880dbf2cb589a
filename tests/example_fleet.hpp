#pragma once
// A test's copy of an example directory, the simulated clusters it deploys
// to, and the emco binary run in the copy with it as the workspace: the
// steps of an example's README as a suite runs them. Suites derive their
// fixture from it and add their own queries. Header-only.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "sim/sim.hpp"
#include "tests/shell.hpp"

namespace emco::test {

// A simulator of `n` clusters named edge1..edgeN whose workloads are ready
// `ready_delay_ms` after they are applied and whose deletes finish at once.
inline sim::SimOptions edge_clusters(int n, int ready_delay_ms = 50) {
  sim::SimOptions o;
  o.clusters = n;
  for (int i = 1; i <= n; ++i) o.names.push_back("edge" + std::to_string(i));
  o.ready_delay_ms = ready_delay_ms;
  o.finalize_delay_ms = 0;
  return o;
}

class ExampleFleet {
public:
  // Copies examples/`example` into a new temporary directory named after
  // `tag` and starts the simulator `options` describe there (in DIR/sim).
  // `environment` goes before the binary on every emco command line
  // ("EMCO_SDS_POLL_MS=100").
  ExampleFleet(const std::string& example, const std::string& tag, sim::SimOptions options,
               const std::string& environment = "")
      : dir(std::filesystem::temp_directory_path() /
            ("emco-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()))) {
    std::filesystem::create_directories(dir);
    std::filesystem::copy(std::filesystem::path(EMCO_SOURCE_DIR) / "examples" / example, dir,
                          std::filesystem::copy_options::recursive);
    emco = "LSAN_OPTIONS=suppressions='" EMCO_SOURCE_DIR "/tests/lsan.supp' EMCO_WORKSPACE='" + dir.string() +
           "' EMCO_AUTO_RESUME=0 " + (environment.empty() ? "" : environment + " ") + EMCO_BINARY_DIR + "/emco";
    options.dir = (dir / "sim").string();
    sim = std::make_unique<sim::Simulator>(options);
    sim->start();
  }
  ~ExampleFleet() {
    sim->stop();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  ExampleFleet(const ExampleFleet&) = delete;
  ExampleFleet& operator=(const ExampleFleet&) = delete;

  // Rewrites the example's values.yaml with its Clusters list naming the
  // simulator's clusters and their kubeconfigs (every other line kept).
  void use_sim_clusters() {
    std::string values;
    {
      std::ifstream in(dir / "values.yaml");
      for (std::string line; std::getline(in, line);)
        if (line.rfind("Clusters:", 0) != 0) values += line + "\n";
    }
    values += "Clusters:\n";
    for (const auto& n : sim->cluster_names()) values += "  - {Name: " + n + ", KubeConfig: " + sim->kubeconfig_path(n) + "}\n";
    std::ofstream(dir / "values.yaml") << values;
  }
  // `emco init` (on `store` when given: `init --store STORE --no-encrypt`),
  // then `emco apply -f FILE -v values.yaml` for each file; REQUIREs each.
  void init_and_apply(const std::vector<std::string>& files, const std::string& store = "") {
    REQUIRE(run(store.empty() ? "init" : "init --store '" + store + "' --no-encrypt").code == 0);
    for (const auto& f : files) {
      auto r = run("apply -f " + f + " -v values.yaml");
      INFO(f << ": " << r.out);
      REQUIRE(r.code == 0);
    }
  }
  // An emco command line in the copy.
  Ran run(const std::string& args) { return sh(dir, emco + " " + args); }

  const std::filesystem::path dir;
  std::string emco;  // the environment and the binary that start every command line
  std::unique_ptr<sim::Simulator> sim;
};

}  // namespace emco::test
