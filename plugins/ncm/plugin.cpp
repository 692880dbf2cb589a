// ncm, the network configuration manager (plugins/ncm/ncm.hpp): its kinds,
// their checks and the planner of a cluster's network intents, registered
// with the runtime.

#include "plugins/ncm/plugin.hpp"

#include <memory>

#include "plugins/ncm/ncm.hpp"

namespace emco::plugins::ncm {

using namespace emco::resource;

namespace {

Schema subnets() {
  return array(obj({req("subnet", str()), req("name", name_str()), opt("gateway", str()), opt("excludeIps", str())}));
}

}  // namespace

void install(lifecycle::Runtime& runtime) {
  auto& kinds = runtime.kinds;
  kinds.push_back({.id = "network",
                   .parent = "cluster",
                   .elements = {"network"},
                   .collection = "networks",
                   .service = "ncm",
                   .display = "network",
                   .spec = obj({opt("cniType", one_of({"ovn4nfv"})), opt("ipv4Subnets", subnets()),
                                opt("ipv6Subnets", subnets())})});
  kinds.push_back({.id = "providerNetwork",
                   .parent = "cluster",
                   .elements = {"providerNetwork"},
                   .collection = "provider-networks",
                   .service = "ncm",
                   .display = "provider network",
                   .spec = obj({opt("cniType", one_of({"ovn4nfv"})), opt("ipv4Subnets", subnets()),
                                opt("ipv6Subnets", subnets()), opt("providerNetType", one_of({"VLAN", "DIRECT"}, true)),
                                opt("vlan", obj({opt("vlanID", str()), opt("providerInterfaceName", str()),
                                                 opt("logicalInterfaceName", str()),
                                                 opt("vlanNodeSelector", one_of({"any", "specific"}, true)),
                                                 opt("nodeLabelList", array(str()))}))})});
  runtime.checks["network"] = {.put = check_network, .remove = {}};
  runtime.checks["providerNetwork"] = {.put = check_provider_network, .remove = {}};
  runtime.resource_planners.push_back(std::make_unique<NetworkPlanner>());
  runtime.plugins.push_back({.name = "ncm",
                             .summary = "cluster networks: ovn4nfv virtual and provider networks applied to a cluster "
                                        "(emco cluster network apply)",
                             .services = {"ncm"},
                             .runs = true});
}

}  // namespace emco::plugins::ncm
