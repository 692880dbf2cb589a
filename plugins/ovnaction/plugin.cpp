// ovnaction, the network action controller (plugins/ovnaction/ovnaction.hpp),
// and its intent kinds, registered with the runtime.

#include "plugins/ovnaction/plugin.hpp"

#include <memory>

#include "plugins/ovnaction/ovnaction.hpp"

namespace emco::plugins::ovnaction {

using namespace emco::resource;

void install(lifecycle::Runtime& runtime) {
  auto& kinds = runtime.kinds;
  kinds.push_back({.id = "netControllerIntent",
                   .parent = "deploymentIntentGroup",
                   .elements = {"netControllerIntent"},
                   .collection = "network-controller-intent",
                   .service = "ovnaction",
                   .display = "network controller intent",
                   .spec = obj({})});
  kinds.push_back({.id = "workloadIntent",
                   .parent = "netControllerIntent",
                   .elements = {"workloadIntent"},
                   .collection = "workload-intents",
                   .service = "ovnaction",
                   .display = "workload intent",
                   .spec = obj({req("app", name_str()), req("workloadResource", str()), req("type", str())}),
                   .references = {plain_ref("app")}});
  kinds.push_back({.id = "interfaceIntent",
                   .parent = "workloadIntent",
                   .elements = {"interfaceIntent"},
                   .collection = "interfaces",
                   .service = "ovnaction",
                   .display = "interface intent",
                   .spec = obj({req("interface", str()), req("name", str()), opt("defaultGateway", str()),
                                opt("ipAddress", str()), opt("macAddress", str())})});
  runtime.controllers.add_action("ovnaction", std::make_unique<OvnAction>());
  runtime.plugins.push_back({.name = "ovnaction",
                             .summary = "network action controller: attaches workloads to ovn4nfv networks "
                                        "(Multus and nfn-network annotations)",
                             .services = {"ovnaction"},
                             .runs = true});
}

}  // namespace emco::plugins::ovnaction
