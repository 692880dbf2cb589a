// dtc, the traffic controller (plugins/dtc/dtc.hpp), its sub-controllers and
// its intent kinds, registered with the runtime.

#include "plugins/dtc/plugin.hpp"

#include <memory>

#include "plugins/dtc/dtc.hpp"

namespace emco::plugins::dtc {

using namespace emco::resource;

void install(lifecycle::Runtime& runtime) {
  auto& kinds = runtime.kinds;
  kinds.push_back({.id = "trafficGroupIntent",
                   .parent = "deploymentIntentGroup",
                   .elements = {"trafficGroupIntent"},
                   .collection = "traffic-group-intents",
                   .service = "dtc",
                   .display = "traffic group intent",
                   .spec = obj({})});
  kinds.push_back({.id = "inboundServerIntent",
                   .parent = "trafficGroupIntent",
                   .elements = {"inboundServerIntent"},
                   .collection = "inbound-intents",
                   .service = "dtc",
                   .display = "inbound server intent",
                   .spec = obj({req("app", name_str()), req("appLabel", str()), req("serviceName", str()),
                                req("port", integer(1, 65535)), req("protocol", str(5)), opt("externalName", str()),
                                opt("externalSupport", boolean()), opt("serviceMesh", str()),
                                opt("management", obj({opt("sidecarProxy", str()), opt("tlsType", str())})),
                                opt("external", obj({opt("externalCerts", obj({opt("serviceCertificate", str()),
                                                                               opt("servicePrivateKey", str()),
                                                                               opt("caCertificate", str())}))})),
                                opt("edgeCNF", str())}),
                   .references = {plain_ref("app")}});
  kinds.push_back({.id = "inboundClientsIntent",
                   .parent = "inboundServerIntent",
                   .elements = {"inboundClientsIntent"},
                   .collection = "clients",
                   .service = "dtc",
                   .display = "inbound clients intent",
                   .spec = obj({req("app", name_str()), req("appLabel", str()), req("serviceName", str()),
                                opt("namespaces", array(str())), opt("cidrs", array(str()))}),
                   .references = {plain_ref("app")}});
  kinds.push_back({.id = "inboundClientsAccessIntent",
                   .parent = "inboundClientsIntent",
                   .elements = {"inboundClientsAccessIntent"},
                   .collection = "access-points",
                   .service = "dtc",
                   .display = "clients access intent",
                   .spec = obj({opt("action", one_of({"ALLOW"}, true)), opt("url", array(str())),
                                opt("access", array(one_of({"GET", "PUT", "POST", "DELETE"}, true)))}),
                   .references = {plain_ref("app")}});
  auto dtc = std::make_unique<Dtc>();
  dtc->add("nps", make_nps());
  dtc->add("its", make_its());
  dtc->add("swc", make_swc());
  dtc->add("sds", make_sds_check());
  runtime.controllers.add_action("dtc", std::move(dtc));
  runtime.child_planners.push_back(make_sds());
  runtime.plugins.push_back({.name = "dtc",
                             .summary = "traffic controller: network policies (nps), service discovery in child contexts (sds), Istio (its) and SD-EWAN (swc) objects",
                             .services = {"dtc"},
                             .runs = true});
}

}  // namespace emco::plugins::dtc
