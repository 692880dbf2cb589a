#pragma once
// tac's pieces shared by its files (not a public API).

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "core/lifecycle/runtime.hpp"
#include "core/store/store.hpp"

namespace emco::plugins::tac {

// The body upstream POSTs to a workflow client: the intent's spec.temporal
// as Go's encoding/json writes emcotemporalapi.WfTemporalSpec (field names
// and zero values of the Temporal SDK's StartWorkflowOptions, RetryPolicy
// and ActivityOptions, in struct order).
nlohmann::ordered_json workflow_body(const nlohmann::json& temporal);

// http://ENDPOINT:PORT/invoke/NAME of an intent's spec (workflowClient + temporal).
std::string invoke_url(const nlohmann::json& spec);

struct Answer {
  bool ok = false;       // 204: the client started the workflow
  std::string message;   // the client's answer ("HTTP 500: <body>") or the transport failure
};
// POSTs the workflow spec of `spec` to its client as upstream does; `where`
// names the intent in messages.
Answer invoke(const nlohmann::json& spec, std::chrono::milliseconds timeout);

// The OperationHooks of tac intents (hooks.cpp).
std::unique_ptr<lifecycle::OperationHooks> make_hooks();
// The OperationOwner of tac and workflow intents' anchors (operations.cpp).
std::unique_ptr<lifecycle::OperationOwner> make_owner();

}  // namespace emco::plugins::tac
