#pragma once
// Deploy status rows, kept under the status context id: per resource and
// per (app, cluster).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
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
// Upserts one resource's deploy status (cheap: one cached statement) in a
// write of its own.
void set_resource_status(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                         const std::string& resource, const std::string& status, const std::string& message,
                         const std::string& time);
// The same statement alone, for a caller that holds a write (Store::write)
// and records many: a nested write adds a savepoint and its release to each
// (at 1,000 GitOps clusters, a sixth of `emco dig update`'s status writes).
void put_resource_status(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
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
// As put_resource_status: the statement alone, inside the caller's write.
void put_cluster_state(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                       const std::string& connectivity, const std::string& time);
void set_cluster_readback(store::Store& st, const std::string& ctx, const std::string& app,
                          const std::string& cluster, const std::string& readback, const std::string& time);
std::vector<ClusterState> cluster_states(store::Store& st, const std::string& ctx);
// Drops every recorded resource/cluster state of `ctx` (for a fresh instantiate).
void clear_states(store::Store& st, const std::string& ctx);

}  // namespace emco::appcontext
