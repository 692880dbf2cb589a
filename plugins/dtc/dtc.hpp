#pragma once
// dtc, the traffic controller (spec/placement-and-actions.md §4–5): an
// action controller that fans the traffic group intent named in the group
// intent out to its sub-controllers.
//
// The sub-controllers that run are those registered under `dtc-controllers`
// (upstream's registration documents, host/port accepted and unused), in
// upstream's order: descending priority, ties by name. Each receives the
// traffic group intent (read once, intents.hpp) and the AppContext.
//
// Errors: upstream logs a sub-controller's error and goes on with the next
// one, leaving a deployment without the objects that sub-controller would
// have made. emco also goes on with the next sub-controller, so every
// sub-controller's error is reported at once, and then fails the plan with
// all of them (each naming its document): `emco dig plan` and instantiate
// show what is wrong instead of deploying without it. A registered name emco
// has no implementation of is such an error too. Sub-controllers leave alone
// the servers that are not theirs (ITS: serviceMesh other than istio; SWC:
// edgeCNF other than sdewan) instead of failing on them, because every
// registered sub-controller sees every traffic group intent.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/lifecycle/runtime.hpp"
#include "core/plan/controllers.hpp"
#include "plugins/dtc/intents.hpp"

namespace emco::plugins::dtc {

class SubController {
public:
  virtual ~SubController() = default;
  // Adds this sub-controller's objects for `tg` to `ctx`; Error naming the document on a bad intent.
  virtual void update(const TrafficGroup& tg, const controllers::Call& call, appcontext::AppContext& ctx) const = 0;
};

// NPS: NetworkPolicy objects (nps.cpp).
std::unique_ptr<SubController> make_nps();
// ITS: Istio Gateway, ServiceEntry, DestinationRule, AuthorizationPolicy, VirtualService, Secret (its.cpp).
std::unique_ptr<SubController> make_its();
// SWC: SdewanApplication and CNFService (swc.cpp).
std::unique_ptr<SubController> make_swc();
// SDS at plan time: checks that each server with clients has its Service (sds.cpp).
std::unique_ptr<SubController> make_sds_check();
// SDS after delivery: the child contexts with each client cluster's Service and Endpoints (sds.cpp).
std::unique_ptr<lifecycle::ChildPlanner> make_sds();

// The names registered under dtc-controllers, in the order they run
// (descending priority, ties by name).
std::vector<std::string> registered_subcontrollers(const store::Store& st);

class Dtc : public controllers::ActionController {
public:
  void add(const std::string& name, std::unique_ptr<SubController> sub);
  void update(const controllers::Call& call, appcontext::AppContext& ctx) const override;

private:
  std::map<std::string, std::unique_ptr<SubController>> m_subs;
};

// Helpers the sub-controllers share.
// The app `app` of the context; Error(invalid) naming `where` when the deployment has no such app.
appcontext::App& app_of(appcontext::AppContext& ctx, const std::string& app, const std::string& where);
// Adds `object` as resource `key` on `cluster` (at the end of resorder; an existing key is replaced).
void put_object(appcontext::AppContext& ctx, appcontext::Cluster& cluster, const std::string& key,
                const nlohmann::json& object);
// "<provider>+<cluster>" → {provider, cluster}.
std::pair<std::string, std::string> split_cluster(const std::string& cluster);

}  // namespace emco::plugins::dtc
