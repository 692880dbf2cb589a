// Status anchors: one place decides which status a ".../status" anchor
// answers with, for `emco get ANCHOR`, `emco ctl get` and batch files alike.

#include <nlohmann/json.hpp>

#include "core/lifecycle/lifecycle.hpp"
#include "core/status/status.hpp"
#include "core/util/error.hpp"

namespace emco::lifecycle {

using nlohmann::json;

json anchor_status(store::Store& st, const Runtime& runtime, const resource::Anchor& anchor) {
  const resource::Kind& k = *anchor.kind;
  auto r = st.get(anchor.key);
  if (!r) fail(ErrorKind::not_found, store::describe(k, anchor.key) + " does not exist");
  for (const auto& owner : runtime.operation_owners)
    if (owner->owns(k)) return owner->status(st, k, anchor.key, anchor.operation, anchor.query, live_targets(st, &runtime));
  if (k.id == "deploymentIntentGroup" || resource_planner(runtime, k.id)) {
    // EMCO's status query, with its parameters (?status=deployed&app=...):
    // live objects are read only for the queries that show them.
    auto q = status::parse_query(anchor.query);
    sync::TargetFactory live;
    if (q.ready() || q.output == "detail") live = live_targets(st, &runtime);
    if (k.id == "deploymentIntentGroup") return status::dig_status(st, anchor.key, q, live);
    return status::owned_status(st, k, anchor.key, q, live);
  }
  json out = {{"name", r->key.parts.back().second}};
  if (!r->state_info.empty()) {
    out["states"] = json::parse(r->state_info);
    out["deployedStatus"] = current_state(r->state_info);
  }
  return out;
}

}  // namespace emco::lifecycle
