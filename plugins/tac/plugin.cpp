// tac's and the workflow manager's intent kinds (upstream src/tac and
// src/workflowmgr json-schemas), the tac action controller, the hooks and the
// operations of their anchors.

#include "plugins/tac/plugin.hpp"

#include <memory>

#include "plugins/tac/tac.hpp"

namespace emco::plugins::tac {

using namespace emco::resource;

namespace {

// Go time.Duration fields are nanoseconds.
Schema retry_policy() {
  return obj({opt("InitialInterval", integer()), opt("BackoffCoefficient", number()), opt("MaximumInterval", integer()),
              opt("MaximumAttempts", integer()), opt("NonRetryableErrorTypes", array(str()))});
}

// emcotemporalapi.WfTemporalSpec. Field names match case-insensitively (as
// Go decodes them) and are stored in the SDK's spelling.
Schema temporal_spec() {
  Schema activity = obj({opt("TaskQueue", str()), opt("ScheduleToCloseTimeout", integer()),
                         opt("ScheduleToStartTimeout", integer()), opt("StartToCloseTimeout", integer()),
                         opt("HeartbeatTimeout", integer()), opt("WaitForCancellation", boolean()),
                         opt("ActivityID", str()), opt("RetryPolicy", retry_policy())});
  return obj({
      opt("workflowClientName", str()),
      opt("workflowStartOptions",
          obj({opt("ID", str()), opt("TaskQueue", str()), opt("WorkflowExecutionTimeout", integer()),
               opt("WorkflowRunTimeout", integer()), opt("WorkflowTaskTimeout", integer()),
               opt("WorkflowIDReusePolicy", integer()), opt("WorkflowExecutionErrorWhenAlreadyStarted", boolean()),
               opt("RetryPolicy", retry_policy()), opt("CronSchedule", str()), opt("Memo", map_of(any())),
               opt("SearchAttributes", map_of(any()))})),
      // Upstream's test-tac example sends workflowParams.startToCloseTimeout,
      // which its decoder drops.
      opt("workflowParams", obj({opt("activityOptions", map_of(activity)), opt("activityParams", map_of(map_of(str())))},
                                {"startToCloseTimeout"})),
  });
}

Schema workflow_client() { return obj({opt("clientEndpointName", str()), opt("clientEndpointPort", integer(1, 65535))}); }

// tac does its work around the operation (the hooks), not in the plan: the
// controller registered as "tac" lets group intents name it, as upstream's
// examples do, and leaves the AppContext as it is.
class TacAction : public controllers::ActionController {
public:
  void update(const controllers::Call&, appcontext::AppContext&) const override {}
};

}  // namespace

void install(lifecycle::Runtime& runtime) {
  auto& kinds = runtime.kinds;
  kinds.push_back({.id = "workflowHookIntent",
                   .parent = "deploymentIntentGroup",
                   .elements = {"workflowHookIntent"},
                   .collection = "temporal-action-controller",
                   .service = "tac",
                   .display = "tac intent",
                   .spec = obj({opt("hookType", one_of({"pre-install", "post-install", "pre-update", "post-update",
                                                        "pre-termination", "post-termination"})),
                                opt("hookBlocking", boolean()), req("workflowClient", workflow_client()),
                                req("temporal", temporal_spec())}),
                   .operations = {"cancel"}});
  kinds.push_back({.id = "workerIntent",
                   .parent = "workflowHookIntent",
                   .elements = {"workerIntent"},
                   .collection = "workers",
                   .service = "tac",
                   .display = "tac worker",
                   .spec = obj({req("startToCloseTimeout", integer()), req("deploymentIntentGroup", str(128)),
                                req("compositeApp", str(128)), req("compositeAppVersion", str(128))}),
                   // The worker DIG may be defined later in the same files;
                   // a missing one fails the operation that needs it.
                   .references = {soft_ref("deploymentIntentGroup")}});
  kinds.push_back({.id = "workflowIntent",
                   .parent = "deploymentIntentGroup",
                   .elements = {"workflowIntent"},
                   .collection = "temporal-workflow-intents",
                   .service = "workflowMgr",
                   .display = "workflow intent",
                   .spec = obj({req("workflowClient", workflow_client()), req("temporal", temporal_spec())}),
                   .operations = {"start", "cancel"}});
  runtime.controllers.add_action("tac", std::make_unique<TacAction>());
  runtime.hooks.push_back(make_hooks());
  runtime.operation_owners.push_back(make_owner());
  runtime.plugins.push_back({.name = "tac",
                             .summary = "workflow hooks around DIG instantiate, update and terminate (their workflow "
                                        "clients and worker DIGs), and workflow intents started, queried and cancelled",
                             .services = {"tac", "workflowMgr"},
                             .runs = true});
}

}  // namespace emco::plugins::tac
