// Delivery to the in-process Kubernetes simulator through the KubeTarget
// adapter: instantiate/update (only changed objects sent)/rollback/terminate
// on real API servers, and convergence under 20% injected errors with a
// flapping cluster.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/appcontext/appcontext.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/manifest/batch.hpp"
#include "core/manifest/manifest.hpp"
#include "core/status/status.hpp"
#include "core/store/store.hpp"
#include "core/sync/queue.hpp"
#include "sim/sim.hpp"
#include "plugins/builtin.hpp"
#include "tests/test_store.hpp"

using namespace emco;
using namespace std::chrono_literals;
using nlohmann::json;
namespace ac = emco::appcontext;
namespace fs = std::filesystem;

namespace {

std::string dig_yaml(const std::string& dig) {
  return "version: emco/v2\nresourceContext: {anchor: projects/proj/composite-apps/ca/v1/deployment-intent-groups}\n"
         "metadata: {name: " + dig + "}\nspec: {compositeProfile: prof, version: r1, logicalCloud: lc}\n";
}

// A workspace on disk registering the simulator's clusters, with an admin
// logical cloud and DIGs dig1, dig2 approved.
struct SimWorld {
  sim::Simulator sim;
  fs::path dir;
  store::Workspace ws;
  std::unique_ptr<store::Store> st;
  int apps = 1;
  int objects_per_app = 2;
  std::string value = "v1";  // ConfigMap data; change it to make an update

  static sim::SimOptions sim_options(int clusters) {
    sim::SimOptions o;
    o.clusters = clusters;
    o.ready_delay_ms = 50;
    return o;
  }

  std::vector<std::string> names;  // cluster names

