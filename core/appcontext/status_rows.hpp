#pragma once
// Deploy status, kept under the status context id: one row per (app,
// cluster) holding its connectivity, its read-back and its resources' states
// (core/store/status_codec.hpp).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/appcontext/value.hpp"
#include "core/store/store.hpp"

namespace emco::appcontext {

struct ResourceState {
  std::string app, cluster, resource;
  std::string status = resource_status::pending;
  std::string message;
  std::string time;
  std::string ready;  // last read-back readiness ("" unknown, "true", "false")
};
// Upserts one resource's deploy status in a write of its own.
void set_resource_status(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                         const std::string& resource, const std::string& status, const std::string& message,
                         const std::string& time);
void set_resource_ready(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                        const std::string& resource, const std::string& ready);
// Recorded states of a context (absent rows mean Pending), ordered by app, cluster, resource.
std::vector<ResourceState> resource_states(store::Store& st, const std::string& ctx);
std::optional<ResourceState> resource_state(store::Store& st, const std::string& ctx, const std::string& app,
                                            const std::string& cluster, const std::string& resource);
// Calls `fn(cluster, resource, status)` for every recorded state of one app
// of a context, ordered by cluster then resource (bytewise, as
// std::string_view compares), without messages or times (cheap: for
// counting).
void for_each_resource_status(store::Store& st, const std::string& ctx, const std::string& app,
                              const std::function<void(std::string_view cluster, std::string_view resource,
                                                       std::string_view status)>& fn);

struct ClusterState {
  std::string app, cluster;
  std::string connectivity = connectivity::unknown;
  std::string readback;  // raw read-back document (JSON text), optional
  std::string time;
};
void set_cluster_state(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                       const std::string& connectivity, const std::string& time);
void set_cluster_readback(store::Store& st, const std::string& ctx, const std::string& app,
                          const std::string& cluster, const std::string& readback, const std::string& time);
// A context's recorded states read in one query: what resource_states
// returns, and the (app, cluster)s whose connectivity or read-back was
// recorded, ordered by app, cluster.
struct States {
  std::vector<ResourceState> resources;
  std::vector<ClusterState> clusters;
};
States states(store::Store& st, const std::string& ctx);

// One change of a batch (put_status_changes). Views must stay valid for the
// call.
struct StatusChange {
  enum class What { connectivity, status, ready };
  What what = What::status;
  std::string_view app, cluster;
  std::string_view resource;  // status and ready
  std::string_view value;     // the connectivity, status or readiness
  std::string_view message;   // status
  std::string_view time;      // connectivity and status

  static StatusChange of_connectivity(std::string_view app, std::string_view cluster, std::string_view connectivity,
                                      std::string_view time) {
    return {What::connectivity, app, cluster, {}, connectivity, {}, time};
  }
  static StatusChange of_status(std::string_view app, std::string_view cluster, std::string_view resource,
                                std::string_view status, std::string_view message, std::string_view time) {
    return {What::status, app, cluster, resource, status, message, time};
  }
  static StatusChange of_ready(std::string_view app, std::string_view cluster, std::string_view resource,
                               std::string_view ready) {
    return {What::ready, app, cluster, resource, ready, {}, {}};
  }
};
// Records a batch of changes inside the caller's write (Store::write), later
// changes winning: one read and one write per (app, cluster) the batch names
// (a cluster's states are one row), the reads for up to 32 clusters in one
// statement (one round trip on a server).
void put_status_changes(store::Store& st, const std::string& ctx, const std::vector<StatusChange>& changes);
// Drops every recorded resource/cluster state of `ctx` (for a fresh instantiate).
void clear_states(store::Store& st, const std::string& ctx);

}  // namespace emco::appcontext
