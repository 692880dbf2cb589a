#pragma once
// Drift of a deployed DIG (issue 24): what changed on the clusters behind
// emco's back since it delivered the running revision, read live, with no
// agent in the clusters; and its repair.
//
// For every (app, cluster, object) of the running revision (the DIG's
// current instantiated AppContext) the object is read back through the
// cluster's delivery Target (the same credentials, timeouts and TLS as
// delivery) and compared with the planned manifest by
// k8s::drifted_fields: only fields the plan sets count (status, server
// defaults and fields other managers own that emco never set are not drift);
// who changed a field is the manager owning it in metadata.managedFields.
// Clusters are read in parallel, at most `parallel` at a time.
//
//   changed  a field of the plan has another live value (or was removed)
//   deleted  the planned object is absent
//   extra    (Options::extra) a live object of a kind the plan deploys there,
//            labelled emco/deployment-id=<status context>-<app> for an app of
//            this DIG, that the plan does not contain
//
// A cluster that cannot be read (unreachable, refused) is reported with its
// error and its objects are not judged. Clusters delivered by a batching
// (GitOps) target are compared in their repository instead (sync::Batch::
// drifted: the branch fetched now, each object's file against what delivery
// would write; a hand edit is "changed", a removed file "deleted"; no
// field-level detail, no extra objects), and repaired by one commit of the
// planned content per repository.

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/lifecycle/runtime.hpp"
#include "core/resource/kinds.hpp"
#include "core/store/store.hpp"
#include "core/sync/target.hpp"
#include "core/util/clock.hpp"

namespace emco::lifecycle::drift {

struct Field {
  std::string path;       // ".spec.replicas"
  std::string manager;    // who owns the live value ("" = nobody: the field was removed)
  std::string operation;  // "Update" (kubectl edit, patch, a controller) or "Apply"
  std::string time;       // of that manager's last write
  std::string planned;    // JSON text
  std::string live;       // JSON text, "" when absent
};

enum class Kind { changed, deleted, extra };
const char* kind_name(Kind k);  // "changed", "deleted", "extra"

struct Object {
  std::string app;
  std::string cluster;   // "<provider>+<cluster>"
  std::string resource;  // "<name>+<Kind>"
  Kind kind = Kind::changed;
  std::vector<Field> fields;  // changed: the drifted fields
  std::string manifest;       // the planned manifest (changed, deleted); the live object's JSON (extra)
  std::string where;          // GitOps: the repository file (its content differs or it is absent)
};

struct ClusterResult {
  std::string cluster;
  size_t objects = 0;        // planned objects compared there
  bool reachable = true;     // false: the error says why; nothing was judged
  bool unreachable = false;  // the error is the cluster not answering (vs a refusal such as 403)
  std::string error;
};

struct Report {
  std::string context;         // the running revision's AppContext ("" when nothing is deployed)
  std::string status_context;  // where its deploy status is kept
  int64_t revision = 0;
  std::vector<ClusterResult> clusters;  // sorted by name
  std::vector<Object> objects;          // drifted objects, by app, cluster, resource
  bool drift() const { return !objects.empty(); }
  bool unreachable() const;  // some cluster could not be read
};

struct Options {
  int parallel = 16;  // clusters read at once
  bool extra = false;
  std::vector<std::string> apps, clusters;  // filters ("" = all)
  std::chrono::seconds timeout{60};         // network waits of a repository's read or commit (GitOps)
  // Makes the Target of a cluster; empty: the delivery targets of the running
  // context (cluster_targets). Tests pass fakes.
  sync::TargetFactory factory;
};

// Reads the clusters of `dig`'s running revision and compares. Throws
// Error(not_found) for a DIG that does not exist or an unknown app filter;
// a DIG with nothing deployed gives an empty report (context "").
Report check(store::Store& st, const Runtime& runtime, const resource::Key& dig, const Options& options);

// The drifted fields of one object: `planned` is the manifest (YAML or JSON
// text), `live` the live object's JSON text. Throws Error(invalid) when the
// manifest is not one object.
std::vector<Field> compare(std::string_view planned, std::string_view live);

struct RepairResult {
  size_t reapplied = 0;  // changed objects applied again (server-side apply, emco's fields forced)
  size_t recreated = 0;  // deleted objects applied again
  size_t pruned = 0;     // extra objects deleted (prune_extra)
  std::vector<std::string> failures;  // "<app> <cluster> <resource>: <why>"
};

// Re-applies the drifted objects of `report` (check()'s, with the same
// factory) through the clusters' delivery Targets (GitOps: the planned files
// committed back, one commit per repository), deletes extra objects when
// `prune_extra`, and appends the repair to the running context's meta
// "drift.repairs" (see repair_log).
RepairResult repair(store::Store& st, const Runtime& runtime, const Report& report,
                    const Options& options, bool prune_extra, Clock& clock);

// The repairs made on a DIG's running revision, `running` as
// plan::running_context finds it: [{"time", "repaired":
// [{"app","cluster","resource","drift","note"?}], "failures": [...]}], []
// when none or nullopt ("note": a GitOps repair's commit).
nlohmann::json repair_log(store::Store& st, const std::optional<std::string>& running);

// The report as JSON (the -o json of `emco dig diff --live`): {"context",
// "revision", "drift": bool, "clusters": [{"cluster","objects","reachable",
// "error"?, "unreachable"?}], "objects": [{"app","cluster","resource","drift",
// "fields": [{"path","manager","operation","time","planned","live"}] (kube) |
// "file" (GitOps)}]} with planned and live as JSON values (live null when
// absent).
nlohmann::json to_json(const Report& report);

}  // namespace emco::lifecycle::drift
