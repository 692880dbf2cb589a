#pragma once
// tac (the temporal action controller) and the workflow manager: intent kinds
// for workflow hooks and their worker DIGs, the hooks they run around a DIG's
// instantiate, update and terminate, and workflow intents.

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/lifecycle/runtime.hpp"
#include "core/store/store.hpp"

namespace emco::plugins::tac {

// How a Temporal frontend's HTTP API is reached (the workflow manager's
// status and cancel). `server`: "host:port" (http) or an http:// or https://
// URL; TLS as for clusters: a CA, a client certificate and key (PEM text),
// or no verification.
struct TemporalAccess {
  std::string server;
  std::string ns = "default";  // the Temporal namespace
  std::string ca_pem, cert_pem, key_pem, server_name;
  bool insecure_skip_verify = false;
};

// Upstream's WfTemporalStatusQuery: which calls to make for the workflow of
// a workflow or tac intent (its spec's workflowStartOptions.ID unless
// workflowID is given).
struct StatusQuery {
  std::string workflow_id, run_id;
  bool describe = false;   // runDescribeWfExec
  bool history = false;    // getWfHistory
  std::string query_type;  // queryType ("" = none)
  std::string query_args;  // queryParams as a JSON array ("" = none)
};

// Upstream's WfTemporalStatusResponse as JSON: workflowID, runID and, as
// asked, workflowExecutionDescription, workflowHistory, workflowQueryResult
// (the frontend's answers). Error(not_found) for a missing intent,
// Error(unreachable) when the frontend cannot be reached, Error(failed) with
// its answer when it refuses.
nlohmann::json workflow_status(const store::Store& st, const resource::Key& intent, const TemporalAccess& access,
                               const StatusQuery& q);
// Cancels (or, `terminate`, terminates) the workflow of a workflow or tac
// intent; errors as workflow_status.
void workflow_cancel(const store::Store& st, const resource::Key& intent, const TemporalAccess& access,
                     const std::string& workflow_id, const std::string& run_id, bool terminate,
                     const std::string& reason);
// Starts the workflow of a workflow intent through its workflow client
// (upstream's start); returns the client's answer, Error(failed) with it
// when the client did not answer 204.
std::string workflow_start(const store::Store& st, const resource::Key& intent);

// Registers the plugin with the runtime (plugins/builtin.cpp).
void install(lifecycle::Runtime& runtime);

}  // namespace emco::plugins::tac
