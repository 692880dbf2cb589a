// The default planner of DIG operations.

#include "core/lifecycle/lifecycle.hpp"
#include "core/util/error.hpp"

namespace emco::lifecycle {

Planner default_planner() {
  return [](store::Store&, const resource::Key&) -> appcontext::AppContext {
    fail(ErrorKind::failed, "planning deployment intent groups is not available in this build",
         "this build records and validates resources; deployment arrives with the planner (core/plan)");
  };
}

}  // namespace emco::lifecycle
