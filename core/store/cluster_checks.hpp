#pragma once
// The `cluster_checks` table of the workspace (schema in store.cpp's
// migrations): the last `emco cluster check` of each cluster, so that the
// fleet shows when a cluster was last seen and how, without checking again.
// A row belongs to the cluster's resource row and goes with it.

#include <map>
#include <optional>
#include <string>

#include "core/store/store.hpp"

namespace emco::store {

struct ClusterCheck {
  std::string time;     // RFC 3339, when the check ended
  bool reachable = false;
  std::string error;    // what failed ("check: detail; ..."), "" when every check passed
  std::string version;  // the server's gitVersion, "" when not reached
  bool operator==(const ClusterCheck&) const = default;
};

// Records (replaces) the last check of the cluster `cluster` (a key of kind
// cluster), in the caller's write transaction when there is one, else in one
// of its own. Error(not_found) when the cluster does not exist.
void record_cluster_check(Store& st, const resource::Key& cluster, const ClusterCheck& check);
// The cluster's last check, nullopt when it was never checked.
std::optional<ClusterCheck> cluster_check(Store& st, const resource::Key& cluster);
// Every recorded check, by the cluster's key text (resource::Key::str()).
std::map<std::string, ClusterCheck> cluster_checks(Store& st);
// {"lastCheck": {"time", "reachable", "error"?, "serverVersion"?}} as JSON
// text: the status emco shows next to a cluster's metadata and spec.
std::string cluster_status_json(const ClusterCheck& check);

}  // namespace emco::store
