// Plans a DIG of 10 apps onto N clusters (labels mixed) and reports the time
// of plan::make, the Helm renders done, the AppContext size and peak memory.
//   plan_bench N [--save]
// One size per process, so that peak RSS belongs to that size. The plan is
// made 5 times and the median reported: a single run of the 1,000-cluster
// plan takes ~50 ms, too short to be a stable base for the growth ratio on
// a busy machine.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/appcontext/appcontext.hpp"
#include "core/manifest/batch.hpp"
#include "core/manifest/manifest.hpp"
#include "core/plan/plan.hpp"
#include "core/store/store.hpp"
#include "plugins/builtin.hpp"

namespace fs = std::filesystem;
using namespace emco;

namespace {

long peak_rss_kb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::string doc(const std::string& anchor, const std::string& body) {
  return "---\nversion: emco/v2\nresourceContext:\n  anchor: " + anchor + "\n" + body;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: plan_bench CLUSTERS [--save]\n");
    return 64;
  }
  const int n = std::atoi(argv[1]);
  const bool save = argc > 2 && std::string(argv[2]) == "--save";
  const int apps = 10;
  std::string tmpl = (fs::temp_directory_path() / "emco-plan-bench-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return 1;
  fs::path dir = tmpl;
  write(dir / "kubeconfig", "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n");
  write(dir / "profile/manifest.yaml", "version: v1\ntype:\n  values: \"override_values.yaml\"\n");
  write(dir / "profile/override_values.yaml", "replicas: 2\n");
  for (int a = 0; a < apps; ++a) {
    fs::path c = dir / ("charts/app" + std::to_string(a));
    write(c / "Chart.yaml", "apiVersion: v2\nname: app" + std::to_string(a) + "\nversion: 0.1.0\n");
    write(c / "values.yaml", "replicas: 1\nimage: nginx\n");
    write(c / "templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-{{ .Chart.Name }}\n"
                                   "data:\n  app: {{ .Chart.Name | quote }}\n");
    write(c / "templates/svc.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Chart.Name }}\nspec:\n"
                                    "  selector: {app: {{ .Chart.Name }}}\n  ports:\n  - port: 80\n");
    write(c / "templates/deploy.yaml",
          "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Chart.Name }}\nspec:\n"
          "  replicas: {{ .Values.replicas }}\n  selector:\n    matchLabels: {app: {{ .Chart.Name }}}\n  template:\n"
          "    metadata:\n      labels: {app: {{ .Chart.Name }}}\n    spec:\n      containers:\n"
          "      - name: main\n        image: {{ .Values.image }}\n        ports:\n        - containerPort: 80\n");
  }
  // Clusters: label "edge" on 3 of 4, "gpu" on every 7th, "west" on even ones.
  std::string y = doc("cluster-providers", "metadata:\n  name: p1\n");
  for (int i = 0; i < n; ++i) {
    std::string c = "c" + std::to_string(i);
    y += doc("cluster-providers/p1/clusters", "metadata:\n  name: " + c + "\nfile: kubeconfig\n");
    auto label = [&](const char* l) {
      y += doc("cluster-providers/p1/clusters/" + c + "/labels", std::string("clusterLabel: ") + l + "\n");
    };
    if (i % 4 != 0) label("edge");
    if (i % 7 == 0) label("gpu");
    if (i % 2 == 0) label("west");
  }
  y += doc("projects", "metadata:\n  name: p\n");
  y += doc("projects/p/logical-clouds", "metadata:\n  name: lc\nspec:\n  level: \"0\"\n");
  for (int i = 0; i < n; ++i)
    y += doc("projects/p/logical-clouds/lc/cluster-references",
             "metadata:\n  name: r" + std::to_string(i) + "\nspec:\n  clusterProvider: p1\n  cluster: c" +
                 std::to_string(i) + "\n");
  y += doc("projects/p/composite-apps", "metadata:\n  name: ca\nspec:\n  compositeAppVersion: v1\n");
  y += doc("projects/p/composite-apps/ca/v1/composite-profiles", "metadata:\n  name: cp\n");
  y += doc("projects/p/composite-apps/ca/v1/deployment-intent-groups",
           "metadata:\n  name: dig\nspec:\n  compositeProfile: cp\n  version: r1\n  logicalCloud: lc\n");
  y += doc("projects/p/composite-apps/ca/v1/deployment-intent-groups/dig/intents",
           "metadata:\n  name: gi\nspec:\n  intent:\n    genericPlacementIntent: gpi\n");
  y += doc("projects/p/composite-apps/ca/v1/deployment-intent-groups/dig/generic-placement-intents",
           "metadata:\n  name: gpi\n");
  const char* intents[] = {
      "    allOf:\n    - clusterProvider: p1\n      clusterLabel: edge\n",
      "    allOf:\n    - clusterProvider: p1\n      clusterLabel: west\n",
      "    anyOf:\n    - clusterProvider: p1\n      clusterLabel: gpu\n",
      "    allOf:\n    - clusterProvider: p1\n      clusterLabel: gpu\n    - clusterProvider: p1\n      cluster: c1\n",
  };
  for (int a = 0; a < apps; ++a) {
    std::string app = "app" + std::to_string(a);
    y += doc("projects/p/composite-apps/ca/v1/apps", "metadata:\n  name: " + app + "\nfile: charts/" + app + "\n");
    y += doc("projects/p/composite-apps/ca/v1/composite-profiles/cp/profiles",
             "metadata:\n  name: " + app + "-profile\nspec:\n  app: " + app + "\nfile: profile\n");
    y += doc("projects/p/composite-apps/ca/v1/deployment-intent-groups/dig/generic-placement-intents/gpi/app-intents",
             "metadata:\n  name: " + app + "-intent\nspec:\n  app: " + app + "\n  intent:\n" + intents[a % 4]);
  }
  auto st = store::Store::open_memory();
  const lifecycle::Runtime& runtime = plugins::builtin_runtime();
  manifest::ReadOptions ro;
  manifest::BatchOptions bo;  // no runtime: the bench's kubeconfigs are placeholders, not checked
  manifest::run_batch(*st, manifest::Verb::apply, {manifest::parse_text(y, "bench.yaml", dir.string(), ro)}, bo);
  long setup_kb = peak_rss_kb();

  resource::Key dig{{{"project", "p"}, {"compositeApp", "ca"}, {"compositeAppVersion", "v1"}, {"deploymentIntentGroup", "dig"}}};
  std::vector<double> times;
  plan::Plan p;
  plan::Options po;
  po.registry = &runtime.controllers;
  for (int run = 0; run < 5; ++run) {
    auto t0 = std::chrono::steady_clock::now();
    p = plan::make(*st, dig, po);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  size_t placements = 0;
  for (const auto& a : p.context.apps) placements += a.clusters.size();
  double save_s = 0;
  if (save) {
    auto s0 = std::chrono::steady_clock::now();
    appcontext::save(*st, p.context);
    save_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
  }
  double plan_s = times[times.size() / 2];
  std::printf("clusters=%d apps=%d renders=%zu app_placements=%zu resources=%zu plan_s=%.3f save_s=%.3f "
              "setup_rss_mb=%.1f peak_rss_mb=%.1f\n",
              n, apps, p.renders, placements, p.context.resource_count(), plan_s, save_s, setup_kb / 1024.0,
              peak_rss_kb() / 1024.0);
  fs::remove_all(dir);
  return 0;
}
