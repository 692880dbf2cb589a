// GAC's kinds: generic k8s intents, their resources and customizations.

#include "plugins/gac/plugin.hpp"

#include <memory>

#include "plugins/gac/gac.hpp"

namespace emco::plugins::gac {

using namespace emco::resource;

namespace {

Schema data_key_options() {
  return obj({opt("dataKeyOptions", array(obj({req("fileName", str()), req("keyName", str()),
                                               opt("mergePatch", one_of({"true", "false"}, true))})))});
}

}  // namespace

void install(lifecycle::Runtime& runtime) {
  auto& kinds = runtime.kinds;
  kinds.push_back({.id = "genericK8sIntent",
                   .parent = "deploymentIntentGroup",
                   .elements = {"genericK8sIntent"},
                   .collection = "generic-k8s-intents",
                   .service = "gac",
                   .display = "generic k8s intent",
                   .spec = obj({})});
  kinds.push_back(
      {.id = "genericResource",
       .parent = "genericK8sIntent",
       .elements = {"genericResource"},
       .collection = "resources",
       .service = "gac",
       .display = "generic resource",
       .spec = obj({req("app", name_str()), req("newObject", one_of({"true", "false"}, true)),
                    opt("resourceGVK", obj({req("apiVersion", str()), req("kind", str()), req("name", str())}))}),
       .file = FileMode::single,
       .file_what = "resource template",
       .references = {plain_ref("app")}});
  kinds.push_back(
      {.id = "customization",
       .parent = "genericResource",
       .elements = {"customization"},
       .collection = "customizations",
       .service = "gac",
       .display = "customization",
       .spec = obj({req("clusterSpecific", one_of({"true", "false"}, true)),
                    req("clusterInfo", obj({req("scope", one_of({"label", "name"}, true)),
                                            req("clusterProvider", name_str()), opt("cluster", str()),
                                            opt("clusterLabel", str()), req("mode", one_of({"allow", "deny"}, true))})),
                    opt("patchType", one_of({"json", "merge", ""}, true)),
                    opt("patchJson", array(obj({req("op", one_of({"add", "remove", "replace", "move", "copy", "test"})),
                                                req("path", str()), opt("value", any()), opt("from", str())}))),
                    opt("configMapOptions", data_key_options()), opt("secretOptions", data_key_options())}),
       .file = FileMode::multiple,
       .file_what = "customization files",
       // The cluster is only named by scope "name"; upstream examples put a
       // placeholder cluster into label-scoped customizations.
       .references = {Reference{"cluster", RefType::many, "", {}, {}, "", {}, {"clusterInfo.scope", "name"}}}});
  runtime.controllers.add_action("gac", std::make_unique<controllers::Gac>());
  runtime.plugins.push_back({.name = "gac",
                             .summary = "generic action controller: adds and patches Kubernetes objects per cluster",
                             .services = {"gac"},
                             .runs = true});
}

}  // namespace emco::plugins::gac
