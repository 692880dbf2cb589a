// Direct-delivery benchmark: push one app to many simulated clusters.
//
//   push_bench serve DIR CLUSTERS [own-ports]
//       runs a simulator fleet (no readiness delay) until SIGTERM; prints
//       the kubeconfig directory once serving. All clusters are behind one
//       endpoint (https://127.0.0.1:PORT/clusters/NAME, as behind a proxy
//       such as Rancher's), so emco's clients share connections; with
//       own-ports each kubeconfig names a port of its cluster's own, as
//       separate API servers do, and each cluster needs its own connection
//   push_bench push KUBECONFIG_DIR APP.yaml [PARALLEL]
//       applies APP.yaml (parsed once) to every cluster in apply order
//       (one KubeTarget per cluster, PARALLEL workers, keep-alive), then
//       verifies each cluster holds every object, then pushes again (every
//       apply a no-op, as an update that changes nothing); prints key=value
//       results (the pushes' times, and apart from them reading the
//       kubeconfigs and the verification)
//   push_bench capacity KUBECONFIG_DIR SECONDS [PARALLEL]
//       the simulator's own capacity for this request mix: PARALLEL workers,
//       each on one cluster's keep-alive connection, re-applying one
//       ConfigMap (a no-op server-side apply) and, separately, GET /version;
//       then the rate of first requests: each worker makes a new KubeTarget
//       (kubeconfig parse; on an own-ports fleet a TLS connection) of the
//       next cluster for every GET /version, the cost a push pays once per
//       cluster before its applies
//
// Results go to stdout as `key=value` lines for run.sh.

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "sim/sim.hpp"
#include "plugins/targets/kube/kube_target.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

struct Cluster {
  std::string name;
  std::string kubeconfig;
};

std::vector<Cluster> load_clusters(const std::string& dir) {
  std::vector<Cluster> clusters;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    clusters.push_back({entry.path().stem().string(), slurp(entry.path().string())});
  }
  std::sort(clusters.begin(), clusters.end(), [](const Cluster& a, const Cluster& b) { return a.name < b.name; });
  return clusters;
}

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs fn(i) for i in [0, n) on `parallel` threads.
template <typename Fn>
void parallel_for(size_t n, size_t parallel, Fn&& fn) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < n;) fn(i);
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min(parallel, n); ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
}

int serve(const std::string& dir, int clusters, bool own_ports) {
  emco::sim::SimStartArgs args;
  args.options.dir = dir;
  args.options.clusters = clusters;
  args.options.own_ports = own_ports;
  args.options.ready_delay_ms = 0;
  return emco::sim::run_sim_start(args);
}

int push(const std::string& kubeconfig_dir, const std::string& app_path, size_t parallel) {
  auto load_start = Clock::now();
  std::vector<Cluster> clusters = load_clusters(kubeconfig_dir);
  double load_s = seconds_since(load_start);
  const std::string app = slurp(app_path);
  const std::vector<json> objects = emco::kube::parse_manifests(app);
  const std::vector<size_t> order = emco::kube::apply_order(objects);
  std::atomic<uint64_t> verified{0};
  std::mutex print_mutex;
  struct Pass {
    double seconds = 0;
    std::atomic<uint64_t> requests{0}, connections{0}, failures{0};
  };
  auto push_all = [&](Pass& pass) {
    auto start = Clock::now();
    parallel_for(clusters.size(), parallel, [&](size_t i) {
      try {
        emco::kube::KubeTarget target(clusters[i].name, clusters[i].kubeconfig, "bench-app");
        // As the sync engine does: objects parsed once, applied in order.
        for (size_t k : order) target.apply(objects[k]);
        auto s = target.client().stats();
        pass.requests += s.requests;
        pass.connections += s.connections;
      } catch (const std::exception& e) {
        ++pass.failures;
        std::lock_guard lock(print_mutex);
        std::fprintf(stderr, "push_bench: %s: %s\n", clusters[i].name.c_str(), e.what());
      }
    });
    pass.seconds = seconds_since(start);
  };
  Pass first;
  push_all(first);
  long push_rss = peak_rss_kb();

  // Verification (timed apart from the push): every object is on every
  // cluster, read back (the push's clients are gone: on new connections).
  auto verify_start = Clock::now();
  parallel_for(clusters.size(), parallel, [&](size_t i) {
    try {
      emco::kube::KubeTarget target(clusters[i].name, clusters[i].kubeconfig, "bench-app");
      size_t present = 0;
      for (const auto& o : objects)
        if (!target.read(emco::kube::ref_of(o)).is_null()) ++present;
      if (present == objects.size()) ++verified;
    } catch (const std::exception& e) {
      std::lock_guard lock(print_mutex);
      std::fprintf(stderr, "push_bench: verify %s: %s\n", clusters[i].name.c_str(), e.what());
    }
  });
  double verify_s = seconds_since(verify_start);
  Pass again;
  push_all(again);

  std::printf("clusters=%zu\nresources_per_cluster=%zu\nparallel=%zu\n", clusters.size(), objects.size(), parallel);
  std::printf("load_seconds=%.3f\nverify_seconds=%.3f\n", load_s, verify_s);
  auto report = [&](const char* prefix, const Pass& pass) {
    std::printf("%sseconds=%.3f\n%srequests=%llu\n%srequests_per_second=%.0f\n%sconnections=%llu\n", prefix, pass.seconds,
                prefix, static_cast<unsigned long long>(pass.requests.load()), prefix,
                static_cast<double>(pass.requests.load()) / pass.seconds, prefix,
                static_cast<unsigned long long>(pass.connections.load()));
  };
  std::printf("clusters_per_second=%.1f\n", static_cast<double>(clusters.size()) / first.seconds);
  report("push_", first);
  report("repush_", again);
  const uint64_t failures = first.failures + again.failures;
  std::printf("failures=%llu\nverified_clusters=%llu\npeak_rss_kb=%ld\n", static_cast<unsigned long long>(failures),
              static_cast<unsigned long long>(verified.load()), push_rss);
  return failures == 0 && verified == clusters.size() ? 0 : 1;
}

