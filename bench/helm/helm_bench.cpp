// Helm rendering benchmark: every chart x variant of a corpus rendered by emco in this one
// process, against the sum of `helm template` process runs (when --helm is given).
//
//   helm_bench CORPUS_DIR [--helm PATH] [--reps N] [CHART...]
//
// Per render: the best of N runs for emco (in process, chart loading included) and for
// helm (the whole process, as MANIFEST.md measured), both as wall time and as CPU time
// (user+sys; the fair measure on a loaded machine). Prints one row per chart (CPU), the
// totals and ratios for both measures, and emco's peak resident memory.

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/helm/helm.hpp"
#include "core/util/allocator.hpp"

extern char** environ;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double process_cpu() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Timing {
  double wall = 1e9;
  double cpu = 1e9;
  void keep_best(double w, double c) {
    wall = std::min(wall, w);
    cpu = std::min(cpu, c);
  }
};

// Runs helm with stdout/stderr discarded; returns wall and CPU seconds (-1 if it did not start).
Timing run_helm(const std::string& helm, const fs::path& cwd, const std::vector<std::string>& args) {
  std::vector<std::string> argv_s = {helm};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  auto old = fs::current_path();
  fs::current_path(cwd);
  auto t0 = Clock::now();
  pid_t pid = 0;
  int rc = posix_spawn(&pid, helm.c_str(), &fa, nullptr, argv.data(), environ);
  fs::current_path(old);
  posix_spawn_file_actions_destroy(&fa);
  Timing t;
  if (rc != 0) {
    t.wall = t.cpu = -1;
    return t;
  }
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  t.wall = seconds_since(t0);
  t.cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
          static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  emco::tune_allocator();  // as emco's main() does
  if (argc < 2) {
    std::cerr << "usage: helm_bench CORPUS_DIR [--helm PATH] [--reps N] [CHART...]\n";
    return 2;
  }
  fs::path corpus = argv[1];
  std::string helm;
  int reps = 3;
  std::set<std::string> only;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--helm" && i + 1 < argc) helm = argv[++i];
    else if (a == "--reps" && i + 1 < argc) reps = std::max(1, std::stoi(argv[++i]));
    else only.insert(a);
  }
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(corpus))
    if (fs::exists(e.path() / "chart") && (only.empty() || only.count(e.path().filename())))
      names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());

  Timing emco_total{0, 0}, helm_total{0, 0};
  double worst_ratio = 1e9;
  std::string worst;
  std::printf("%-32s %12s %12s %8s\n", "chart (default+custom)", "emco cpu ms", "helm cpu ms", "ratio");
  for (const auto& name : names) {
    fs::path dir = corpus / name;
    Timing emco_chart{0, 0}, helm_chart{0, 0};
    for (const std::string variant : {"default", "custom"}) {
      if (!fs::exists(dir / ("expected-" + variant + ".yaml"))) continue;
      emco::helm::TemplateArgs args;
      args.chart = (dir / "chart").string();
      args.release_name = "rel";
      args.namespace_name = "ns";
      if (variant == "custom") args.value_files.push_back((dir / "values-custom.yaml").string());
      Timing best;
      for (int r = 0; r < reps; ++r) {
        std::ostringstream out, err;
        auto t0 = Clock::now();
        double c0 = process_cpu();
        emco::helm::template_main(args, out, err);
        best.keep_best(seconds_since(t0), process_cpu() - c0);
      }
      emco_chart.wall += best.wall;
      emco_chart.cpu += best.cpu;
      if (!helm.empty()) {
        std::vector<std::string> hargs = {"template", "rel", "chart", "--namespace", "ns"};
        if (variant == "custom") {
          hargs.push_back("-f");
          hargs.push_back("values-custom.yaml");
        }
        Timing hbest;
        for (int r = 0; r < reps; ++r) {
          Timing t = run_helm(helm, dir, hargs);
          hbest.keep_best(t.wall, t.cpu);
        }
        helm_chart.wall += hbest.wall;
        helm_chart.cpu += hbest.cpu;
      }
    }
    emco_total.wall += emco_chart.wall;
    emco_total.cpu += emco_chart.cpu;
    helm_total.wall += helm_chart.wall;
    helm_total.cpu += helm_chart.cpu;
    if (!helm.empty()) {
      double ratio = helm_chart.cpu / emco_chart.cpu;
      if (ratio < worst_ratio) {
        worst_ratio = ratio;
        worst = name;
      }
      std::printf("%-32s %12.2f %12.2f %7.1fx\n", name.c_str(), emco_chart.cpu * 1e3, helm_chart.cpu * 1e3, ratio);
    } else {
      std::printf("%-32s %12.2f %12s %8s\n", name.c_str(), emco_chart.cpu * 1e3, "-", "-");
    }
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("emco total: %.1f ms CPU, %.1f ms wall over %zu charts (one process, best of %d)\n",
              emco_total.cpu * 1e3, emco_total.wall * 1e3, names.size(), reps);
  if (!helm.empty()) {
    std::printf("helm total: %.1f ms CPU, %.1f ms wall (sum of process runs, best of %d)\n", helm_total.cpu * 1e3,
                helm_total.wall * 1e3, reps);
    std::printf("overall ratio: %.1fx CPU, %.1fx wall; lowest per-chart CPU ratio: %s at %.1fx\n",
                helm_total.cpu / emco_total.cpu, helm_total.wall / emco_total.wall, worst.c_str(), worst_ratio);
  }
  std::printf("emco peak RSS: %.1f MiB\n", static_cast<double>(ru.ru_maxrss) / 1024.0);
  return 0;
}
