// hpa placement and action (plugins/hpa/hpa.hpp) and their intent kinds.

#include "plugins/hpa/plugin.hpp"

#include <memory>

#include "plugins/hpa/hpa.hpp"

namespace emco::plugins::hpa {

using namespace emco::resource;

void install(lifecycle::Runtime& runtime) {
  auto& kinds = runtime.kinds;
  kinds.push_back({.id = "hpaIntent",
                   .parent = "deploymentIntentGroup",
                   .elements = {"hpaIntent"},
                   .collection = "hpa-intents",
                   .service = "hpaPlacement",
                   .display = "hpa intent",
                   .spec = obj({req("app", name_str())}),
                   .references = {plain_ref("app")}});
  kinds.push_back({.id = "hpaConsumer",
                   .parent = "hpaIntent",
                   .elements = {"hpaConsumer"},
                   .collection = "hpa-resource-consumers",
                   .service = "hpaPlacement",
                   .display = "hpa consumer",
                   .spec = obj({opt("apiVersion", str()), opt("kind", str()), opt("replicas", integer(1, 1000000)),
                                req("name", str()), opt("container", str())})});
  kinds.push_back(
      {.id = "hpaResource",
       .parent = "hpaConsumer",
       .elements = {"hpaResource"},
       .collection = "resource-requirements",
       .service = "hpaPlacement",
       .display = "hpa resource requirement",
       .spec = obj({req("allocatable", boolean()), opt("mandatory", boolean()), opt("weight", integer(1, 1000000)),
                    req("resource", obj({opt("name", str()), opt("requests", integer()), opt("limits", integer()),
                                         opt("units", str()), opt("key", str()), opt("value", str())}))})});
  // Upstream's registration names (its examples register these two).
  runtime.controllers.add_placement("hpa-placement-controller-1", std::make_unique<controllers::HpaPlacement>());
  runtime.controllers.add_action("hpa-action-controller-1", std::make_unique<controllers::HpaAction>());
  runtime.plugins.push_back({.name = "hpa",
                             .summary = "hardware-aware placement by node labels and allocatable resources, and the "
                                        "node selectors and resource requests it writes into workloads",
                             .services = {"hpaPlacement"},
                             .runs = true});
}

}  // namespace emco::plugins::hpa
