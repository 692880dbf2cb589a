#pragma once
// The Kubernetes releases the simulator can pose as (internal to sim): for
// each minor release 1.22–1.32, what /version reports and which built-in
// resource types (group, version, kind) discovery, OpenAPI and the API serve.
// One table in versions.cpp holds the APIs added and removed by release.

#include <string>
#include <vector>

#include "core/k8s/resources.hpp"

namespace emco::sim::detail {

constexpr int k_oldest_minor = 22;
constexpr int k_newest_minor = 32;

struct Release {
  int minor = 0;
  int patch = 0;                // the gitVersion's patch number (a late patch release of that line)
  std::string go_version;       // what that build reports as goVersion
  std::string git_version() const { return "v1." + std::to_string(minor) + "." + std::to_string(patch); }
};

// The release of minor version `minor`. Throws emco::Error(invalid) outside
// k_oldest_minor..k_newest_minor.
const Release& release(int minor);

// The built-in resource types release 1.<minor> serves, grouped by group in
// discovery order; within a group the preferred version comes first.
// Throws emco::Error(invalid) outside the supported range.
const std::vector<k8s::ResourceType>& served_types(int minor);

}  // namespace emco::sim::detail
