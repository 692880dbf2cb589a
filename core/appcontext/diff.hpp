#pragma once
// What differs between two contexts, per (app, cluster).

#include <string>
#include <vector>

#include "core/appcontext/value.hpp"

namespace emco::appcontext {

// How one (app, cluster) differs between an old and a new context.
struct ClusterDiff {
  std::string app, cluster;
  enum class Presence { both, added, removed } presence = Presence::both;  // cluster (or app) only in new / only in old
  std::vector<std::string> added;      // resource names only in new (main list, then hooks)
  std::vector<std::string> changed;    // in both, hash differs
  std::vector<std::string> removed;    // only in old
  std::vector<std::string> unchanged;  // in both, same hash
  // The cluster in each context (null where absent); valid while both
  // contexts live unchanged.
  const Cluster* old_cluster = nullptr;
  const Cluster* new_cluster = nullptr;
  bool empty() const { return added.empty() && changed.empty() && removed.empty(); }
};
// Per (app, cluster) of either context: apps in the new context's order then
// apps only in the old one; clusters by name. Hook groups count as resources.
// An app with the same plan digest in both (nothing of it changed; it may be
// elided) yields no entries.
std::vector<ClusterDiff> diff(const AppContext& old_ctx, const AppContext& new_ctx);

}  // namespace emco::appcontext
