#pragma once
// The deployment planner (spec/placement-and-actions.md): from a deployment
// intent group to an AppContext, offline and without touching the store.
//
//   auto ctx = plan::build(store, dig_key, {});   // then appcontext::save(...)
//
// build() loads the DIG, its group intents (the `genericPlacementIntent`
// entry plus one entry per controller), the logical cloud (must exist; its
// namespace or "default"), the composite app's apps (apporder = listing
// order) with their dependencies (a cycle is an error) and the composite
// profile's app profiles (every app needs one). It renders each app once with
// the in-process Helm engine as EMCO does (release = DIG spec.version,
// namespace = the logical cloud's, values = chart defaults ← profile values
// file ← DIG overrideValues as --set; profile config-resource files copied
// into the chart first), labels every object and pod template
// `emco/deployment-id: <status context>-<app>`, keys resources
// "<name>+<Kind>" in install order with hooks and CRDs in their groups, and
// places it: allOf elements each get their own group, anyOf elements share
// one; labels are resolved now against current cluster labels; only the
// logical cloud's clusters qualify. Then the registered controllers run in
// EMCO's order (placement by priority, anyOf pruning to the lexicographically
// first "<provider>+<cluster>", action by priority, ties by name).
//
// Every failure is an emco::Error naming the document by its anchor. No
// clusters are contacted except by placement controllers that read live
// state through Options::live (hpa: Nodes); the result is deterministic for
// a given store and cluster state except for the context id (fix it with
// Options::context_id).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/appcontext/appcontext.hpp"
#include "core/resource/kinds.hpp"
#include "core/store/store.hpp"
#include "core/sync/target.hpp"

namespace emco::controllers {
class Registry;
}

namespace emco::plan {

struct Options {
  std::string context_id;                          // "" = a new random id
  std::string status_context_id;                   // id used in deployment-id labels ("" = context_id)
  std::string update_from;                         // the running context on update ("" otherwise)
  std::string created;                             // creation time ("" = system clock now)
  const controllers::Registry* registry = nullptr;  // the controllers (required: the runtime's registry)
  bool explain = true;                             // fill Plan::explanation (build() does not)
  // Live reads for placement controllers that need cluster state (hpa reads
  // Nodes); empty = none (such controllers then find no cluster readable).
  sync::TargetFactory live;
  // emco dig explain: an app that no cluster is left for stays in the plan
  // with none, its explanation saying why, instead of failing the plan.
  bool explain_only = false;
};

// Why a cluster was or was not chosen for an app.
struct Candidate {
  std::string cluster;  // "<provider>+<cluster>"
  bool chosen = false;
  std::string reason;
};
struct AppExplanation {
  std::string app;
  std::string intent;  // anchor of the app placement intent used ("" if none)
  std::vector<Candidate> candidates;  // every cluster of the logical cloud, then matching clusters outside it
};

struct Plan {
  appcontext::AppContext context;
  std::vector<AppExplanation> explanation;  // per app, in apporder (when Options::explain)
  size_t renders = 0;                        // Helm renders done (one per app)
};

// Builds the plan of a DIG. Error(not_found) for a missing DIG or a document
// it needs; Error(invalid) for intents that cannot be satisfied.
Plan make(store::Store& st, const resource::Key& dig, const Options& options = {});
// Just the AppContext (not saved).
appcontext::AppContext build(store::Store& st, const resource::Key& dig, const Options& options = {});

// The DIG's running AppContext id: the instance of its current state when
// that is Instantiated/InstantiateStopped and the context exists; else nullopt.
std::optional<std::string> running_context(store::Store& st, const resource::Key& dig);
// The same from the DIG's stateInfo as read already.
std::optional<std::string> running_context(store::Store& st, const nlohmann::json& state_info);
// The DIG's status context id (stateInfo statusctxid), "" if none.
std::string status_context(store::Store& st, const resource::Key& dig);

}  // namespace emco::plan
