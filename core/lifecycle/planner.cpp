// The default planner of DIG operations: core/plan.

#include "core/lifecycle/lifecycle.hpp"
#include "core/plan/plan.hpp"

namespace emco::lifecycle {

Planner default_planner(const Runtime& runtime, sync::TargetFactory live) {
  return [&runtime, live = std::move(live)](store::Store& st, const resource::Key& dig, const std::string& status_context,
            const std::string& update_from) {
    plan::Options o;
    o.status_context_id = status_context;  // deployment-id labels stay stable across updates
    o.update_from = update_from;
    o.registry = &runtime.controllers;
    o.live = live;
    return plan::build(st, dig, o);
  };
}

}  // namespace emco::lifecycle
