#include "core/resource/kinds.hpp"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::resource {

// ---- Key ------------------------------------------------------------------

std::string Key::str() const {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += '/';
    out += parts[i].first;
    out += '=';
    out += parts[i].second;
  }
  return out;
}

std::string Key::json() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [e, v] : parts) j[e] = v;
  return j.dump();
}

std::string Key::key_id() const {
  std::vector<std::string> names;
  for (const auto& p : parts) names.push_back(p.first);
  std::sort(names.begin(), names.end());
  std::string out = "{";
  for (const auto& n : names) out += n + ",";
  return out + "}";
}

std::optional<std::string> Key::get(const std::string& element) const {
  for (const auto& [e, v] : parts)
    if (e == element) return v;
  return std::nullopt;
}

Key Key::parent_prefix(size_t n) const {
  Key k;
  k.parts.assign(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(std::min(n, parts.size())));
  return k;
}

Key Key::parse(const std::string& canonical) {
  Key k;
  if (canonical.empty()) return k;
  for (const auto& part : split(canonical, '/')) {
    auto eq = part.find('=');
    k.parts.emplace_back(part.substr(0, eq), eq == std::string::npos ? "" : part.substr(eq + 1));
  }
  return k;
}

// ---- The registry ---------------------------------------------------------

namespace {

Schema no_spec() { return obj({}); }
Schema kv_list() { return obj({req("kv", array(map_of(str(128))))}); }
// Cluster sync objects also hold key material inline (sshKey, knownHosts,
// caCert: see plugins/targets/gitops/gitops_target.cpp).
constexpr size_t k_sync_object_value_max = 64 * 1024;
Schema sync_object_kv_list() { return obj({req("kv", array(map_of(str(k_sync_object_value_max))))}); }
Schema controller_spec() {
  return obj({opt("host", str()), opt("port", integer(0, 65535)), opt("type", one_of({"placement", "action"}, true)),
              opt("priority", integer(1, 1000000))});
}
Schema placement_element() {
  return obj({req("clusterProvider", name_str()), opt("cluster", name_str()), opt("clusterLabel", name_str())});
}
Schema data_key_options() {
  return obj({opt("dataKeyOptions",
                  array(obj({req("fileName", str()), req("keyName", str()), opt("mergePatch", one_of({"true", "false"}, true))})))});
}
Schema subnets() {
  return array(obj({req("subnet", str()), req("name", name_str()), opt("gateway", str()), opt("excludeIps", str())}));
}
Schema ca_cert_spec() {
  Schema names_list = array(str());
  return obj({
      opt("certificate", obj({opt("commonName", str())})),
      opt("csrInfo",
          obj({opt("keySize", integer()), opt("version", integer()), opt("dnsNames", names_list), opt("emailAddresses", names_list),
               opt("keyUsages", names_list),
               opt("algorithm", obj({opt("publicKeyAlgorithm", str()), opt("signatureAlgorithm", str())})),
               opt("subject", obj({opt("locale", obj({opt("country", names_list), opt("locality", names_list),
                                                      opt("postalCode", names_list), opt("province", names_list),
                                                      opt("streetAddress", names_list)})),
                                   opt("names", obj({opt("commonNamePrefix", str())})),
                                   opt("organization", obj({opt("names", names_list), opt("units", names_list)}))}))})),
      opt("duration", str()),
      opt("isCA", boolean()),
      opt("issuerRef", obj({opt("name", str()), opt("kind", str()), opt("group", str()), opt("version", str())})),
      opt("issuingCluster", obj({opt("cluster", str()), opt("clusterProvider", str())})),
  });
}
Schema cluster_group_spec() {
  return obj({req("clusterProvider", name_str()), opt("scope", one_of({"name", "label"}, true)), opt("cluster", str()),
              opt("label", str())});
}

Reference ref(std::string target) { return Reference{std::move(target), RefType::plain, "", {}, {}, "", {}, {}}; }
Reference ref_many(std::string target) { return Reference{std::move(target), RefType::many, "", {}, {}, "", {}, {}}; }

std::vector<Kind> build() {
  std::vector<Kind> k;
  auto add = [&](Kind kind) { k.push_back(std::move(kind)); };
  const std::vector<std::string> dig_ops = {"approve", "instantiate", "terminate", "stop", "update", "rollback", "migrate", "clone"};
  const std::vector<std::string> ca_ops = {"enrollment/instantiate", "enrollment/terminate", "enrollment/update",
                                           "distribution/instantiate", "distribution/terminate", "distribution/update"};

  // clm
  add({.id = "clusterProvider", .elements = {"clusterProvider"}, .collection = "cluster-providers", .service = "clm",
       .display = "cluster provider", .spec = no_spec()});
  add({.id = "cluster", .parent = "clusterProvider", .elements = {"cluster"}, .collection = "clusters", .service = "clm",
       .display = "cluster",
       .spec = obj({opt("gitOps", obj({req("gitOpsType", one_of({"fluxcd", "fluxv2", "anthos", "azureArcV2"})),
                                      req("gitOpsReferenceObject", name_str()), req("gitOpsResourceObject", name_str())}))}),
       .file = FileMode::single, .file_what = "kubeconfig", .lifecycle = true,
       .operations = {"apply", "terminate", "stop"},
       .references = {Reference{"clusterSyncObject", RefType::path, "", {}, {}, "",
                                {"gitOps.gitOpsReferenceObject", "gitOps.gitOpsResourceObject"}, {}}}});
  add({.id = "clusterLabel", .parent = "cluster", .elements = {"clusterLabel"}, .collection = "labels", .service = "clm",
       .display = "cluster label", .spec = no_spec(), .body = BodyShape::label});
  add({.id = "clusterKv", .parent = "cluster", .elements = {"clusterKv"}, .collection = "kv-pairs", .service = "clm",
       .display = "cluster kv pairs", .spec = kv_list()});
  add({.id = "clusterSyncObject", .parent = "clusterProvider", .elements = {"clusterSyncObject"},
       .collection = "cluster-sync-objects", .service = "clm", .display = "cluster sync object",
       .spec = sync_object_kv_list(),
       .secret_spec = true});
  add({.id = "network", .parent = "cluster", .elements = {"network"}, .collection = "networks", .service = "ncm",
       .display = "network",
       .spec = obj({opt("cniType", one_of({"ovn4nfv"})), opt("ipv4Subnets", subnets()), opt("ipv6Subnets", subnets())})});
  add({.id = "providerNetwork", .parent = "cluster", .elements = {"providerNetwork"}, .collection = "provider-networks",
       .service = "ncm", .display = "provider network",
       .spec = obj({opt("cniType", one_of({"ovn4nfv"})), opt("ipv4Subnets", subnets()), opt("ipv6Subnets", subnets()),
                    opt("providerNetType", one_of({"VLAN", "DIRECT"}, true)),
                    opt("vlan", obj({opt("vlanID", str()), opt("providerInterfaceName", str()),
                                     opt("logicalInterfaceName", str()), opt("vlanNodeSelector", one_of({"any", "specific"}, true)),
                                     opt("nodeLabelList", array(str()))}))})});
  add({.id = "caCertCp", .parent = "clusterProvider", .elements = {"caCert"}, .collection = "ca-certs", .service = "ca-certs",
       .display = "provider CA certificate", .spec = ca_cert_spec(), .lifecycle = true, .operations = ca_ops});
  add({.id = "caCertClusterGroupCp", .parent = "caCertCp", .elements = {"caCertClusterGroup"}, .collection = "clusters",
       .service = "ca-certs", .display = "CA certificate cluster group", .spec = cluster_group_spec()});
  add({.id = "clmController", .elements = {"controller"}, .fixed = {{"controllerGroup", "cluster"}},
       .collection = "clm-controllers", .service = "clm", .display = "clm controller", .spec = controller_spec()});

  // orchestrator
  add({.id = "controller", .elements = {"controller"}, .fixed = {{"controllerGroup", "orchestrator"}},
       .collection = "controllers", .service = "orchestrator", .display = "controller", .spec = controller_spec()});
  add({.id = "dtcController", .elements = {"controller"}, .fixed = {{"controllerGroup", "dtc"}},
       .collection = "dtc-controllers", .service = "dtc", .display = "dtc controller", .spec = controller_spec()});
  add({.id = "project", .elements = {"project"}, .collection = "projects", .service = "orchestrator",
       .display = "project", .spec = no_spec()});
  add({.id = "compositeApp", .parent = "project", .elements = {"compositeApp", "compositeAppVersion"},
       .collection = "composite-apps", .service = "orchestrator", .display = "composite app",
       .spec = obj({req("compositeAppVersion", name_str()), opt("id", str())})});
  add({.id = "app", .parent = "compositeApp", .elements = {"app"}, .collection = "apps", .service = "orchestrator",
       .display = "app", .spec = no_spec(), .file = FileMode::single, .file_required = true, .file_what = "Helm chart"});
  add({.id = "appDependency", .parent = "app", .elements = {"appDependency"}, .collection = "dependency",
       .service = "orchestrator", .display = "app dependency",
       .spec = obj({req("app", name_str()), req("opStatus", one_of({"Ready", "Deployed"}, true)), opt("wait", integer(0, 86400))}),
       .references = {ref("app")}});
  add({.id = "compositeProfile", .parent = "compositeApp", .elements = {"compositeProfile"},
       .collection = "composite-profiles", .service = "orchestrator", .display = "composite profile", .spec = no_spec()});
  add({.id = "appProfile", .parent = "compositeProfile", .elements = {"appProfile"}, .collection = "profiles",
       .service = "orchestrator", .display = "app profile", .spec = obj({req("app", name_str())}),
       .file = FileMode::single, .file_required = true, .file_what = "profile package", .references = {ref("app")}});
  add({.id = "deploymentIntentGroup", .parent = "compositeApp", .elements = {"deploymentIntentGroup"},
       .collection = "deployment-intent-groups", .service = "orchestrator", .display = "deployment intent group",
       .spec = obj({req("compositeProfile", name_str()), req("version", name_str()), req("logicalCloud", name_str()),
                    opt("overrideValues", array(obj({req("app", name_str()), opt("values", map_of(str()))}))),
                    opt("id", str())},
                   {"services", "instantiatedServices", "action", "isCheckedOut"}),
       .lifecycle = true, .operations = dig_ops,
       .references = {ref("logicalCloud"), ref("compositeProfile")}});
  add({.id = "groupIntent", .parent = "deploymentIntentGroup", .elements = {"groupIntent"}, .collection = "intents",
       .service = "orchestrator", .display = "group intent", .spec = obj({req("intent", map_of(name_str()))}),
       .references = {Reference{"controller", RefType::map, "intent", {{"controllerGroup", "orchestrator"}},
                                {"genericPlacementIntent"}, "", {}, {}}}});
  add({.id = "genericPlacementIntent", .parent = "deploymentIntentGroup", .elements = {"genericPlacementIntent"},
       .collection = "generic-placement-intents", .service = "orchestrator", .display = "generic placement intent",
       .spec = obj({}, {"logicalCloud"})});
  add({.id = "genericAppPlacementIntent", .parent = "genericPlacementIntent", .elements = {"genericAppPlacementIntent"},
       .collection = "app-intents", .service = "orchestrator", .display = "app placement intent",
       .spec = obj({req("app", name_str()),
                    req("intent", obj({opt("selector", one_of({"name", "label"}, true)), opt("allOf", array(placement_element())),
                                       opt("anyOf", array(placement_element()))}))}),
       .references = {ref("app"), ref_many("cluster"), Reference{"clusterLabel", RefType::label, "", {}, {}, "", {}, {}}}});
  add({.id = "service", .parent = "project", .elements = {"service"}, .collection = "services", .service = "orchestrator",
       .display = "service", .spec = obj({opt("digs", array(str()))}), .lifecycle = true,
       .operations = {"update", "instantiate", "terminate", "instantiate-apps", "terminate-apps"}});

  // dcm
  add({.id = "logicalCloud", .parent = "project", .elements = {"logicalCloud"}, .collection = "logical-clouds",
       .service = "dcm", .display = "logical cloud",
       .spec = obj({opt("level", one_of({"0", "1"})), opt("namespace", name_str()),
                    opt("user", obj({opt("userName", str(20)), opt("type", str())})), opt("labels", map_of(str()))}),
       .lifecycle = true, .operations = {"instantiate", "terminate", "update", "stop"}});
  add({.id = "clusterReference", .parent = "logicalCloud", .elements = {"clusterReference"},
       .collection = "cluster-references", .service = "dcm", .display = "cluster reference",
       .spec = obj({req("clusterProvider", name_str()), req("cluster", name_str()), opt("loadBalancerIP", str(16)),
                    opt("certificate", str())}),
       .references = {ref("cluster")}});
  add({.id = "userPermission", .parent = "logicalCloud", .elements = {"userPermission"}, .collection = "user-permissions",
       .service = "dcm", .display = "user permission",
       .spec = obj({opt("namespace", str()), opt("apiGroups", array(str())), opt("resources", array(str())),
                    opt("verbs", array(str()))})});
  add({.id = "clusterQuota", .parent = "logicalCloud", .elements = {"clusterQuota"}, .collection = "cluster-quotas",
       .service = "dcm", .display = "cluster quota", .spec = map_of(str())});
  add({.id = "logicalCloudKv", .parent = "logicalCloud", .elements = {"logicalCloudKv"}, .collection = "kv-pairs",
       .service = "dcm", .display = "logical cloud kv pairs", .spec = kv_list()});

  // gac
  add({.id = "genericK8sIntent", .parent = "deploymentIntentGroup", .elements = {"genericK8sIntent"},
       .collection = "generic-k8s-intents", .service = "gac", .display = "generic k8s intent", .spec = no_spec()});
  add({.id = "genericResource", .parent = "genericK8sIntent", .elements = {"genericResource"}, .collection = "resources",
       .service = "gac", .display = "generic resource",
       .spec = obj({req("app", name_str()), req("newObject", one_of({"true", "false"}, true)),
                    opt("resourceGVK", obj({req("apiVersion", str()), req("kind", str()), req("name", str())}))}),
       .file = FileMode::single, .file_what = "resource template", .references = {ref("app")}});
  add({.id = "customization", .parent = "genericResource", .elements = {"customization"}, .collection = "customizations",
       .service = "gac", .display = "customization",
       .spec = obj({req("clusterSpecific", one_of({"true", "false"}, true)),
                    req("clusterInfo", obj({req("scope", one_of({"label", "name"}, true)), req("clusterProvider", name_str()),
                                            opt("cluster", str()), opt("clusterLabel", str()),
                                            req("mode", one_of({"allow", "deny"}, true))})),
                    opt("patchType", one_of({"json", "merge", ""}, true)),
                    opt("patchJson", array(obj({req("op", one_of({"add", "remove", "replace", "move", "copy", "test"})),
                                                req("path", str()), opt("value", any()), opt("from", str())}))),
                    opt("configMapOptions", data_key_options()), opt("secretOptions", data_key_options())}),
       .file = FileMode::multiple, .file_what = "customization files",
       // The cluster is only named by scope "name"; upstream examples put a
       // placeholder cluster into label-scoped customizations.
       .references = {Reference{"cluster", RefType::many, "", {}, {}, "", {}, {"clusterInfo.scope", "name"}}}});

  // dtc and its sub-controllers (nps, its, sds, swc)
  add({.id = "trafficGroupIntent", .parent = "deploymentIntentGroup", .elements = {"trafficGroupIntent"},
       .collection = "traffic-group-intents", .service = "dtc", .display = "traffic group intent", .spec = no_spec()});
  add({.id = "inboundServerIntent", .parent = "trafficGroupIntent", .elements = {"inboundServerIntent"},
       .collection = "inbound-intents", .service = "dtc", .display = "inbound server intent",
       .spec = obj({req("app", name_str()), req("appLabel", str()), req("serviceName", str()), req("port", integer(1, 65535)),
                    req("protocol", str(5)), opt("externalName", str()), opt("externalSupport", boolean()),
                    opt("serviceMesh", str()), opt("management", obj({opt("sidecarProxy", str()), opt("tlsType", str())})),
                    opt("external", obj({opt("externalCerts", obj({opt("serviceCertificate", str()),
                                                                    opt("servicePrivateKey", str()),
                                                                    opt("caCertificate", str())}))})),
                    opt("edgeCNF", str())}),
       .references = {ref("app")}});
  add({.id = "inboundClientsIntent", .parent = "inboundServerIntent", .elements = {"inboundClientsIntent"},
       .collection = "clients", .service = "dtc", .display = "inbound clients intent",
       .spec = obj({req("app", name_str()), req("appLabel", str()), req("serviceName", str()), opt("namespaces", array(str())),
                    opt("cidrs", array(str()))}),
       .references = {ref("app")}});
  add({.id = "inboundClientsAccessIntent", .parent = "inboundClientsIntent", .elements = {"inboundClientsAccessIntent"},
       .collection = "access-points", .service = "dtc", .display = "clients access intent",
       .spec = obj({opt("action", one_of({"ALLOW"}, true)), opt("url", array(str())),
                    opt("access", array(one_of({"GET", "PUT", "POST", "DELETE"}, true)))}),
       .references = {ref("app")}});

  // ovnaction
  add({.id = "netControllerIntent", .parent = "deploymentIntentGroup", .elements = {"netControllerIntent"},
       .collection = "network-controller-intent", .service = "ovnaction", .display = "network controller intent",
       .spec = no_spec()});
  add({.id = "workloadIntent", .parent = "netControllerIntent", .elements = {"workloadIntent"},
       .collection = "workload-intents", .service = "ovnaction", .display = "workload intent",
       .spec = obj({req("app", name_str()), req("workloadResource", str()), req("type", str())}),
       .references = {ref("app")}});
  add({.id = "interfaceIntent", .parent = "workloadIntent", .elements = {"interfaceIntent"}, .collection = "interfaces",
       .service = "ovnaction", .display = "interface intent",
       .spec = obj({req("interface", str()), req("name", str()), opt("defaultGateway", str()), opt("ipAddress", str()),
                    opt("macAddress", str())})});

  // hpa
  add({.id = "hpaIntent", .parent = "deploymentIntentGroup", .elements = {"hpaIntent"}, .collection = "hpa-intents",
       .service = "hpaPlacement", .display = "hpa intent", .spec = obj({req("app", name_str())}),
       .references = {ref("app")}});
  add({.id = "hpaConsumer", .parent = "hpaIntent", .elements = {"hpaConsumer"}, .collection = "hpa-resource-consumers",
       .service = "hpaPlacement", .display = "hpa consumer",
       .spec = obj({opt("apiVersion", str()), opt("kind", str()), opt("replicas", integer(1, 1000000)), req("name", str()),
                    opt("container", str())})});
  add({.id = "hpaResource", .parent = "hpaConsumer", .elements = {"hpaResource"}, .collection = "resource-requirements",
       .service = "hpaPlacement", .display = "hpa resource requirement",
       .spec = obj({req("allocatable", boolean()), opt("mandatory", boolean()), opt("weight", integer(1, 1000000)),
                    req("resource", obj({opt("name", str()), opt("requests", integer()), opt("limits", integer()),
                                         opt("units", str()), opt("key", str()), opt("value", str())}))})});

  // sfc / sfcclient
  add({.id = "sfcIntent", .parent = "deploymentIntentGroup", .elements = {"sfcIntent"}, .collection = "network-chains",
       .service = "sfc", .display = "network chain",
       .spec = obj({opt("chainType", one_of({"Routing"}, true)), opt("namespace", str())})});
  add({.id = "sfcLink", .parent = "sfcIntent", .elements = {"sfcLink"}, .collection = "links", .service = "sfc",
       .display = "network chain link",
       .spec = obj({opt("leftNet", str()), opt("rightNet", str()), opt("linkLabel", str()), req("app", name_str()),
                    opt("workloadResource", str()), opt("resourceType", str())}),
       .references = {ref("app")}});
  add({.id = "sfcClientSelector", .parent = "sfcIntent", .elements = {"sfcClientSelector"},
       .collection = "client-selectors", .service = "sfc", .display = "network chain client selector",
       .spec = obj({opt("chainEnd", one_of({"left", "right"}, true)), opt("podSelector", any()),
                    opt("namespaceSelector", any())})});
  add({.id = "sfcProviderNetwork", .parent = "sfcIntent", .elements = {"sfcProviderNetwork"},
       .collection = "provider-networks", .service = "sfc", .display = "network chain provider network",
       .spec = obj({opt("chainEnd", one_of({"left", "right"}, true)), opt("providerNetwork", str()),
                    opt("gatewayIp", str()), opt("subnet", str())})});
  add({.id = "sfcClientIntent", .parent = "deploymentIntentGroup", .elements = {"sfcClientIntent"},
       .collection = "sfc-clients", .service = "sfcClient", .display = "sfc client intent",
       .spec = obj({opt("chainEnd", one_of({"left", "right"}, true)), req("sfcIntent", name_str()),
                    req("compositeApp", name_str()), req("compositeAppVersion", name_str()),
                    req("deploymentIntentGroup", name_str()), req("app", name_str()), opt("workloadResource", str()),
                    opt("resourceType", str())}),
       .references = {ref("sfcIntent"), Reference{"app", RefType::plain, "", {}, {}, "compositeAppVersion", {}, {}}}});

  // ca-certs, logical-cloud variant
  add({.id = "caCertLc", .parent = "project", .elements = {"caCertLc"}, .collection = "ca-certs", .service = "ca-certs",
       .display = "logical cloud CA certificate", .spec = ca_cert_spec(), .lifecycle = true, .operations = ca_ops});
  add({.id = "caCertLogicalCloud", .parent = "caCertLc", .elements = {"caCertLogicalCloud"},
       .collection = "logical-clouds", .service = "ca-certs", .display = "CA certificate logical cloud",
       .spec = obj({req("logicalCloud", name_str())})});
  add({.id = "caCertClusterGroupLc", .parent = "caCertLogicalCloud", .elements = {"caCertClusterGroupLc"},
       .collection = "clusters", .service = "ca-certs", .display = "CA certificate cluster group",
       .spec = cluster_group_spec()});
  return k;
}

struct Registry {
  std::vector<Kind> kinds = build();
  std::map<std::string, size_t> by_id;
  Registry() {
    for (size_t i = 0; i < kinds.size(); ++i) by_id[kinds[i].id] = i;
  }
};

const Registry& registry() {
  static const Registry r;
  return r;
}

}  // namespace

