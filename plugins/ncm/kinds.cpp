// The kinds of ncm, the network configuration manager, registered with the runtime.

#include "plugins/ncm/plugin.hpp"

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
  runtime.plugins.push_back(
      {.name = "ncm",
       .summary =
           "cluster networks (ovn4nfv virtual and provider networks)",
       .services = {"ncm"},
       .runs = false});
}

}  // namespace emco::plugins::ncm