  explicit SimWorld(int clusters) : sim(sim_options(clusters)) {
    sim.start();
    names = sim.cluster_names();
    dir = fs::temp_directory_path() / ("emco-simworld-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
    fs::create_directories(dir);
    bool created = false;
    ws = emco::test::init_test_workspace(dir, created);
    st = store::Store::open(ws);
    std::ostringstream y;
    y << "version: emco/v2\nresourceContext: {anchor: cluster-providers}\nmetadata: {name: p}\n";
    for (const auto& n : sim.cluster_names())
      y << "---\nversion: emco/v2\nresourceContext: {anchor: cluster-providers/p/clusters}\nmetadata: {name: " << n
        << "}\nfile: " << sim.kubeconfig_path(n) << "\n";
    y << "---\nversion: emco/v2\nresourceContext: {anchor: projects}\nmetadata: {name: proj}\n"
      << "---\nversion: emco/v2\nresourceContext: {anchor: projects/proj/logical-clouds}\nmetadata: {name: lc}\n"
         "spec: {level: \"0\"}\n";
    for (const auto& n : sim.cluster_names())
      y << "---\nversion: emco/v2\nresourceContext: {anchor: projects/proj/logical-clouds/lc/cluster-references}\n"
        << "metadata: {name: " << n << "}\nspec: {clusterProvider: p, cluster: " << n << "}\n";
    y << "---\nversion: emco/v2\nresourceContext: {anchor: projects/proj/composite-apps}\nmetadata: {name: ca}\n"
         "spec: {compositeAppVersion: v1}\n"
      << "---\nversion: emco/v2\nresourceContext: {anchor: projects/proj/composite-apps/ca/v1/composite-profiles}\n"
         "metadata: {name: prof}\n---\n"
      << dig_yaml("dig1") << "---\n" << dig_yaml("dig2");
    manifest::ReadOptions ro;
    manifest::run_batch(*st, manifest::Verb::apply, {manifest::parse_text(y.str(), "setup.yaml", dir.string(), ro)}, {});
    lifecycle::run(*st, resource::kind("logicalCloud"), lc(), "instantiate", json::object(), system_clock(), options());
    for (const char* d : {"dig1", "dig2"})
      lifecycle::run(*st, resource::kind("deploymentIntentGroup"), dig(d), "approve", json::object(), system_clock(), options());
  }
  ~SimWorld() {
    st.reset();
    sim.stop();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  static resource::Key lc() { return resource::Key::parse("project=proj/logicalCloud=lc"); }
  static resource::Key dig(const std::string& name) {
    return resource::Key::parse("project=proj/compositeApp=ca/compositeAppVersion=v1/deploymentIntentGroup=" + name);
  }

  // ConfigMaps "<dig>-<app>-<i>" on every cluster; the value of app 0 is `value`.
  lifecycle::Planner planner() {
    return [this](store::Store&, const resource::Key& key, const std::string& status_ctx, const std::string&) {
      ac::AppContext c;
      c.id = random_context_id();
      c.owner = {"deploymentIntentGroup", key};
      c.meta["Namespace"] = "default";
      c.created = "2026-01-01T00:00:00.000Z";
      std::string label = (status_ctx.empty() ? c.id : status_ctx);
      std::string dig_name = key.parts.back().second;
      for (int a = 0; a < apps; ++a) {
        ac::App app;
        app.name = "app" + std::to_string(a);
        for (const auto& n : names) {
          ac::Cluster cl;
          cl.name = "p+" + n;
          for (int i = 0; i < objects_per_app; ++i) {
            std::string name = dig_name + "-" + app.name + "-" + std::to_string(i);
            std::string text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name +
                               "\n  labels:\n    emco/deployment-id: " + label + "-" + app.name + "\ndata:\n  v: \"" +
                               (a == 0 ? value : std::string("v1")) + "\"\n";
            cl.resources.push_back({name + "+ConfigMap", c.intern(text)});
          }
          app.clusters.push_back(std::move(cl));
        }
        c.apps.push_back(std::move(app));
      }
      return c;
    };
  }

  lifecycle::OperationOptions options() {
    lifecycle::OperationOptions o;
    o.runtime = &plugins::builtin_runtime();
    o.timeout = 120s;
    o.planner = planner();
    o.engine.backoff_initial = 20ms;
    o.engine.backoff_max = 200ms;
    o.engine.poll = 50ms;
    return o;
  }

  lifecycle::OperationResult op(const std::string& d, const std::string& name, const json& body = json::object()) {
    return lifecycle::run(*st, resource::kind("deploymentIntentGroup"), dig(d), name, body, system_clock(), options());
  }

  // Names of the emco ConfigMaps a cluster holds (with their value).
  std::set<std::string> held(const std::string& cluster) const {
    std::set<std::string> out;
    for (const auto& o : sim.list(cluster, "v1", "ConfigMap", "default"))
      if (o["metadata"].value("labels", json::object()).contains("emco/deployment-id"))
        out.insert(o["metadata"]["name"].get<std::string>() + "=" + o["data"].value("v", ""));
    return out;
  }
  std::set<std::string> expected(const std::string& d) const {
    std::set<std::string> out;
    for (int a = 0; a < apps; ++a)
      for (int i = 0; i < objects_per_app; ++i)
        out.insert(d + "-app" + std::to_string(a) + "-" + std::to_string(i) + "=" + (a == 0 ? value : "v1"));
    return out;
  }
  json counts(const std::string& d) {
    status::Query q;
    q.status = "deployed";
    q.output = "summary";
    return status::dig_status(*st, dig(d), q).value("deployedCounts", json::object());
  }
  uint64_t requests() const {
    uint64_t n = 0;
    for (const auto& c : sim.cluster_names()) n += sim.requests_served(c);
    return n;
  }
};

}  // namespace

TEST_CASE("instantiate, update, rollback and terminate on simulated clusters", "[lifecycle][sim]") {
  SimWorld w(3);
  w.apps = 2;
  auto r = w.op("dig1", "instantiate");
  REQUIRE(r.delivery == lifecycle::Delivery::done);
  for (const auto& c : w.sim.cluster_names()) CHECK(w.held(c) == w.expected("dig1"));
  CHECK(w.counts("dig1") == json{{"Applied", 12}});

  // Ready: every ConfigMap is present and ready.
  status::Query q;
  q.status = "ready";
  auto s = status::dig_status(*w.st, w.dig("dig1"), q, lifecycle::live_targets(*w.st, &plugins::builtin_runtime()));
  CHECK(s["readyStatus"] == "Ready");
  CHECK(s["readyCounts"] == json{{"Ready", 12}});

  // An update changing one value of one app sends only those objects.
  w.value = "v2";
  uint64_t before = w.requests();
  auto u = w.op("dig1", "update");
  REQUIRE(u.delivery == lifecycle::Delivery::done);
  uint64_t sent = w.requests() - before;
  for (const auto& c : w.sim.cluster_names()) CHECK(w.held(c) == w.expected("dig1"));
  // 2 changed objects x 3 clusters, plus discovery/probe requests per cluster.
  CHECK(sent < 2 * 3 * 4);

  w.value = "v1";
  auto rb = w.op("dig1", "rollback", json{{"spec", {{"revision", 1}}}});
  REQUIRE(rb.delivery == lifecycle::Delivery::done);
  for (const auto& c : w.sim.cluster_names()) CHECK(w.held(c) == w.expected("dig1"));

  auto t = w.op("dig1", "terminate");
  REQUIRE(t.delivery == lifecycle::Delivery::done);
  for (const auto& c : w.sim.cluster_names()) CHECK(w.held(c).empty());
  CHECK(w.counts("dig1") == json{{"Deleted", 12}});
}

TEST_CASE("20% injected errors and a flapping cluster converge with nothing lost", "[lifecycle][sim][reliability]") {
  SimWorld w(6);
  w.apps = 4;
  sim::Fault errors;
  errors.error_rate = 0.2;
  errors.error_code = 500;
  for (const auto& c : w.sim.cluster_names()) w.sim.set_fault(c, errors);
  sim::Fault flap = errors;
  flap.flap_period_ms = 600;
  flap.flap_down_ms = 300;
  w.sim.set_fault(w.sim.cluster_names().back(), flap);
  auto r = w.op("dig1", "instantiate");
  INFO(r.status << " " << (r.failures.empty() ? "" : r.failures.front()));
  REQUIRE(r.delivery == lifecycle::Delivery::done);
  for (const auto& c : w.sim.cluster_names()) {
    w.sim.set_fault(c, {});
    CHECK(w.held(c) == w.expected("dig1"));
  }
  CHECK(w.counts("dig1") == json{{"Applied", 4 * 2 * 6}});
}