const std::vector<Kind>& all_kinds() { return registry().kinds; }

const Kind* find_kind(const std::string& id) {
  const auto& r = registry();
  auto it = r.by_id.find(id);
  return it == r.by_id.end() ? nullptr : &r.kinds[it->second];
}

const Kind& kind(const std::string& id) {
  if (const Kind* k = find_kind(id)) return *k;
  fail(ErrorKind::internal, "unknown resource kind '" + id + "'");
}

std::vector<const Kind*> children_of(const std::string& id) {
  std::vector<const Kind*> out;
  for (const auto& k : all_kinds())
    if (k.parent == id) out.push_back(&k);
  return out;
}

std::vector<const Kind*> lineage(const std::string& id) {
  std::vector<const Kind*> chain;
  for (const Kind* k = &kind(id); k; k = k->parent.empty() ? nullptr : &kind(k->parent)) chain.push_back(k);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

size_t key_size(const Kind& k) {
  size_t n = 0;
  for (const Kind* c : lineage(k.id)) n += c->fixed.size() + c->elements.size();
  return n;
}

// ---- Anchors --------------------------------------------------------------

namespace {

[[noreturn]] void bad_segment(const std::vector<std::string>& segs, size_t i, const std::vector<std::string>& expected,
                              const std::string& what) {
  std::string before;
  for (size_t j = 0; j < i; ++j) before += (j ? "/" : "") + segs[j];
  std::string msg = i < segs.size() ? "unknown anchor segment '" + segs[i] + "'" : "anchor ends early";
  if (!before.empty()) msg += " after '" + before + "'";
  std::string hint;
  if (i < segs.size()) {
    std::string guess = closest_match(segs[i], expected);
    if (!guess.empty()) hint = "did you mean '" + guess + "'?";
  }
  if (hint.empty() && !expected.empty()) hint = what + ": " + join(expected, ", ");
  fail(ErrorKind::invalid, msg, hint);
}

void add_key(Key& key, const Kind& k, const std::vector<std::string>& values) {
  for (const auto& f : k.fixed) key.parts.push_back(f);
  for (size_t i = 0; i < k.elements.size(); ++i) key.parts.emplace_back(k.elements[i], values[i]);
}

}  // namespace

Anchor parse_anchor(const std::string& text) {
  Anchor a;
  std::string path = text;
  if (auto q = path.find('?'); q != std::string::npos) {
    a.query = path.substr(q + 1);
    path = path.substr(0, q);
  }
  if (starts_with(path, "/")) path = path.substr(1);
  if (starts_with(path, "v2/")) path = path.substr(3);
  while (ends_with(path, "/")) path.pop_back();
  a.text = path;
  if (path.empty()) fail(ErrorKind::invalid, "empty anchor", "an anchor looks like 'projects/p1/composite-apps'");
  auto segs = split(path, '/');
  for (const auto& s : segs)
    if (s.empty()) fail(ErrorKind::invalid, "anchor '" + path + "' has an empty segment");

  // The root collection.
  std::vector<std::string> roots;
  const Kind* current = nullptr;
  for (const auto& k : all_kinds()) {
    if (!k.parent.empty()) continue;
    roots.push_back(k.collection);
    if (k.collection == segs[0]) current = &k;
  }
  if (!current) bad_segment(segs, 0, roots, "an anchor starts with one of");

  Key key;
  size_t i = 1;
  for (;;) {
    // At a collection of `current`, parent key = key.
    if (i == segs.size()) {
      a.target = AnchorTarget::collection;
      a.kind = current;
      a.key = key;
      return a;
    }
    size_t n = current->elements.size();
    if (i + n > segs.size()) {
      // composite-apps/{ca} without version: name what is missing.
      fail(ErrorKind::invalid, "anchor '" + path + "' names a " + current->display + " without its version",
           "use '" + join(std::vector<std::string>(segs.begin(), segs.end()), "/") + "/<version>'");
    }
    std::vector<std::string> values(segs.begin() + static_cast<std::ptrdiff_t>(i),
                                    segs.begin() + static_cast<std::ptrdiff_t>(i + n));
    add_key(key, *current, values);
    i += n;
    if (i == segs.size()) {
      a.target = AnchorTarget::resource;
      a.kind = current;
      a.key = key;
      return a;
    }
    // Next: a child collection, an operation or status.
    std::vector<std::string> expected;
    const Kind* next = nullptr;
    for (const Kind* c : children_of(current->id)) {
      expected.push_back(c->collection);
      if (c->collection == segs[i]) next = c;
    }
    if (next) {
      current = next;
      ++i;
      continue;
    }
    std::string rest;
    for (size_t j = i; j < segs.size(); ++j) rest += (j > i ? "/" : "") + segs[j];
    if (rest == "status" || ends_with(rest, "/status")) {
      if (current->lifecycle || rest == "status") {
        a.target = AnchorTarget::status;
        a.kind = current;
        a.key = key;
        a.operation = rest;
        return a;
      }
    }
    for (const auto& op : current->operations) {
      expected.push_back(op);
      if (op == rest) {
        a.target = AnchorTarget::operation;
        a.kind = current;
        a.key = key;
        a.operation = op;
        return a;
      }
    }
    if (current->lifecycle) expected.push_back("status");
    bad_segment(segs, i, expected, "a " + current->display + " anchor continues with one of");
  }
}

std::string resource_anchor(const Kind& k, const Key& key) {
  std::string out;
  size_t pos = 0;
  for (const Kind* c : lineage(k.id)) {
    if (!out.empty()) out += '/';
    out += c->collection;
    pos += c->fixed.size();
    for (size_t i = 0; i < c->elements.size(); ++i) out += "/" + key.parts.at(pos++).second;
  }
  return out;
}

std::string collection_anchor(const Kind& k, const Key& parent_key) {
  if (k.parent.empty()) return k.collection;
  return resource_anchor(kind(k.parent), parent_key) + "/" + k.collection;
}

}  // namespace emco::resource