int capacity(const std::string& kubeconfig_dir, double seconds, size_t parallel) {
  std::vector<Cluster> clusters = load_clusters(kubeconfig_dir);
  // Half the fleet at most: the connect probe needs clusters no worker holds.
  parallel = std::min(parallel, std::max<size_t>(1, clusters.size() / 2));
  const json cm = {{"apiVersion", "v1"},
                   {"kind", "ConfigMap"},
                   {"metadata", {{"name", "capacity-probe"}}},
                   {"data", {{"k", "v"}}}};
  enum class Probe { apply, version, connect };
  auto measure = [&](Probe probe) {
    std::atomic<uint64_t> done{0};
    std::atomic<size_t> warmed{0};
    std::atomic<bool> go{false}, stop{false};
    Clock::time_point start;
    parallel_for(parallel, parallel, [&](size_t i) {
      size_t visits = 0;  // the connect probe's
      emco::kube::KubeTarget target(clusters[i].name, clusters[i].kubeconfig, "default");
      target.apply(cm);  // warm-up: discovery, connection, the object exists
      // Time only the steady state: start when every worker is warm.
      if (++warmed == parallel) {
        start = Clock::now();
        go = true;
      }
      while (!go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      while (!stop) {
        if (probe == Probe::apply) target.client().apply(cm, "default");
        else if (probe == Probe::version) target.client().server_version(std::chrono::seconds(5));
        else {
          // Another cluster each time, none of them a worker's own: on an
          // own-ports fleet no live client holds a connection to it.
          const size_t others = clusters.size() - parallel;
          const Cluster& c = others > 0 ? clusters[parallel + (i + visits++ * parallel) % others] : clusters[i];
          emco::kube::KubeTarget(c.name, c.kubeconfig, "default").client().server_version(std::chrono::seconds(5));
        }
        ++done;
        if (seconds_since(start) >= seconds) stop = true;
      }
    });
    return static_cast<double>(done.load()) / seconds_since(start);
  };
  double apply_rate = measure(Probe::apply);
  double version_rate = measure(Probe::version);
  double connect_rate = measure(Probe::connect);
  std::printf("capacity_parallel=%zu\ncapacity_apply_per_second=%.0f\ncapacity_version_per_second=%.0f\n"
              "capacity_connect_per_second=%.0f\n",
              parallel, apply_rate, version_rate, connect_rate);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() >= 3 && args[0] == "serve")
      return serve(args[1], std::atoi(args[2].c_str()), args.size() > 3 && args[3] == "own-ports");
    if (args.size() >= 3 && args[0] == "push")
      return push(args[1], args[2], args.size() > 3 ? static_cast<size_t>(std::atoi(args[3].c_str())) : 32);
    if (args.size() >= 3 && args[0] == "capacity")
      return capacity(args[1], std::atof(args[2].c_str()), args.size() > 3 ? static_cast<size_t>(std::atoi(args[3].c_str())) : 32);
  } catch (const emco::Error& e) {
    std::fprintf(stderr, "push_bench: %s\n", e.message().c_str());
    return 1;
  }
  std::fprintf(stderr,
               "usage: push_bench serve DIR CLUSTERS [own-ports] | push KUBECONFIG_DIR APP.yaml [PARALLEL] | "
               "capacity KUBECONFIG_DIR SECONDS [PARALLEL]\n");
  return 64;
}
