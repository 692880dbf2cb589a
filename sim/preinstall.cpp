// Components a simulated cluster can start with (SimOptions::preinstall):
// the objects their installers would have created, reduced to what clients
// of the API see. Istio: the istio-system namespace and the CRDs of the
// objects emco's traffic controller and ca-certs make (networking.istio.io
// Gateway, ServiceEntry, DestinationRule, VirtualService, ProxyConfig;
// security.istio.io AuthorizationPolicy), each serving the API versions
// Istio 1.2x serves. cert-manager: the cert-manager namespace and the CRDs
// of cert-manager.io/v1 (the simulator's CA issuer signs CertificateRequests,
// cert_manager.cpp). kncc: the CRD of KNCC's ConfigCtrl. ovn4nfv: the CRDs
// of the objects emco's network controllers make — Nodus' (ovn4nfv)
// k8s.plugin.opnfv.org/v1alpha1 Network, ProviderNetwork and NetworkChaining
// and Multus' k8s.cni.cncf.io/v1 NetworkAttachmentDefinition. Schemas keep
// every field (as these projects' do not prune).

#include "sim/cluster.hpp"

#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::sim::detail {

using nlohmann::json;

namespace {

struct CrdStyle {
  std::string app;                      // metadata.labels.app
  std::vector<std::string> categories;  // spec.names.categories
  bool cluster_scoped = false;
};

json crd(const std::string& group, const std::string& kind, const std::string& plural,
         const std::vector<std::string>& versions, const std::string& storage,
         const CrdStyle& style = {"istio-pilot", {"istio-io"}, false}) {
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
          {"metadata", {{"name", plural + "." + group}, {"labels", {{"app", style.app}}}}},
          {"spec",
           {{"group", group},
            {"scope", style.cluster_scoped ? "Cluster" : "Namespaced"},
            {"names",
             {{"kind", kind},
              {"plural", plural},
              {"singular", to_lower(kind)},
              {"listKind", kind + "List"},
              {"categories", style.categories}}},
            {"versions", vs}}}};
}

}  // namespace

const std::vector<std::string>& preinstall_components() {
  static const std::vector<std::string> names = {"istio", "cert-manager", "kncc", "ovn4nfv"};
  return names;
}

std::vector<json> preinstalled_objects(const std::string& component) {
  if (component == "cert-manager") {
    const std::string cm = "cert-manager.io";
    const CrdStyle ns{"cert-manager", {"cert-manager"}, false}, cluster{"cert-manager", {"cert-manager"}, true};
    return {{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "cert-manager"}}}},
            crd(cm, "CertificateRequest", "certificaterequests", {"v1"}, "v1", ns),
            crd(cm, "Certificate", "certificates", {"v1"}, "v1", ns),
            crd(cm, "Issuer", "issuers", {"v1"}, "v1", ns),
            crd(cm, "ClusterIssuer", "clusterissuers", {"v1"}, "v1", cluster)};
  }
  if (component == "ovn4nfv") {
    const std::string nodus = "k8s.plugin.opnfv.org";
    const CrdStyle ovn{"ovn4nfv", {}, false}, multus{"multus", {}, false};
    return {crd(nodus, "Network", "networks", {"v1alpha1"}, "v1alpha1", ovn),
            crd(nodus, "ProviderNetwork", "providernetworks", {"v1alpha1"}, "v1alpha1", ovn),
            crd(nodus, "NetworkChaining", "networkchainings", {"v1alpha1"}, "v1alpha1", ovn),
            crd("k8s.cni.cncf.io", "NetworkAttachmentDefinition", "network-attachment-definitions", {"v1"}, "v1",
                multus)};
  }
  if (component == "kncc")
    return {crd("kncc.k8sappconfig.com.gitlab.com", "ConfigCtrl", "configctrls", {"v1alpha1"}, "v1alpha1",
                {"kncc", {}, false})};
  if (component != "istio")
    fail(ErrorKind::invalid, "'" + component + "' is not a component the simulator can preinstall",
         "known components: " + join(preinstall_components(), ", "));
  const std::string net = "networking.istio.io", sec = "security.istio.io";
  const std::vector<std::string> networking = {"v1alpha3", "v1beta1", "v1"};
  return {{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "istio-system"}}}},
          crd(net, "Gateway", "gateways", networking, "v1alpha3"),
          crd(net, "ServiceEntry", "serviceentries", networking, "v1alpha3"),
          crd(net, "DestinationRule", "destinationrules", networking, "v1alpha3"),
          crd(net, "VirtualService", "virtualservices", networking, "v1alpha3"),
          crd(net, "ProxyConfig", "proxyconfigs", {"v1beta1"}, "v1beta1"),
          crd(sec, "AuthorizationPolicy", "authorizationpolicies", {"v1beta1", "v1"}, "v1beta1")};
}

}  // namespace emco::sim::detail
