// Components a simulated cluster can start with (SimOptions::preinstall):
// the objects their installers would have created, reduced to what clients
// of the API see. Istio: the istio-system namespace and the CRDs of the
// objects emco's traffic controller makes (networking.istio.io Gateway,
// ServiceEntry, DestinationRule, VirtualService; security.istio.io
// AuthorizationPolicy), each serving the API versions Istio 1.2x serves,
// with schemas that keep every field (as Istio's do not prune). ovn4nfv: the
// CRDs of the objects emco's network controllers make — Nodus' (ovn4nfv)
// k8s.plugin.opnfv.org/v1alpha1 Network, ProviderNetwork and NetworkChaining
// and Multus' k8s.cni.cncf.io/v1 NetworkAttachmentDefinition — namespaced
// and keeping every field.

#include "sim/cluster.hpp"

#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::sim::detail {

using nlohmann::json;

namespace {

json crd(const std::string& group, const std::string& kind, const std::string& plural,
         const std::vector<std::string>& versions, const std::string& storage, const json& labels,
         const json& categories) {
  json vs = json::array();
  for (const auto& v : versions)
    vs.push_back({{"name", v},
                  {"served", true},
                  {"storage", v == storage},
                  {"schema",
                   {{"openAPIV3Schema",
                     {{"type", "object"},
                      {"properties",
                       {{"spec", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}},
                        {"status", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}}}}},
                  {"subresources", {{"status", json::object()}}}});
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", plural + "." + group}, {"labels", labels}}},
          {"spec",
           {{"group", group},
            {"scope", "Namespaced"},
            {"names",
             {{"kind", kind},
              {"plural", plural},
              {"singular", to_lower(kind)},
              {"listKind", kind + "List"},
              {"categories", categories}}},
            {"versions", vs}}}};
}

}  // namespace

const std::vector<std::string>& preinstall_components() {
  static const std::vector<std::string> names = {"istio", "ovn4nfv"};
  return names;
}

std::vector<json> preinstalled_objects(const std::string& component) {
  if (component == "ovn4nfv") {
    const std::string nodus = "k8s.plugin.opnfv.org";
    const json labels = {{"app", "ovn4nfv"}}, categories = json::array();
    return {crd(nodus, "Network", "networks", {"v1alpha1"}, "v1alpha1", labels, categories),
            crd(nodus, "ProviderNetwork", "providernetworks", {"v1alpha1"}, "v1alpha1", labels, categories),
            crd(nodus, "NetworkChaining", "networkchainings", {"v1alpha1"}, "v1alpha1", labels, categories),
            crd("k8s.cni.cncf.io", "NetworkAttachmentDefinition", "network-attachment-definitions", {"v1"}, "v1",
                {{"app", "multus"}}, categories)};
  }
  if (component != "istio")
    fail(ErrorKind::invalid, "'" + component + "' is not a component the simulator can preinstall",
         "known components: " + join(preinstall_components(), ", "));
  const std::string net = "networking.istio.io", sec = "security.istio.io";
  const std::vector<std::string> networking = {"v1alpha3", "v1beta1", "v1"};
  const json labels = {{"app", "istio-pilot"}}, categories = json::array({"istio-io"});
  return {{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "istio-system"}}}},
          crd(net, "Gateway", "gateways", networking, "v1alpha3", labels, categories),
          crd(net, "ServiceEntry", "serviceentries", networking, "v1alpha3", labels, categories),
          crd(net, "DestinationRule", "destinationrules", networking, "v1alpha3", labels, categories),
          crd(net, "VirtualService", "virtualservices", networking, "v1alpha3", labels, categories),
          crd(sec, "AuthorizationPolicy", "authorizationpolicies", {"v1beta1", "v1"}, "v1beta1", labels, categories)};
}

}  // namespace emco::sim::detail
