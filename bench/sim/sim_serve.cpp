// A standalone simulator for the benchmark (and for poking at by hand):
//   sim_serve DIR CLUSTERS [READY_DELAY_MS] [token|cert]
// Runs until SIGTERM/SIGINT; prints the kubeconfig directory once serving.

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "core/util/error.hpp"
#include "sim/sim.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: sim_serve DIR CLUSTERS [READY_DELAY_MS] [token|cert]\n");
    return 64;
  }
  emco::sim::SimStartArgs args;
  args.options.dir = argv[1];
  args.options.clusters = std::atoi(argv[2]);
  args.options.ready_delay_ms = argc > 3 ? std::atoi(argv[3]) : 0;
  if (argc > 4 && std::string(argv[4]) == "cert") args.options.auth = emco::sim::AuthMode::client_cert;
  try {
    return emco::sim::run_sim_start(args);
  } catch (const emco::Error& e) {
    std::fprintf(stderr, "sim_serve: %s\n", e.message().c_str());
    return 1;
  }
}
