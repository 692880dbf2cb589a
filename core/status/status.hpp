#pragma once
// Status queries (spec/status.md): a DIG's status with EMCO's parameters and
// field names, and a summary of the whole workspace.
//
// `deployed` comes from the store (the current AppContext's resources, their
// deploy status recorded in the status context). `ready` reads the live
// objects through Targets (present; ready per kind's conditions).
// Deprecated field names (status, rsyncStatus, clusterStatus, readyStatus for
// connectivity) are used when `type` is given or when neither `status` nor
// `type` is, as upstream does.

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/resource/kinds.hpp"
#include "core/store/store.hpp"
#include "core/sync/target.hpp"

namespace emco::status {

struct Query {
  std::string status;            // "", "deployed", "ready"
  std::string type;              // "", "rsync", "cluster" (deprecated)
  std::string output = "all";    // summary | all | detail
  bool has_instance = false;
  std::string instance;          // AppContext id
  std::vector<std::string> apps, clusters, resources;  // filters
  bool list_apps = false, list_clusters = false, list_resources = false;

  bool ready() const { return status == "ready" || (status.empty() && type == "cluster"); }
  bool deprecated_names() const { return status.empty(); }
};

// Parses an anchor's query string ("status=deployed&app=a&cluster=p%2Bc1&apps").
// Throws Error(invalid) for unknown parameters or values.
Query parse_query(const std::string& query_string);
// Checks a Query built from flags (same rules); throws Error(invalid).
void validate(const Query& q);

// The status of a DIG. `live` makes the Targets for `ready` (ignored
// otherwise; required then). Throws Error(not_found) for the DIG, an unknown
// instance or an unknown app filter.
nlohmann::json dig_status(store::Store& st, const resource::Key& dig, const Query& q,
                          const sync::TargetFactory& live = {});

// The status of the context recorded last in `state_info` (a stateInfo JSON
// text: "statusctxid" and "actions", "" for none) of the resource `key` of
// kind `k` (named in errors; its contexts are the ones it owns): `out` holds
// the caller's own fields, then "states" (the stateInfo) and the context's
// fields (deployedStatus, deployedCounts, readyStatus/readyCounts for
// `ready`, apps → clusters → resources), filtered and at the output level of
// `q`; `extra` fields are added except for the list queries (apps, clusters,
// resources). For resources that keep one history per phase (ca-certs'
// enrollment and distribution) the caller passes the phase's. Throws
// Error(invalid) for a bad query, Error(not_found) for an unknown instance or
// app filter.
nlohmann::json history_status(store::Store& st, const resource::Kind& k, const resource::Key& key,
                              const std::string& state_info, const Query& q, const sync::TargetFactory& live,
                              nlohmann::json out, const nlohmann::json& extra);
// The status of the context a plugin-owned lifecycle resource applied
// (lifecycle::ResourcePlanner; a cluster's network intents, upstream's
// ClusterStatusResult): "name" ("<provider>+<cluster>"), "states" (its
// stateInfo) and the same context fields, filters and output levels as
// dig_status. Throws Error(not_found) for the resource.
nlohmann::json owned_status(store::Store& st, const resource::Kind& k, const resource::Key& key, const Query& q,
                            const sync::TargetFactory& live = {});

// Deploy counts of a DIG's current context: {"Applied": n, "Pending": m, ...}
// (main resources only; no content is read).
nlohmann::json deployed_counts(store::Store& st, const std::string& ctx, const std::string& status_ctx);

// One row per DIG and lifecycle logical cloud: {kind, anchor, state,
// deployedStatus, context, revision, deployedCounts, active, and for a
// delivered DIG whose child contexts are still to make childContextsPending
// and, when the last attempt failed, childContextsError}, plus "queued"
// (contexts with work waiting for `emco sync`).
nlohmann::json workspace_status(store::Store& st);

}  // namespace emco::status
