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

#include <functional>
#include <memory>
#include <string>
#include <string_view>

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

// What a read of one object found.
struct ObjectState {
  bool present = false;
  bool ready = false;
  std::string reason;  // why not ready
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
  // End of an operation on this cluster: targets that batch (git) deliver
  // here. Direct targets do nothing.
  virtual void flush() {}
};

// Makes the Target of cluster `cluster` ("<provider>+<cluster>") for objects
// of namespace `ns` (the context namespace). Throws Error when the cluster
// cannot be used at all (no kubeconfig): the engine marks its jobs Failed.
using TargetFactory = std::function<std::shared_ptr<Target>(const std::string& cluster, const std::string& ns)>;

}  // namespace emco::sync
