// Generic placement: random clusters, labels and intents; every app's
// clusters satisfy its intent, anyOf picks exactly one (the lexicographically
// first), allOf keeps every selected cluster, and clusters outside the
// logical cloud never qualify.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "core/plan/plan.hpp"
#include "core/util/error.hpp"
#include "tests/plan/world.hpp"

using namespace emco;
using test::ClusterSpec;

namespace {

void setup(test::Workspace& ws, const std::vector<std::string>& apps) {
  ws.write("kubeconfig", "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n");
  for (const auto& a : apps) test::write_chart(ws, a);
  test::write_profile(ws, "profile");
}

struct Element {
  std::string provider, cluster, label;
};

std::string element_yaml(const Element& e) {
  return "    - clusterProvider: " + e.provider + "\n" +
         (e.cluster.empty() ? "      clusterLabel: " + e.label + "\n" : "      cluster: " + e.cluster + "\n");
}

}  // namespace

TEST_CASE("placement satisfies random intents", "[plan][placement]") {
  std::mt19937 rng(20261122);
  const std::vector<std::string> labels = {"edge", "gpu", "west"};
  for (int trial = 0; trial < 25; ++trial) {
    CAPTURE(trial);
    std::uniform_int_distribution<int> n_clusters(1, 10), coin(0, 1), pick_label(0, 2);
    std::vector<ClusterSpec> clusters;
    int n = n_clusters(rng);
    for (int i = 0; i < n; ++i) {
      ClusterSpec c{coin(rng) ? "pa" : "pb", "c" + std::to_string(i), {}, coin(rng) || coin(rng)};
      for (const auto& l : labels)
        if (coin(rng)) c.labels.push_back(l);
      clusters.push_back(c);
    }
    if (std::none_of(clusters.begin(), clusters.end(), [](const ClusterSpec& c) { return c.in_cloud; }))
      clusters[0].in_cloud = true;
    std::vector<const ClusterSpec*> cloud;
    for (const auto& c : clusters)
      if (c.in_cloud) cloud.push_back(&c);

    // Valid elements only: named cloud clusters, or labels some cloud cluster of that provider has.
    auto random_element = [&]() {
      const ClusterSpec* c = cloud[std::uniform_int_distribution<size_t>(0, cloud.size() - 1)(rng)];
      if (c->labels.empty() || coin(rng)) return Element{c->provider, c->name, ""};
      return Element{c->provider, "", c->labels[std::uniform_int_distribution<size_t>(0, c->labels.size() - 1)(rng)]};
    };
    std::vector<test::AppSpec> apps;
    std::map<std::string, std::pair<std::vector<Element>, std::vector<Element>>> intents;
    int n_apps = std::uniform_int_distribution<int>(1, 3)(rng);
    for (int a = 0; a < n_apps; ++a) {
      std::string name = "app" + std::to_string(a);
      std::vector<Element> all_of, any_of;
      int na = std::uniform_int_distribution<int>(0, 2)(rng), ny = std::uniform_int_distribution<int>(0, 2)(rng);
      if (na + ny == 0) na = 1;
      for (int i = 0; i < na; ++i) all_of.push_back(random_element());
      for (int i = 0; i < ny; ++i) any_of.push_back(random_element());
      std::string y;
      if (!all_of.empty()) {
        y += "    allOf:\n";
        for (const auto& e : all_of) y += element_yaml(e);
      }
      if (!any_of.empty()) {
        y += "    anyOf:\n";
        for (const auto& e : any_of) y += element_yaml(e);
      }
      apps.push_back({name, y});
      intents[name] = {all_of, any_of};
    }
    test::Workspace ws;
    std::vector<std::string> names;
    for (const auto& a : apps) names.push_back(a.name);
    setup(ws, names);
    ws.apply_text(test::world_yaml(clusters, apps));
    auto p = plan::make(ws.store(), test::world_dig(), test::plan_options());

    auto resolve = [&](const Element& e) {
      std::set<std::string> out;
      for (const auto& c : clusters) {
        if (!c.in_cloud || c.provider != e.provider) continue;
        bool match = e.cluster.empty() ? std::count(c.labels.begin(), c.labels.end(), e.label) > 0 : c.name == e.cluster;
        if (match) out.insert(c.provider + "+" + c.name);
      }
      return out;
    };
    for (const auto& app : p.context.apps) {
      CAPTURE(app.name);
      const auto& [all_of, any_of] = intents[app.name];
      std::set<std::string> all_set, any_set;
      for (const auto& e : all_of)
        for (const auto& c : resolve(e)) all_set.insert(c);
      for (const auto& e : any_of)
        for (const auto& c : resolve(e)) any_set.insert(c);
      std::set<std::string> expected;
      for (const auto& c : all_set)
        if (!any_set.count(c)) expected.insert(c);  // a cluster in both takes the anyOf group
      if (!any_set.empty()) expected.insert(*any_set.begin());
      std::set<std::string> actual;
      std::set<int> groups;
      for (const auto& c : app.clusters) {
        actual.insert(c.name);
        CHECK(groups.insert(c.group).second);  // one cluster per group after pruning
        CHECK(c.resources.size() == 2);
      }
      CHECK(actual == expected);
      // Every chosen cluster is in the logical cloud and selected by some element.
      for (const auto& c : actual) CHECK((all_set.count(c) || any_set.count(c)));
      // The explanation marks exactly the chosen clusters.
      for (const auto& ex : p.explanation)
        if (ex.app == app.name)
          for (const auto& cand : ex.candidates) CHECK(cand.chosen == (actual.count(cand.cluster) > 0));
    }
  }
}

