#pragma once
// A workspace with a project, two clusters, an admin logical cloud and a DIG,
// a fake planner and fake clusters (tests/sync/fake_target.hpp).

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/appcontext/appcontext.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/manifest/batch.hpp"
#include "core/manifest/manifest.hpp"
#include "core/store/store.hpp"
#include "core/sync/queue.hpp"
#include "../sync/fake_target.hpp"
#include "plugins/builtin.hpp"
#include "tests/test_store.hpp"

namespace emco::testing {

using namespace emco::sync::testing;
using namespace std::chrono_literals;
using nlohmann::json;
namespace ac = emco::appcontext;

inline constexpr const char* k_setup = R"(
version: emco/v2
resourceContext: {anchor: cluster-providers}
metadata: {name: p}
---
version: emco/v2
resourceContext: {anchor: cluster-providers/p/clusters}
metadata: {name: c1}
file: kc.yaml
---
version: emco/v2
resourceContext: {anchor: cluster-providers/p/clusters}
metadata: {name: c2}
file: kc.yaml
---
version: emco/v2
resourceContext: {anchor: projects}
metadata: {name: proj}
---
version: emco/v2
resourceContext: {anchor: projects/proj/logical-clouds}
metadata: {name: lc}
spec: {level: "0"}
---
version: emco/v2
resourceContext: {anchor: projects/proj/logical-clouds/lc/cluster-references}
metadata: {name: c1}
spec: {clusterProvider: p, cluster: c1}
---
version: emco/v2
resourceContext: {anchor: projects/proj/composite-apps}
metadata: {name: ca}
spec: {compositeAppVersion: v1}
---
version: emco/v2
resourceContext: {anchor: projects/proj/composite-apps/ca/v1/composite-profiles}
metadata: {name: prof}
---
version: emco/v2
resourceContext: {anchor: projects/proj/composite-apps/ca/v1/deployment-intent-groups}
metadata: {name: dig}
spec: {compositeProfile: prof, version: r1, logicalCloud: lc}
)";

struct World {
  std::unique_ptr<store::Store> st = emco::test::open_test_store();
  Fleet fleet;
  // What the fake planner puts where: app -> cluster -> objects.
  std::map<std::string, std::map<std::string, std::vector<std::string>>> plan = {{"app1", {{"p+c1", {"a", "b"}}}}};
  resource::Key dig = resource::Key::parse(
      "project=proj/compositeApp=ca/compositeAppVersion=v1/deploymentIntentGroup=dig");
  resource::Key lc = resource::Key::parse("project=proj/logicalCloud=lc");

  World() { setup(); }
  // On a workspace of the caller's (one that other connections open too).
  explicit World(std::unique_ptr<store::Store> store) : st(std::move(store)) { setup(); }

  void setup() {
    auto dir = std::filesystem::temp_directory_path() / ("emco-lifecycle-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "kc.yaml") << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: "
                                      "'https://127.0.0.1:1'}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n"
                                      "- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n";
    manifest::ReadOptions ro;
    auto f = manifest::parse_text(k_setup, "setup.yaml", dir.string(), ro);
    manifest::run_batch(*st, manifest::Verb::apply, {f}, {});
  }

  lifecycle::OperationOptions options() {
    lifecycle::OperationOptions o;
    o.runtime = &plugins::builtin_runtime();
    o.timeout = 20s;
    o.engine.backoff_initial = 5ms;
    o.engine.backoff_max = 20ms;
    o.engine.poll = 10ms;
    o.factory = fleet.factory();
    o.planner = [this](store::Store&, const resource::Key& key, const std::string&, const std::string&) {
      ac::AppContext c;
      c.id = random_context_id();
      c.owner = {"deploymentIntentGroup", key};
      c.meta["Namespace"] = "default";
      c.created = "2026-01-01T00:00:00.000Z";
      for (const auto& [app, clusters] : plan) {
        ac::App a;
        a.name = app;
        for (const auto& [cluster, objects] : clusters) {
          ac::Cluster cl;
          cl.name = cluster;
          for (const auto& object : objects) cl.resources.push_back({object + "+ConfigMap", c.intern(object)});
          a.clusters.push_back(std::move(cl));
        }
        c.apps.push_back(std::move(a));
      }
      return c;
    };
    return o;
  }

  lifecycle::OperationResult op(const resource::Key& key, const std::string& name, const json& body = json::object()) {
    const auto& k = resource::kind(key == dig ? "deploymentIntentGroup" : "logicalCloud");
    return lifecycle::run(*st, k, key, name, body, system_clock(), options());
  }
  json history() { return json::parse(st->get(dig)->state_info); }
  std::vector<std::string> states() {
    std::vector<std::string> v;
    json h = history();
    for (const auto& a : h["actions"])
      v.push_back(a["state"].get<std::string>() + "/" + std::to_string(a["revision"].get<int>()));
    return v;
  }
};

}  // namespace emco::testing
