#pragma once
// The AppContext: one planned deployment (spec/placement-and-actions.md §1
// "AppContext produced", spec/lifecycle.md §5-7), as an in-memory value and
// as rows in the workspace database.
//
// Shape: context (id, owner, meta, status, parent/children, status context,
// flags) → apps in `apporder` (with dependencies) → per app the clusters
// ("<provider>+<cluster>", with their placement group) → per (app, cluster)
// the resources in `resorder` plus the hook groups (crd-install, pre-install,
// post-install, pre-delete, post-delete, ...) in order. Each resource is keyed
// "<name>+<Kind>" and points at shared, hashed content: identical manifests
// are held once in memory (ContentRef is shared) and stored once in the
// database (a content table keyed by hash).
//
// Deploy-time state lives beside the plan, keyed by names so that the status
// context (the DIG's `statusctxid`, stable across updates) can hold status for
// resources of any later context: per-resource deploy status, per (app,
// cluster) connectivity and read-back, the event queue and the active set.
//
// Every function taking a Store that writes runs inside Store::write() (it
// joins an outer transaction when there is one), so batches of status updates
// should be wrapped in one write() by the caller for speed.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/resource/kinds.hpp"
#include "core/store/store.hpp"

namespace emco::appcontext {

// ---- vocabulary (upstream spellings) -------------------------------------

// Context status (lifecycle.md §5). Note upstream's "UpdatedFailed".
namespace status {
inline constexpr const char* created = "Created";
inline constexpr const char* instantiating = "Instantiating";
inline constexpr const char* instantiated = "Instantiated";
inline constexpr const char* instantiate_failed = "InstantiateFailed";
inline constexpr const char* terminating = "Terminating";
inline constexpr const char* terminated = "Terminated";
inline constexpr const char* terminate_failed = "TerminateFailed";
inline constexpr const char* updating = "Updating";
inline constexpr const char* updated = "Updated";
inline constexpr const char* updated_failed = "UpdatedFailed";
}  // namespace status

// Per-resource deploy status; Pending is the default when nothing was recorded.
namespace resource_status {
inline constexpr const char* pending = "Pending";
inline constexpr const char* applied = "Applied";
inline constexpr const char* failed = "Failed";
inline constexpr const char* retrying = "Retrying";
inline constexpr const char* deleted = "Deleted";
}  // namespace resource_status

// Per (app, cluster) connectivity; Unknown is the default.
namespace connectivity {
inline constexpr const char* unknown = "Unknown";
inline constexpr const char* available = "Available";
inline constexpr const char* retrying = "Retrying";
}  // namespace connectivity

// Queue events and element states (lifecycle.md §6).
namespace event {
inline constexpr const char* instantiate = "Instantiate";
inline constexpr const char* terminate = "Terminate";
inline constexpr const char* update = "Update";
inline constexpr const char* update_delete = "UpdateDelete";
inline constexpr const char* read = "Read";
}  // namespace event
namespace queue_status {
inline constexpr const char* pending = "Pending";
inline constexpr const char* done = "Done";
inline constexpr const char* error = "Error";
inline constexpr const char* skip = "Skip";
}  // namespace queue_status

// Hook groups in the order the sync engine runs / stores them.
const std::vector<std::string>& hook_group_order();  // crd-install, pre-install, post-install, pre-delete, ...

// ---- the in-memory value --------------------------------------------------

// Manifest text and its hash (lowercase hex SHA-256 of the text).
struct Content {
  std::string hash;
  std::string text;
};
using ContentRef = std::shared_ptr<const Content>;

// Builds content with its hash (no interning; see AppContext::intern).
ContentRef make_content(std::string text);

struct Resource {
  std::string name;    // "<metadata.name>+<Kind>" (controllers may use other keys)
  ContentRef content;  // never null in a valid context
  const std::string& text() const { return content->text; }
  const std::string& hash() const { return content->hash; }
};

struct HookGroup {
  std::string event;                // "crd-install", "pre-install", ...
  std::vector<Resource> resources;  // in run order (hook weight, then name)
};

struct Cluster {
  std::string name;                 // "<provider>+<cluster>"
  int group = 0;                    // placement group (allOf: one each; anyOf: one shared)
  std::vector<Resource> resources;  // resorder
  std::vector<HookGroup> hooks;     // in hook_group_order()

