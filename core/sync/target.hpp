#pragma once
// The delivery interface of the sync engine: one Target per cluster of an
// operation. Implementations: the KubeTarget adapter (core/lifecycle/
// targets.cpp, server-side apply to a cluster), later a GitOps target, and
// fakes in tests.
//
// Every method may be called from several worker threads at once (one
// worker per (app, cluster) job; jobs of different apps on one cluster share
// the cluster's Target). Failures are thrown as TargetError: transient()
// errors (unreachable, timeouts, 5xx, 429) are retried by the engine with
// backoff; the others mark the resource Failed.
//
// Batching targets (git) return a Batch from batch(): the engine then stages
// every step of the cluster's jobs there instead of calling apply/remove,
// and once every job of the run has ended it commits each distinct Batch
// once (one commit per repository); only then are the staged steps' statuses
// recorded. A failed commit records nothing final: transient failures are
// retried until the run's deadline (the operation stays pending and is
// resumed later), permanent ones mark the staged resources Failed.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/error.hpp"

namespace emco::sync {

class TargetError : public Error {
public:
  TargetError(bool transient, bool unreachable, std::string message)
      : Error(unreachable ? ErrorKind::unreachable : ErrorKind::failed, std::move(message)),
        m_transient(transient),
        m_unreachable(unreachable) {}
  // Worth retrying later without any change by the user.
  bool transient() const { return m_transient; }
  // The cluster could not be reached at all (connectivity becomes Retrying).
  bool unreachable() const { return m_unreachable; }

private:
  bool m_transient;
  bool m_unreachable;
};

// An object's text, shared rather than copied: the queue hands the engine
// the AppContext's interned contents (one text for every cluster that gets
// the same object), so an operation on 100,000 clusters holds no copy per
// (cluster, resource) in its steps or a batch's staged steps.
class SharedText {
public:
  SharedText() : m_text(empty()) {}
  SharedText(std::string text) : m_text(std::make_shared<const std::string>(std::move(text))) {}
  SharedText(const char* text) : SharedText(std::string(text)) {}
  // Shares `text` (an aliasing pointer into a larger object keeps that alive).
  explicit SharedText(std::shared_ptr<const std::string> text) : m_text(std::move(text)) {}
  const std::string& str() const { return *m_text; }

private:
  static const std::shared_ptr<const std::string>& empty() {
    static const auto text = std::make_shared<const std::string>();
    return text;
  }
  std::shared_ptr<const std::string> m_text;
};

// What a read of one object found.
struct ObjectState {
  bool present = false;
  bool ready = false;
  std::string reason;  // why not ready
};

// One step handed to a batching target. The views are valid during
// Batch::stage only (a million staged steps at 100,000 clusters: no copy of
// their names unless the batch keeps one).
struct Staged {
  std::string_view app;
  std::string_view cluster;   // "<provider>+<cluster>"
  std::string_view resource;  // "<name>+<Kind>"
  SharedText manifest;        // the object text
  bool remove = false;        // delete it (else write it)
};

// A staged step whose file in the repository is not what commit() would
// write (Batch::drifted).
struct StagedDrift {
  std::string app;
  std::string cluster;
  std::string resource;
  bool deleted = false;  // the file is absent (else its content differs)
  std::string where;     // the file's path in the repository
};

class Batch {
public:
  virtual ~Batch() = default;
  // Records one step. The engine stages from its worker threads, one
  // thread at a time (a batch serializes staging anyway); other threads may
  // meanwhile create targets of the batch. Throws TargetError (not
  // transient) when the step cannot be staged.
  virtual void stage(const Staged& step) = 0;
  // Delivers everything staged, on the thread that called sync::run (it may
  // read the workspace). Returns the note recorded with each staged status
  // ("commit <id>", "unchanged at <id>"). Throws TargetError; a transient one
  // is retried with backoff, and a later commit() must deliver the same.
  // Network waits end by `deadline` (the run's --timeout) with a transient
  // TargetError.
  virtual std::string commit(std::chrono::steady_clock::time_point deadline) = 0;
  // Drift (lifecycle/drift.hpp): reads the repository as it is now and
  // returns the staged steps whose file differs from what commit() would
  // write; the steps stay staged, so a commit() afterwards writes them back.
  // On the calling thread; throws TargetError as commit() does. Batches that
  // cannot read their destination back keep this default (a permanent error).
  virtual std::vector<StagedDrift> drifted(std::chrono::steady_clock::time_point deadline) {
    (void)deadline;
    throw TargetError(false, false, "this target cannot read its deliveries back");
  }
};

class Target {
public:
  virtual ~Target() = default;
  // Checks the cluster answers; throws TargetError(transient, unreachable) when not.
  virtual void probe() = 0;
  // Applies one object (YAML or JSON text, one document). `create_only`:
  // create it when absent, leave an existing object alone (CRDs).
  virtual void apply(std::string_view manifest, bool create_only) = 0;
  // Deletes the object the manifest names; false when it was absent.
  virtual bool remove(std::string_view manifest) = 0;
  // Presence and readiness of the live object the manifest names.
  virtual ObjectState state(std::string_view manifest) = 0;
  // The live object as JSON text, "" when absent (status output=detail).
  virtual std::string read(std::string_view manifest) = 0;
  // Every live object of `kind` in `api_version` as a JSON array text (in
  // namespace `ns`, all namespaces when empty; cluster-scoped kinds ignore
  // it). For readers of live state (dtc's service discovery reads Nodes).
  // Throws TargetError; targets that cannot read a cluster back (git) keep
  // this default, which throws a permanent one.
  virtual std::string list(std::string_view api_version, std::string_view kind, std::string_view ns) {
    (void)api_version, (void)ns;
    throw TargetError(false, false, "this target cannot list " + std::string(kind) + " objects");
  }
  // Non-null for batching targets (see the file comment); the Batch may be
  // shared by the Targets of several clusters (one per git repository).
  virtual Batch* batch() { return nullptr; }
};

// Makes the Target of cluster `cluster` ("<provider>+<cluster>") for objects
// of namespace `ns` (the context namespace). Throws Error when the cluster
// cannot be used at all (no kubeconfig): the engine marks its jobs Failed.
using TargetFactory = std::function<std::shared_ptr<Target>(const std::string& cluster, const std::string& ns)>;

}  // namespace emco::sync
