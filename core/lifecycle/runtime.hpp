#pragma once
// The runtime: everything core does not implement itself but reaches through
// an interface — the placement and action controllers, the delivery
// mechanisms (kube, GitOps), the cluster-admin operations logical clouds need,
// and the intent kinds and content preparers plugins add to the model.
//
// The composition root (plugins/builtin.cpp) builds one Runtime per process;
// the CLI passes it down (lifecycle::OperationOptions::runtime,
// plan::Options::registry, manifest::BatchOptions::runtime). Nothing in core
// names a plugin: a new controller, delivery mechanism or intent kind is new
// files in plugins/ plus one line in the composition root.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/appcontext/appcontext.hpp"
#include "core/lifecycle/rollout_strategy.hpp"
#include "core/plan/controllers.hpp"
#include "core/resource/kinds.hpp"
#include "core/sync/target.hpp"
#include "core/util/clock.hpp"

namespace emco::lifecycle {

// How the workspace says a cluster is reached, read by core from the
// cluster's registration (its attached kubeconfig, spec.gitOps and the sync
// objects that names).
struct ClusterAccess {
  std::string id;        // "<provider>+<cluster>"
  std::string provider;
  std::string cluster;
  std::string kubeconfig;  // the credentials delivery uses ("" = none): the cluster's own, or a level-1 cloud user's
  std::string gitops_type;                   // spec.gitOps.gitOpsType ("" = no gitOps registration)
  std::string gitops_reference_object;       // spec.gitOps.gitOpsReferenceObject
  std::string gitops_resource_object;        // spec.gitOps.gitOpsResourceObject
  std::map<std::string, std::string> reference_kv;  // the reference sync object's kv pairs
  std::map<std::string, std::string> resource_kv;   // the resource sync object's (= reference_kv when the same)
  std::string error;  // why the registration cannot be used (a sync object it names is missing), "" = usable
};

// The operation a drive delivers, as a batching mechanism (git) describes it
// in its commits and repository layout. Read when a batch commits.
struct OperationInfo {
  enum class Kind { instantiate, update, terminate };
  Kind kind = Kind::instantiate;
  std::string project, composite_app, composite_app_version, dig;
  long revision = 1;
  std::string status_context;  // the context id naming the deployment (stable across updates)
  std::string ns;              // the context namespace ("" = default)
  std::string level;           // the context's Level meta ("" = unset)
  std::string logical_cloud;
  std::string logical_cloud_namespace;  // set on a level-1 logical cloud's own context
  std::set<std::string> departed;       // on update: clusters the update leaves entirely
};

// What one drive of a context gives a delivery mechanism.
struct DriveContext {
  std::filesystem::path cache_dir;           // where a mechanism keeps caches (the workspace's .emco/)
  std::function<OperationInfo()> operation;  // the operation being delivered (throws when none is)
};

// Makes the Target of one cluster for objects of namespace `ns`; throws
// Error when the cluster cannot be delivered to (the engine fails its jobs).
using ClusterTargets = std::function<std::shared_ptr<sync::Target>(const ClusterAccess& cluster, const std::string& ns)>;

// A way of delivering to clusters (plugins/targets/*).
class DeliveryMechanism {
public:
  virtual ~DeliveryMechanism() = default;
  // "kube", "gitops": for messages.
  virtual std::string name() const = 0;
  // Whether clusters registered like `c` are delivered by this mechanism.
  virtual bool delivers(const ClusterAccess& c) const = 0;
  // The targets of one drive: state shared by the drive's targets (one git
  // batch per repository) lives in the returned function. `direct` reaches a
  // cluster's API server with its kubeconfig (the runtime's direct
  // mechanism), for mechanisms that read objects back that way; it is empty
  // for the direct mechanism itself.
  virtual ClusterTargets session(const DriveContext& drive, const ClusterTargets& direct) const = 0;
  // Called as a DIG operation that delivers starts, before it plans: a
  // mechanism with a costly one-time set-up may start it in the background
  // when `st` shows it may be needed, so that it overlaps the planning.
  // Returns at once; the default does nothing.
  virtual void warm_up(const store::Store& st) const { (void)st; }
};

// What a standard or privileged logical cloud needs of a cluster beyond
// delivery (spec/logical-clouds.md "Level 1").
class ClusterAdmin {
public:
  virtual ~ClusterAdmin() = default;
  // Approves certificate signing request `csr` on `cluster` with its admin
  // kubeconfig and waits for its certificate until `deadline` or `interrupt`;
  // returns it as the API holds it (base64). Error(failed) when denied,
  // Error(pending) when not signed in time, Error(unreachable) and others as
  // the cluster answers.
  virtual std::string issue_certificate(const std::string& cluster, const std::string& admin_kubeconfig,
                                        const std::string& csr, std::chrono::steady_clock::time_point deadline,
                                        const std::atomic<bool>* interrupt) const = 0;
  // The user's kubeconfig: cluster `ref` at the admin kubeconfig's server and
  // CA, context "<user>@<ref>" in `ns`, the issued certificate and the key.
  virtual std::string user_kubeconfig(const std::string& ref, const std::string& user, const std::string& ns,
                                      const std::string& admin_kubeconfig, const std::string& certificate_b64,
                                      const std::string& key_pem) const = 0;
};

// Checks and rewrites a file attached to a resource of one kind before it is
// stored (kubeconfigs: parsed, certificate files inlined). `data`: the file's
// content, `path`: where it was read from, `label`: how errors name it.
using ContentPreparer =
    std::function<std::string(const std::string& data, const std::string& path, const std::string& label)>;

// What a ChildPlanner is given: the parent context as delivered and a way
// to read its clusters' live objects.
struct ChildCall {
  const store::Store& store;                      // read only
  const appcontext::Owner& owner;                 // the parent's owner (a DIG), read without loading it
  // The parent context (Instantiated), loaded on the first call: most
  // deployments need no children, which a planner tells from the owner alone,
  // and loading a context of 30,000 resources costs what half an update does.
  std::function<const appcontext::AppContext&()> parent;
  sync::TargetFactory live;                       // reads live objects (lifecycle::live_targets)
  std::chrono::steady_clock::time_point deadline; // the operation's --timeout
  const std::atomic<bool>* interrupt = nullptr;   // Ctrl-C
};

// Makes the child contexts of a delivered deployment (spec/lifecycle.md §7;
// dtc's service discovery). The lifecycle asks every planner once the parent
// is Instantiated (after instantiate and update), gives each returned
// context an id, the parent and the parent's owner, stores it as a child of
// the parent and delivers it through the sync engine like any context.
class ChildPlanner {
public:
  virtual ~ChildPlanner() = default;
  virtual std::string name() const = 0;  // for messages ("sds")
  // The children `call.parent` needs (apps, clusters, resources, meta; id,
  // parent and owner are filled in by the caller); none when the parent needs
  // none. May wait for live state until call.deadline: Error(pending) when it
  // did not come in time; other Errors name the document at fault.
  virtual std::vector<appcontext::AppContext> children(const ChildCall& call) const = 0;
};

// Checks a resource of one kind beyond its schema and references, when a
// batch stores it (`put`) or deletes it (`remove`), inside the batch's write
// transaction (the batch's earlier documents are visible in `st`). Throws
// Error (invalid: the resource is wrong; conflict: its owner's state forbids
// the change) with a message naming what is wrong; the batch prefixes the
// document's FILE:LINE. Either function may be empty.
struct ResourceCheck {
  std::function<void(const store::Store& st, const store::Resource& r)> put;
  std::function<void(const store::Store& st, const store::Resource& r)> remove;
};

// A plugin that owns the lifecycle of a resource kind that is neither a DIG
// nor a logical cloud (ncm: a cluster's network intents, spec/lifecycle.md
// §4). Core runs the operations — apply, terminate, stop, with the states
// Created → Applied → Terminated, InstantiateStopped / TerminateStopped — and
// delivers, persists, resumes and stops the context through the sync engine
// like a DIG's; the planner says what the context holds.
class ResourcePlanner {
public:
  virtual ~ResourcePlanner() = default;
  virtual std::string kind() const = 0;      // the kind whose apply/terminate/stop it plans ("cluster")
  virtual std::string what() const = 0;      // what is applied, for messages ("network intents")
  // The kinds below kind() whose resources the context is made of
  // ("network", "providerNetwork"): they cannot change while it is applied.
  virtual std::vector<std::string> inputs() const = 0;
  // The context applying the resource `key`: apps, clusters, resources and
  // meta (id, owner and created are filled in by the caller). Error naming
  // the document on bad intents.
  virtual appcontext::AppContext plan(const store::Store& st, const resource::Key& key) const = 0;
};

struct OperationOptions;  // lifecycle.hpp
struct OperationResult;   // lifecycle.hpp

// Lifecycle operations a plugin runs on resources of its own kinds (ca-certs'
// enrollment/... and distribution/... of a CA certificate): lifecycle::run
// hands an operation anchor of a kind no core lifecycle handles to the first
// owner that owns() the kind. The owner keeps the state in the resource's
// stateInfo and makes AppContexts owned by the resource (appcontext::Owner =
// the resource), saves and queues them and drives them with the toolkit in
// lifecycle.hpp (finish_queued, deliver_into), so they are persisted,
// resumed by `emco sync` and stopped like any context; deleting the resource
// removes them (lifecycle::before_delete). For one apply/terminate/stop
// lifecycle whose state machine core can run, a ResourcePlanner is the
// simpler form; an owner is for operations of their own shape (ca-certs'
// two phases, each waiting on the clusters' answers).
class OperationOwner {
public:
  virtual ~OperationOwner() = default;
  virtual std::string name() const = 0;  // for messages ("ca-certs")
  // Whether this owner runs the operation anchors of kind `k`.
  virtual bool owns(const resource::Kind& k) const = 0;
  // Runs `op` (one of k.operations) on the resource `key`, as lifecycle::run
  // documents: Error(not_found|conflict|invalid|failed) naming the document
  // at fault, and then nothing changed; delivery ends as the result says.
  virtual OperationResult run(store::Store& st, const resource::Kind& k, const resource::Key& key,
                              const std::string& op, const nlohmann::json& body, Clock& clock,
                              const OperationOptions& options) const = 0;
  // The answer to the status anchor `what` ("status", "enrollment/status")
  // of the resource `key` of kind `k`, with its query string `query` (EMCO's
  // parameters): the body upstream's service sends. `live` reads objects
  // back for `ready`. Error(not_found) for the resource or an anchor it does
  // not answer, Error(invalid) for a bad query.
  virtual nlohmann::json status(store::Store& st, const resource::Kind& k, const resource::Key& key,
                                const std::string& what, const std::string& query,
                                const sync::TargetFactory& live) const = 0;
};

// Where hooks run around a DIG's lifecycle operations (upstream tac's
// hookType values): "pre-install" ... "post-termination".
enum class HookPoint { pre_install, post_install, pre_update, post_update, pre_termination, post_termination };
std::string hook_point_name(HookPoint p);

// One persisted step of an operation's hooks, as a provider describes it
// when the operation is recorded. Core stores the steps with the context
// (meta "hooks"), runs each once and records how it ended; a step a killed
// process had started when it died runs again on resume, saying so.
struct HookStep {
  std::string provider;  // the OperationHooks::name() that runs it
  std::string name;      // for logs and errors ("tac hook 'pre1'", "worker dig 'w1': instantiate")
  std::string ref;       // what the provider needs to find it again (a resource key, an action)
  bool blocking = true;  // a failure fails the operation (before delivery: undoes it)
};

struct HookCall {
  store::Store& st;
  const resource::Key& dig;
  const std::string& context;  // the operation's context (update: the new one)
  const std::string& operation;  // "instantiate", "update", "terminate"
  long revision = 0;
  HookPoint point = HookPoint::pre_install;
  const OperationOptions& options;  // nested operations (worker DIGs) run with these
  Clock& clock;
  std::chrono::steady_clock::time_point deadline;
  // Keeps the operation's context held by this process: call it at least
  // every few seconds while a step waits (cheap when called more often).
  std::function<void()> keepalive;