  Resource* find(const std::string& resource_name);  // main list or hooks
  const Resource* find(const std::string& resource_name) const;
  // Sets the resource in the main list: replaces content in place when the
  // key exists (upstream: a duplicate key overwrites), else appends.
  void put(Resource r);
};

struct Dependency {
  std::string app;
  std::string op_status;  // "Ready" or "Deployed"
  int wait = 0;           // seconds after the condition holds
};

struct App {
  std::string name;
  std::vector<Dependency> dependencies;
  std::vector<Cluster> clusters;  // sorted by name once planned
  // Set by load(): the digest of the stored plan (clusters and resources).
  // Two loaded apps with the same digest have the same clusters and
  // resources. Empty for an app not loaded from the workspace.
  std::string plan_digest;
  // Set by load() when asked to leave this app's clusters out (they are
  // empty here, not in the workspace), or by a planner that reuses a stored
  // plan: save() then stores plan_digest, which must be stored already.
  bool elided = false;
  // Digest of everything that decided this plan, as the planner computed it
  // ("" when unknown); kept with the context.
  std::string inputs;

  Cluster* find_cluster(const std::string& cluster);
  const Cluster* find_cluster(const std::string& cluster) const;
};

// Who a context belongs to: a DIG, a logical cloud, a cluster (network intents).
struct Owner {
  std::string kind;    // resource kind id ("deploymentIntentGroup", "logicalCloud", "cluster")
  resource::Key key;
};

struct AppContext {
  std::string id;                           // int63 decimal text
  Owner owner;
  std::map<std::string, std::string> meta;  // Project, CompositeApp, Version, Release, DeploymentIntentGroup,
                                            // Namespace, Level, LogicalCloud, ... (string values)
  std::string status = status::created;     // CurrentState
  std::string desired;                      // DesiredState ("" until the first event)
  std::string parent;                       // parent context id, "" for a root
  std::vector<std::string> children;        // ChildContextIDs, in creation order
  std::string status_context;               // statusappctxid: where deploy status is kept ("" = this context)
  bool stop = false;                        // stopflag
  bool pending_terminate = false;           // PendingTerminateFlag
  std::string created;                      // RFC 3339
  int64_t revision = 0;                     // owner revision this plan was made for (0 = none)
  std::vector<App> apps;                    // apporder

  App* find_app(const std::string& app);
  const App* find_app(const std::string& app) const;
  // Content with `text`, shared with any identical content already interned
  // in this context (so per-cluster edits that agree are held once).
  ContentRef intern(std::string text);
  // Number of (app, cluster, resource) entries, hooks included.
  size_t resource_count() const;

