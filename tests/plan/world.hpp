#pragma once
// Synthetic workspaces for planner tests: a tiny chart and profile on disk
// and emcoctl documents for clusters, a logical cloud, a composite app and a
// DIG, written as YAML text.

#include <string>
#include <vector>

#include "core/resource/kinds.hpp"
#include "tests/plan/fixture.hpp"

namespace emco::test {

struct ClusterSpec {
  std::string provider, name;
  std::vector<std::string> labels;
  bool in_cloud = true;
};

struct AppSpec {
  std::string name;
  std::string intent_yaml;  // the app intent's `intent:` body, indented by 4 spaces
};

// Writes charts/<app> (a ConfigMap from .Values.greeting, a Deployment, a
// pre-install hook Job) and profile/ (manifest.yaml + override_values.yaml).
void write_chart(Workspace& ws, const std::string& app);
void write_profile(Workspace& ws, const std::string& dir, const std::string& values = "greeting: from-profile\n");

// Documents for: providers/clusters/labels, project p, logical cloud lc
// (level 0) with references to in_cloud clusters, composite app ca/v1 with
// the apps (charts/<app>), composite profile cp (profile/ for every app),
// DIG dig (release r1) with group intent gi {genericPlacementIntent: gpi, +extra}
// and one app intent per app.
std::string world_yaml(const std::vector<ClusterSpec>& clusters, const std::vector<AppSpec>& apps,
                       const std::string& extra_group_intents = "");

resource::Key world_dig();

}  // namespace emco::test