  // Runs `work` (a blocking call that uses neither the store nor this
  // HookCall: an HTTP request) on a thread of its own while this thread
  // calls keepalive every second, so a long call does not let another
  // process take the context over. Returns when work does; rethrows what
  // it throws.
  void keep_alive_during(const std::function<void()>& work) const;
};

struct HookOutcome {
  bool ok = false;
  std::string message;  // one line: "workflow client answered 204", the client's answer on failure
  std::string log;      // output kept in the operation's log (a command's stdout/stderr)
};

// Where a DIG's rollout strategy comes from (rollout.hpp; plugins/rollout:
// the emco-rollout-strategies resource under the DIG). Asked inside the
// transaction that records an instantiate or update.
class RolloutSource {
public:
  virtual ~RolloutSource() = default;
  // The strategy of `dig`, none when it has none (delivered all at once).
  // Error(invalid) naming the resource when it cannot be used.
  virtual std::optional<rollout::Strategy> strategy(const store::Store& st, const resource::Key& dig) const = 0;
};

// Work a plugin runs around DIG operations (tac's workflow hooks and worker
// DIGs, emco's exec hooks). When instantiate, update or terminate is
// recorded, core asks every provider for its steps at the operation's pre
// and post points and stores them with the context in the same transaction;
// the pre steps run before the context is delivered, the post steps once it
// is delivered; `emco sync` continues them after an interruption.
class OperationHooks {
public:
  virtual ~OperationHooks() = default;
  virtual std::string name() const = 0;
  // The steps at `point` of an operation on DIG `dig`, in the order they
  // run. Error(invalid|not_found) naming the document at fault (a hook whose
  // worker DIG does not exist): the operation is then refused.
  virtual std::vector<HookStep> steps(const store::Store& st, const resource::Key& dig, HookPoint point) const = 0;
  // Runs one step; the hook's own failures are outcomes, not exceptions.
  virtual HookOutcome run(const HookCall& call, const HookStep& step) const = 0;
};

// One plugin, for help texts and for telling what emco runs from what it only stores.
struct PluginInfo {
  std::string name;     // "gac", "dtc", "kube", ...
  std::string summary;  // one line
  std::vector<std::string> services;  // the upstream services whose intents it stores ("dtc", "ovnaction", ...)
  bool runs = false;                  // false: its intents are stored, but emco has no controller for them yet
};

struct Runtime {
  controllers::Registry controllers;
  // Delivery mechanisms in the order they are asked (the first that
  // delivers a cluster is used); `direct` is the one reaching a cluster's
  // API server with its kubeconfig (also used to read objects back).
  std::vector<std::unique_ptr<DeliveryMechanism>> delivery;
  const DeliveryMechanism* direct = nullptr;
  std::unique_ptr<ClusterAdmin> cluster_admin;
  std::map<std::string, ContentPreparer> preparers;  // by kind id
  std::vector<resource::Kind> kinds;                  // intent kinds the plugins add (moved into core/resource by the composition root)
  std::vector<std::unique_ptr<ChildPlanner>> child_planners;  // asked in order after a DIG is delivered
  std::map<std::string, ResourceCheck> checks;                // by kind id
  std::vector<std::unique_ptr<ResourcePlanner>> resource_planners;  // at most one per kind
  std::vector<std::unique_ptr<OperationOwner>> operation_owners;  // run the operations of their own kinds
  std::vector<std::unique_ptr<OperationHooks>> hooks;              // asked in order when a DIG operation is recorded
  std::unique_ptr<RolloutSource> rollouts;                         // none: every DIG is delivered all at once
  std::vector<PluginInfo> plugins;
};

// What emco stores but cannot run, derived from the plugins' PluginInfo (so
// the answers change by themselves as controllers land).
//
// The plugin that stores resources of kind `k` (its service is one of the
// plugin's services) when that plugin does not run them; nullptr otherwise.
const PluginInfo* stored_only_plugin(const Runtime& runtime, const resource::Kind& k);
// For a controller registration (anchor `controllers`) named `name` of
// `type` ("placement"/"action"; others take no part in planning): "" when the
// runtime implements it or its type takes no part in planning, else the
// feature that is missing (the matching plugin's name, or `name`).
std::string missing_controller(const Runtime& runtime, const std::string& name, const std::string& type);
// The apply-time warning for resources of plugin `p`, e.g. "dtc intents are
// stored, but emco has no dtc controller yet; instantiate will fail" (the
// consequence named after where `k` lives: under a DIG or not; a controller
// registration kind says "dtc controllers are registered, ...").
std::string stored_only_warning(const PluginInfo& p, const resource::Kind& k);
// Every plugin that does not run, by name (for docs and tests).
std::vector<std::string> stored_only_features(const Runtime& runtime);
// The resource planner of kind `k`, nullptr when none.
const ResourcePlanner* resource_planner(const Runtime& runtime, const std::string& kind_id);

}  // namespace emco::lifecycle
