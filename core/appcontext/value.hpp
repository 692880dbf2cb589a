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
// This header: the vocabulary and the in-memory value. Its rows are in
// persistence.hpp (the plan), header_rows.hpp, status_rows.hpp and
// queue_rows.hpp; diff.hpp compares two values. appcontext.hpp includes all.
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

// Per-resource deploy status (meanings: core/sync/engine.hpp ResourceStatus);
// Pending is the default when nothing was recorded.
namespace resource_status {
inline constexpr const char* pending = "Pending";
inline constexpr const char* applied = "Applied";
inline constexpr const char* failed = "Failed";
inline constexpr const char* retrying = "Retrying";
inline constexpr const char* deleted = "Deleted";
inline constexpr const char* skipped = "Skipped";
inline constexpr const char* absent = "Absent";
inline constexpr const char* not_created = "NotCreated";  // never created, nothing queued (unrecorded, or retried until stopped)
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
}  // namespace emco::appcontext