  // The status context id to use: status_context or, when empty, id.
  const std::string& status_id() const { return status_context.empty() ? id : status_context; }

private:
  std::map<std::string, std::weak_ptr<const Content>> m_interned;
};

// ---- persistence ----------------------------------------------------------

// Stores a new context (all of it, in one transaction). Throws
// Error(conflict) if the id exists, Error(not_found) if the parent does not.
// A non-empty parent gets `id` appended to its children. Each app's plan is
// stored once per digest: an app planned as in an earlier context costs one
// row, whatever its size.
void save(store::Store& st, const AppContext& ctx);
// Loads a whole context. Throws Error(not_found) naming the id.
AppContext load(store::Store& st, const std::string& id);
// Per app of a stored context: the digest of its inputs ("" if unknown) and
// of its plan (cheap: no plan is read).
struct StoredApp {
  std::string inputs, plan_digest;
};
std::map<std::string, StoredApp> stored_apps(store::Store& st, const std::string& id);
// Two contexts of one update, with the apps whose plans are the same in both
// elided in both (see App::elided): what diff() needs, for the cost of the
// apps that changed.
struct ContextPair {
  AppContext old_ctx, new_ctx;
};
ContextPair load_changed(store::Store& st, const std::string& old_id, const std::string& new_id);
bool exists(store::Store& st, const std::string& id);
// Removes a context and, first, its children (recursively), with their
// status, queue and active-set rows; content no context uses is dropped.
// Throws Error(not_found) if absent.
void remove(store::Store& st, const std::string& id);
// The clusters `old_id` places an app on and `new_id` places none on,
// sorted. Reads only the plans that tell: the plans `old_id` alone has, then
// the others of `new_id` until every candidate is found.
std::vector<std::string> departed_clusters(store::Store& st, const std::string& old_id, const std::string& new_id);
// Calls `fn(app, cluster, resource)` for every main-list resource (hooks
// excluded) of a context, in order, without reading contents (cheap).
void for_each_resource_name(
    store::Store& st, const std::string& id,
    const std::function<void(std::string_view app, std::string_view cluster, std::string_view resource)>& fn);
// Context ids of an owner, oldest first.
std::vector<std::string> list(store::Store& st, const resource::Key& owner);

// Header fields without loading apps (cheap).
struct Header {
  std::string id, owner_kind, owner_key, status, desired, parent, status_context, created;
  std::map<std::string, std::string> meta;
  std::vector<std::string> children;
  bool stop = false, pending_terminate = false;
  int64_t revision = 0;
};
Header header(store::Store& st, const std::string& id);  // Error(not_found)

void set_status(store::Store& st, const std::string& id, const std::string& current);
void set_desired(store::Store& st, const std::string& id, const std::string& desired);
void set_stop(store::Store& st, const std::string& id, bool stop);
void set_pending_terminate(store::Store& st, const std::string& id, bool flag);
void set_meta(store::Store& st, const std::string& id, const std::string& name, const std::string& value);
void add_child(store::Store& st, const std::string& parent, const std::string& child);

// ---- deploy status (kept under the status context id) ---------------------

struct ResourceState {
  std::string app, cluster, resource;
  std::string status = resource_status::pending;
  std::string message;
  std::string time;
  std::string ready;  // last read-back readiness ("" unknown, "true", "false")
};
// Upserts one resource's deploy status (cheap: one cached statement).
void set_resource_status(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                         const std::string& resource, const std::string& status, const std::string& message,
                         const std::string& time);
void set_resource_ready(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                        const std::string& resource, const std::string& ready);
// Recorded states of a context (absent rows mean Pending), ordered by app, cluster, resource.
std::vector<ResourceState> resource_states(store::Store& st, const std::string& ctx);
std::optional<ResourceState> resource_state(store::Store& st, const std::string& ctx, const std::string& app,
                                            const std::string& cluster, const std::string& resource);
// Calls `fn(app, cluster, resource, status)` for every recorded state of a
// context, unordered, without messages or times (cheap: for counting).
void for_each_resource_status(store::Store& st, const std::string& ctx,
                              const std::function<void(std::string_view app, std::string_view cluster,
                                                       std::string_view resource, std::string_view status)>& fn);

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
std::vector<ClusterState> cluster_states(store::Store& st, const std::string& ctx);
// Drops every recorded resource/cluster state of `ctx` (for a fresh instantiate).
void clear_states(store::Store& st, const std::string& ctx);

// ---- event queue and active set --------------------------------------------

struct QueueEntry {
  int64_t seq = 0;
  std::string event;
  std::string ucid;  // the "update from" context for Update, else ""
  std::string status = queue_status::pending;
  std::string message;
};
// Appends an event (status Pending) and adds `ctx` to the active set; returns its seq.
int64_t enqueue(store::Store& st, const std::string& ctx, const std::string& event, const std::string& ucid = {});
std::optional<QueueEntry> next_pending(store::Store& st, const std::string& ctx);
void mark(store::Store& st, const std::string& ctx, int64_t seq, const std::string& status,
          const std::string& message = {});
std::vector<QueueEntry> queue(store::Store& st, const std::string& ctx);
std::vector<std::string> active_contexts(store::Store& st);
void deactivate(store::Store& st, const std::string& ctx);

// ---- diff -----------------------------------------------------------------

// How one (app, cluster) differs between an old and a new context.
struct ClusterDiff {
  std::string app, cluster;
  enum class Presence { both, added, removed } presence = Presence::both;  // cluster (or app) only in new / only in old
  std::vector<std::string> added;      // resource names only in new (main list, then hooks)
  std::vector<std::string> changed;    // in both, hash differs
  std::vector<std::string> removed;    // only in old
  std::vector<std::string> unchanged;  // in both, same hash
  bool empty() const { return added.empty() && changed.empty() && removed.empty(); }
};
// Per (app, cluster) of either context: apps in the new context's order then
// apps only in the old one; clusters by name. Hook groups count as resources.
// An app with the same plan digest in both (nothing of it changed; it may be
// elided) yields no entries.
std::vector<ClusterDiff> diff(const AppContext& old_ctx, const AppContext& new_ctx);

}  // namespace emco::appcontext
