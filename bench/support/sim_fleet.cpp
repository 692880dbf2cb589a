#include "bench/support/sim_fleet.hpp"

#include <sstream>

#include <nlohmann/json.hpp>

#include "core/lifecycle/lifecycle.hpp"
#include "core/manifest/batch.hpp"
#include "core/manifest/manifest.hpp"
#include "core/util/clock.hpp"
#include "plugins/builtin.hpp"

namespace emco::bench {

double secs(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::string arg(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == "--" + name) return argv[i + 1];
  return fallback;
}

resource::Key dig_key(const std::string& name) {
  return resource::Key::parse("project=proj/compositeApp=ca/compositeAppVersion=v1/deploymentIntentGroup=" + name);
}

std::string setup_yaml(const std::vector<std::string>& clusters, const sim::Simulator& sim,
                       const std::vector<std::string>& digs) {
  std::ostringstream y;
  y << "version: emco/v2\nresourceContext: {anchor: cluster-providers}\nmetadata: {name: p}\n";
  for (const auto& n : clusters)
    y << "---\nversion: emco/v2\nresourceContext: {anchor: cluster-providers/p/clusters}\nmetadata: {name: " << n
      << "}\nfile: " << sim.kubeconfig_path(n) << "\n";
  y << "---\nversion: emco/v2\nresourceContext: {anchor: projects}\nmetadata: {name: proj}\n"
    << "---\nversion: emco/v2\nresourceContext: {anchor: projects/proj/logical-clouds}\nmetadata: {name: lc}\n"
       "spec: {level: \"0\"}\n"
    << "---\nversion: emco/v2\nresourceContext: {anchor: projects/proj/logical-clouds/lc/cluster-references}\n"
       "metadata: {name: "
    << clusters.front() << "}\nspec: {clusterProvider: p, cluster: " << clusters.front() << "}\n"
    << "---\nversion: emco/v2\nresourceContext: {anchor: projects/proj/composite-apps}\nmetadata: {name: ca}\n"
       "spec: {compositeAppVersion: v1}\n"
    << "---\nversion: emco/v2\nresourceContext: {anchor: projects/proj/composite-apps/ca/v1/composite-profiles}\n"
       "metadata: {name: prof}\n";
  for (const auto& d : digs)
    y << "---\nversion: emco/v2\nresourceContext: {anchor: projects/proj/composite-apps/ca/v1/deployment-intent-groups}\n"
      << "metadata: {name: " << d << "}\nspec: {compositeProfile: prof, version: r1, logicalCloud: lc}\n";
  return y.str();
}

appcontext::AppContext two_object_plan(const resource::Key& key, const std::string& status_ctx,
                                       const std::vector<std::string>& clusters, int apps,
                                       const std::string& first_value) {
  appcontext::AppContext c;
  c.id = random_context_id();
  c.owner = {"deploymentIntentGroup", key};
  c.meta["Namespace"] = "default";
  c.created = "2026-01-01T00:00:00.000Z";
  std::string label = status_ctx.empty() ? c.id : status_ctx;
  for (int a = 0; a < apps; ++a) {
    appcontext::App app;
    app.name = "app" + std::to_string(a);
    std::string v = a == 0 ? first_value : "1";
    auto cm = c.intern("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + app.name + "-config\n  labels:\n"
                       "    emco/deployment-id: " + label + "-" + app.name + "\ndata:\n  replicas: \"" + v + "\"\n");
    auto svc = c.intern("apiVersion: v1\nkind: Service\nmetadata:\n  name: " + app.name + "\n  labels:\n"
                        "    emco/deployment-id: " + label + "-" + app.name +
                        "\nspec:\n  ports:\n  - port: 80\n  selector:\n    app: " + app.name + "\n");
    for (const auto& n : clusters) {
      appcontext::Cluster cl;
      cl.name = "p+" + n;
      cl.resources = {{app.name + "-config+ConfigMap", cm}, {app.name + "+Service", svc}};
      app.clusters.push_back(std::move(cl));
    }
    c.apps.push_back(std::move(app));
  }
  return c;
}

SimFleet start_fleet(const std::filesystem::path& work, int clusters, const std::vector<std::string>& digs) {
  SimFleet f;
  sim::SimOptions so;
  so.clusters = clusters;
  so.dir = (work / "sim").string();
  f.sim = std::make_unique<sim::Simulator>(so);
  f.sim->start();
  f.names = f.sim->cluster_names();
  bool created = false;
  f.workspace = store::init_workspace(work / "ws", created);
  f.store = store::Store::open(f.workspace);
  manifest::ReadOptions ro;
  manifest::run_batch(*f.store, manifest::Verb::apply,
                      {manifest::parse_text(setup_yaml(f.names, *f.sim, digs), "setup", work.string(), ro)}, {});
  lifecycle::OperationOptions setup;
  setup.runtime = &plugins::builtin_runtime();
  lifecycle::run(*f.store, resource::kind("logicalCloud"), resource::Key::parse("project=proj/logicalCloud=lc"),
                 "instantiate", nlohmann::json::object(), system_clock(), setup);
  for (const auto& d : digs)
    lifecycle::run(*f.store, resource::kind("deploymentIntentGroup"), dig_key(d), "approve", nlohmann::json::object(),
                   system_clock(), setup);
  return f;
}

}  // namespace emco::bench
