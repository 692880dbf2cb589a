#pragma once
// Lifecycle operations and state rules for resources that keep a stateInfo
// (deployment intent groups, logical clouds, cluster network intents).
//
// stateInfo = {"statusctxid": "<ctx>", "actions": [{"state","instance","time","revision"}]}
// (lifecycle.md §1). The current state is the last action's state.

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/resource/kinds.hpp"
#include "core/store/store.hpp"
#include "core/util/clock.hpp"

namespace emco::lifecycle {

// The stateInfo a new lifecycle resource starts with ("Created").
std::string initial_state_info(Clock& clock);
// The current state ("Created", "Approved", ...), or "" when there is none.
std::string current_state(const std::string& state_info);

// Checks that a stored resource may be modified / deleted in its current
// state; throws Error(conflict) saying why not and what to do instead.
void check_modify_allowed(const resource::Kind& k, const store::Resource& existing);
void check_delete_allowed(const store::Store& st, const resource::Kind& k, const store::Resource& existing);


// Runs lifecycle operation `op` ("approve", "instantiate", ...) on the
// resource `key` of kind `k`, with the document body (rollback revision etc.).
// Runs its own write transaction. Throws Error on a state the operation does
// not accept (conflict) or an operation not available in this build (failed).
std::string run_operation(store::Store& st, const resource::Kind& k, const resource::Key& key, const std::string& op,
                          const nlohmann::json& body, Clock& clock);

}  // namespace emco::lifecycle
