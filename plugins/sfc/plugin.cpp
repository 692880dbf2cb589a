// sfc and sfcclient, the Nodus service function chaining controllers
// (plugins/sfc/sfc.hpp), and their intent kinds, registered with the runtime.

#include "plugins/sfc/plugin.hpp"

#include <memory>

#include "plugins/sfc/sfc.hpp"

namespace emco::plugins::sfc {

using namespace emco::resource;

void install(lifecycle::Runtime& runtime) {
  auto& kinds = runtime.kinds;
  kinds.push_back({.id = "sfcIntent",
                   .parent = "deploymentIntentGroup",
                   .elements = {"sfcIntent"},
                   .collection = "network-chains",
                   .service = "sfc",
                   .display = "network chain",
                   .spec = obj({opt("chainType", one_of({"Routing"}, true)), opt("namespace", str())})});
  kinds.push_back({.id = "sfcLink",
                   .parent = "sfcIntent",
                   .elements = {"sfcLink"},
                   .collection = "links",
                   .service = "sfc",
                   .display = "network chain link",
                   .spec = obj({opt("leftNet", str()), opt("rightNet", str()), opt("linkLabel", str()),
                                req("app", name_str()), opt("workloadResource", str()), opt("resourceType", str())}),
                   .references = {plain_ref("app")}});
  kinds.push_back({.id = "sfcClientSelector",
                   .parent = "sfcIntent",
                   .elements = {"sfcClientSelector"},
                   .collection = "client-selectors",
                   .service = "sfc",
                   .display = "network chain client selector",
                   .spec = obj({opt("chainEnd", one_of({"left", "right"}, true)), opt("podSelector", any()),
                                opt("namespaceSelector", any())})});
  kinds.push_back({.id = "sfcProviderNetwork",
                   .parent = "sfcIntent",
                   .elements = {"sfcProviderNetwork"},
                   .collection = "provider-networks",
                   .service = "sfc",
                   .display = "network chain provider network",
                   .spec = obj({opt("chainEnd", one_of({"left", "right"}, true)), opt("providerNetwork", str()),
                                opt("gatewayIp", str()), opt("subnet", str())})});
  kinds.push_back({.id = "sfcClientIntent",
                   .parent = "deploymentIntentGroup",
                   .elements = {"sfcClientIntent"},
                   .collection = "sfc-clients",
                   .service = "sfcClient",
                   .display = "sfc client intent",
                   .spec = obj({opt("chainEnd", one_of({"left", "right"}, true)), req("sfcIntent", name_str()),
                                req("compositeApp", name_str()), req("compositeAppVersion", name_str()),
                                req("deploymentIntentGroup", name_str()), req("app", name_str()),
                                opt("workloadResource", str()), opt("resourceType", str())}),
                   .references = {plain_ref("sfcIntent"),
                                  Reference{"app", RefType::plain, "", {}, {}, "compositeAppVersion", {}, {}}}});
  runtime.controllers.add_action("sfc", std::make_unique<Sfc>());
  runtime.controllers.add_action("sfcclient", std::make_unique<SfcClient>());
  runtime.plugins.push_back({.name = "sfc",
                             .summary = "service function chaining (Nodus): NetworkChaining CRs in app "
                                        "network-chain-intents, link and client labels on workloads (sfc, sfcclient)",
                             .services = {"sfc", "sfcClient"},
                             .runs = true});
}

}  // namespace emco::plugins::sfc
