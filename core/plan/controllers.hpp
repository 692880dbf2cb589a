#pragma once
// The controller plugin interface: what emco's placement and action
// controllers implement (spec/placement-and-actions.md §4, lifecycle.md §8).
//
// The planner (core/plan) runs the controllers a DIG's group intents name, in
// EMCO's order: placement controllers by ascending priority, then the anyOf
// pruning, then action controllers by ascending priority (ties by name).
// Each call receives only its own intent (the intent name from the group
// intent map, under the DIG's key) and the AppContext being built. The store
// is read-only: controllers read their intents and cluster data from it and
// change nothing but the AppContext. Errors are thrown as emco::Error naming
// the intent document; any error aborts the plan. A placement controller that
// needs live cluster state (hpa reads Nodes) reads it through Call::live, the
// delivery mechanism's read interface, and says through Call::removed why it
// removed each cluster (emco dig explain shows it).
//
// Implementations live in plugins/ (one room each) and are registered by the
// composition root (plugins/builtin.cpp) into the Registry of the runtime.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/appcontext/appcontext.hpp"
#include "core/resource/kinds.hpp"
#include "core/store/store.hpp"
#include "core/sync/target.hpp"

namespace emco::controllers {

struct Call {
  const store::Store& store;
  resource::Key dig;        // the deployment intent group's key
  std::string intent;       // the intent name given for this controller in the group intent
  std::string update_from;  // on update: the running context id ("" otherwise)
  // Reads live objects of a cluster ("<provider>+<cluster>") with
  // sync::Target::list; empty when the plan is made without cluster access
  // (a cluster is then unreadable, which a controller reports per cluster).
  sync::TargetFactory live;
  // Told why a placement controller removed `cluster` from `app` (may be empty).
  std::function<void(const std::string& app, const std::string& cluster, const std::string& why)> removed;
  // emco dig explain: a placement controller that would fail because no
  // cluster of an app qualifies removes them all (saying why) and returns.
  bool explain_only = false;
};

class PlacementController {
public:
  virtual ~PlacementController() = default;
  // May remove clusters from apps of `ctx` (FilterClusters upstream).
  virtual void filter(const Call& call, appcontext::AppContext& ctx) const = 0;
};

class ActionController {
public:
  virtual ~ActionController() = default;
  // May edit, add or remove resources of `ctx` (UpdateAppContext upstream).
  virtual void update(const Call& call, appcontext::AppContext& ctx) const = 0;
};

// Implementations by controller name (the name registered under `controllers`).
class Registry {
public:
  void add_placement(const std::string& name, std::unique_ptr<PlacementController> c);
  void add_action(const std::string& name, std::unique_ptr<ActionController> c);
  const PlacementController* placement(const std::string& name) const;  // nullptr if none
  const ActionController* action(const std::string& name) const;        // nullptr if none
  // Every registered name, sorted (placement and action together).
  std::vector<std::string> names() const;

private:
  std::map<std::string, std::unique_ptr<PlacementController>> m_placement;
  std::map<std::string, std::unique_ptr<ActionController>> m_action;
};

}  // namespace emco::controllers
