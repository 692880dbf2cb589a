// Helm rendering benchmark: every chart x variant of a corpus rendered by emco in this one
// process, against the sum of `helm template` process runs (when --helm is given).
//
//   helm_bench CORPUS_DIR [--helm PATH] [--reps N] [CHART...]
//
// Per render: the best of N runs for emco (in process, chart loading included) and for
// helm (wall time of the whole process, as MANIFEST.md measured). Prints one row per
// chart, the totals, the overall ratio and emco's peak resident memory.

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
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

extern char** environ;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Runs helm with stdout/stderr discarded; returns wall seconds, or -1 when it could not start.
double run_helm(const std::string& helm, const fs::path& cwd, const std::vector<std::string>& args) {
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
  if (rc != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return seconds_since(t0);
}

}  // namespace

int main(int argc, char** argv) {
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

  double emco_total = 0, helm_total = 0;
  double worst_ratio = 1e9;
  std::string worst;
  std::printf("%-32s %10s %10s %8s\n", "chart (default+custom)", "emco ms", "helm ms", "ratio");
  for (const auto& name : names) {
    fs::path dir = corpus / name;
    double emco_chart = 0, helm_chart = 0;
    for (const std::string variant : {"default", "custom"}) {
      if (!fs::exists(dir / ("expected-" + variant + ".yaml"))) continue;
      emco::helm::TemplateArgs args;
      args.chart = (dir / "chart").string();
      args.release_name = "rel";
      args.namespace_name = "ns";
      if (variant == "custom") args.value_files.push_back((dir / "values-custom.yaml").string());
      double best = 1e9;
      for (int r = 0; r < reps; ++r) {
        std::ostringstream out, err;
        auto t0 = Clock::now();
        emco::helm::template_main(args, out, err);
        best = std::min(best, seconds_since(t0));
      }
      emco_chart += best;
      if (!helm.empty()) {
        std::vector<std::string> hargs = {"template", "rel", "chart", "--namespace", "ns"};
        if (variant == "custom") {
          hargs.push_back("-f");
          hargs.push_back("values-custom.yaml");
        }
        double hbest = 1e9;
        for (int r = 0; r < reps; ++r) hbest = std::min(hbest, run_helm(helm, dir, hargs));
        helm_chart += hbest;
      }
    }
    emco_total += emco_chart;
    helm_total += helm_chart;
    if (!helm.empty()) {
      double ratio = helm_chart / emco_chart;
      if (ratio < worst_ratio) {
        worst_ratio = ratio;
        worst = name;
      }
      std::printf("%-32s %10.2f %10.2f %7.1fx\n", name.c_str(), emco_chart * 1e3, helm_chart * 1e3, ratio);
    } else {
      std::printf("%-32s %10.2f %10s %8s\n", name.c_str(), emco_chart * 1e3, "-", "-");
    }
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("emco total: %.1f ms over %zu charts (one process, best of %d)\n", emco_total * 1e3, names.size(), reps);
  if (!helm.empty()) {
    std::printf("helm total: %.1f ms (sum of process runs, best of %d)\n", helm_total * 1e3, reps);
    std::printf("overall ratio: %.1fx; slowest-relative chart: %s at %.1fx\n", helm_total / emco_total, worst.c_str(),
                worst_ratio);
  }
  std::printf("emco peak RSS: %.1f MiB\n", static_cast<double>(ru.ru_maxrss) / 1024.0);
  return 0;
}