TEST_CASE("anyOf keeps the lexicographically first provider+cluster", "[plan][placement]") {
  test::Workspace ws;
  setup(ws, {"web"});
  std::vector<ClusterSpec> clusters = {{"pb", "a", {"edge"}}, {"pa", "z", {"edge"}}, {"pa", "b", {"edge"}},
                                       {"pa", "a", {"edge"}, false}};
  ws.apply_text(test::world_yaml(clusters, {{"web", "    anyOf:\n    - clusterProvider: pa\n      clusterLabel: edge\n"
                                                       "    - clusterProvider: pb\n      clusterLabel: edge\n"}}));
  auto p = plan::make(ws.store(), test::world_dig(), test::plan_options());
  REQUIRE(p.context.apps[0].clusters.size() == 1);
  CHECK(p.context.apps[0].clusters[0].name == "pa+b");  // pa+a is outside the logical cloud
  const auto& ex = p.explanation[0];
  std::map<std::string, std::string> why;
  for (const auto& c : ex.candidates) why[c.cluster] = c.reason;
  CHECK(why["pa+z"].find("anyOf chose 'pa+b'") != std::string::npos);
  CHECK(why["pa+a"].find("not in logical cloud 'lc'") != std::string::npos);
}

TEST_CASE("labels are resolved when the plan is made", "[plan][placement]") {
  test::Workspace ws;
  setup(ws, {"web"});
  std::vector<ClusterSpec> clusters = {{"p1", "c1", {"edge"}}, {"p1", "c2", {}}};
  ws.apply_text(test::world_yaml(clusters, {{"web", "    allOf:\n    - clusterProvider: p1\n      clusterLabel: edge\n"}}));
  CHECK(plan::build(ws.store(), test::world_dig(), test::plan_options()).apps[0].clusters.size() == 1);
  ws.apply_text("version: emco/v2\nresourceContext:\n  anchor: cluster-providers/p1/clusters/c2/labels\nclusterLabel: edge\n");
  auto ctx = plan::build(ws.store(), test::world_dig(), test::plan_options());
  REQUIRE(ctx.apps[0].clusters.size() == 2);
  CHECK(ctx.apps[0].clusters[0].group == 1);
  CHECK(ctx.apps[0].clusters[1].group == 2);
}
