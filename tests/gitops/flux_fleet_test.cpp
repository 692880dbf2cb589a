// plan_commits builds the Flux objects of a fleet once per registration and
// substitutes each cluster's id: the files must be exactly flux_objects'.

#include <catch2/catch.hpp>

#include "plugins/targets/gitops/gitops_layout.hpp"

using namespace emco::gitops;

TEST_CASE("Flux objects of a fleet are those of each cluster alone", "[gitops][layout]") {
  GitOpsOperation op;
  op.project = "p";
  op.composite_app = "ca";
  op.composite_app_version = "v1";
  op.dig = "dig";
  op.revision = 1;
  op.context.app_context_id = "5772429642747222531";
  op.context.namespace_name = "default";
  // Ids of plain-scalar characters share a template; the others ("true",
  // a ':' or a space make YAML quote the path differently, or not) and a
  // second registration (other timing) are built alone.
  const std::vector<std::pair<std::string, std::string>> ids = {
      {"edge", "c1"}, {"edge", "c-2.x_y"}, {"edge2", "C3"}, {"edge", "a:b"}, {"edge", "has space"}, {"edge", "true"}};
  for (size_t i = 0; i < ids.size(); ++i) {
    ClusterWork w;
    w.cluster.provider = ids[i].first;
    w.cluster.cluster = ids[i].second;
    w.cluster.remote.url = "https://git.example.com/fleet.git";
    w.cluster.remote.branch = "main";
    if (i == 2) w.cluster.flux.sync_interval = 3600;
    op.clusters.push_back(w);
  }
  auto commits = plan_commits(op);
  REQUIRE(commits.size() == 1);
  const ChangeSet& changes = commits[0].request.changes;
  size_t expected = 0;
  for (const auto& w : op.clusters) {
    for (const auto& [path, text] : flux_objects(w.cluster, op.context)) {
      ++expected;
      auto it = changes.find(path);
      REQUIRE(it != changes.end());
      REQUIRE(it->second.has_value());
      CHECK(*it->second == text);
    }
  }
  CHECK(expected == 2 * ids.size());
  CHECK(changes.size() == expected);
}
