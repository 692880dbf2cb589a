// The kinds of hpa placement and action, registered with the runtime.

#include "plugins/hpa/plugin.hpp"

namespace emco::plugins::hpa {

using namespace emco::resource;

namespace {}  // namespace

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
  runtime.plugins.push_back(
      {.name = "hpa",
       .summary =
           "hardware-aware placement and resource requests",
       .services = {"hpaPlacement"},
       .runs = false});
}

}  // namespace emco::plugins::hpa
