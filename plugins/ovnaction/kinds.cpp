// The kinds of ovnaction, registered with the runtime.

#include "plugins/ovnaction/plugin.hpp"

namespace emco::plugins::ovnaction {

using namespace emco::resource;

namespace {}  // namespace

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
  runtime.plugins.push_back(
      {.name = "ovnaction",
       .summary =
           "network interfaces of workloads (ovn4nfv)",
       .services = {"ovnaction"},
       .runs = false});
}

}  // namespace emco::plugins::ovnaction
