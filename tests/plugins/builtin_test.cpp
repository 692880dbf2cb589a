// The runtime the composition root builds: controllers, delivery mechanisms
// in the order they are asked, the cluster admin, the kubeconfig preparer,
// and the plugins' intent kinds installed into the kinds registry.

#include <set>

#include <catch2/catch.hpp>

#include "core/resource/kinds.hpp"
#include "core/util/error.hpp"
#include "plugins/builtin.hpp"

using namespace emco;

TEST_CASE("the built-in runtime has what core reaches through it", "[plugins]") {
  const auto& rt = plugins::builtin_runtime();
  CHECK(&rt == &plugins::builtin_runtime());  // built once
  CHECK(rt.controllers.action("gac") != nullptr);
  CHECK(rt.controllers.action("dtc") != nullptr);
  CHECK(rt.controllers.placement("hpa-placement-controller-1") != nullptr);
  CHECK(rt.controllers.action("hpa-action-controller-1") != nullptr);
  CHECK(rt.controllers.names() == std::vector<std::string>{"dtc", "gac", "hpa-action-controller-1",
                                                           "hpa-placement-controller-1", "ovnaction", "sfc",
                                                           "sfcclient", "tac"});
  // The hooks around DIG operations: tac's, then custom hooks.
  REQUIRE(rt.hooks.size() == 2);
  CHECK(rt.hooks[0]->name() == "tac");
  CHECK(rt.hooks[1]->name() == "hooks");
  REQUIRE(rt.delivery.size() == 2);
  CHECK(rt.delivery[0]->name() == "gitops");  // asked before the direct mechanism
  CHECK(rt.delivery[1]->name() == "kube");
  REQUIRE(rt.direct != nullptr);
  CHECK(rt.direct->name() == "kube");
  CHECK(rt.cluster_admin != nullptr);
  CHECK(rt.preparers.count("cluster") == 1);
  // ncm: the checks of a cluster's networks and the planner of its network apply.
  CHECK(rt.checks.count("network") == 1);
  CHECK(rt.checks.count("providerNetwork") == 1);
  const lifecycle::ResourcePlanner* ncm = lifecycle::resource_planner(rt, "cluster");
  REQUIRE(ncm != nullptr);
  CHECK(ncm->inputs() == std::vector<std::string>{"network", "providerNetwork"});
  CHECK(lifecycle::resource_planner(rt, "logicalCloud") == nullptr);
}

TEST_CASE("delivery mechanisms choose their clusters from the registration", "[plugins]") {
  const auto& rt = plugins::builtin_runtime();
  lifecycle::ClusterAccess direct{.id = "p+c", .provider = "p", .cluster = "c", .kubeconfig = "apiVersion: v1"};
  lifecycle::ClusterAccess git = direct;
  git.gitops_type = "fluxcd";
  lifecycle::ClusterAccess none{.id = "p+d", .provider = "p", .cluster = "d"};
  CHECK_FALSE(rt.delivery[0]->delivers(direct));
  CHECK(rt.delivery[0]->delivers(git));
  CHECK(rt.delivery[1]->delivers(direct));
  CHECK_FALSE(rt.delivery[0]->delivers(none));
  CHECK_FALSE(rt.delivery[1]->delivers(none));
}

TEST_CASE("every plugin kind is reachable by its anchor and belongs to a plugin", "[plugins]") {
  const auto& rt = plugins::builtin_runtime();
  std::set<std::string> services;
  for (const auto& p : rt.plugins) services.insert(p.services.begin(), p.services.end());
  // The plugins' kinds were moved into the registry, after core's.
  CHECK(rt.kinds.empty());
  const std::set<std::string> core_services = {"orchestrator", "clm", "dcm"};
  size_t plugin_kinds = 0;
  for (const auto& k : resource::all_kinds()) {
    INFO(k.id);
    CHECK((core_services.count(k.service) == 1 || services.count(k.service) == 1));
    if (core_services.count(k.service)) continue;
    ++plugin_kinds;
    const resource::Kind* installed = resource::find_kind(k.id);
    REQUIRE(installed == &k);
    // A resource of the kind, with "x" for every key element, round-trips
    // through its anchor.
    resource::Key key;
    for (const resource::Kind* c : resource::lineage(k.id)) {
      for (const auto& f : c->fixed) key.parts.push_back(f);
      for (const auto& e : c->elements) key.parts.emplace_back(e, "x");
    }
    auto anchor = resource::parse_anchor(resource::resource_anchor(*installed, key));
    CHECK(anchor.target == resource::AnchorTarget::resource);
    CHECK(anchor.kind == installed);
    CHECK(anchor.key == key);
  }
  CHECK(plugin_kinds >= 20);
  // Plugins that emco does not run say so, and name a service whose kinds they hold.
  for (const auto& p : rt.plugins)
    if (!p.runs) CHECK_FALSE(p.services.empty());
}
