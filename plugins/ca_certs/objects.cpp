// The ca-certs intent as read from the workspace, and the objects and
// AppContexts upstream's ca-certs makes from it (src/ca-certs/pkg/certificate,
// certissuer/certmanagerissuer, service/istioservice, service/knccservice).

#include <algorithm>
#include <set>

#include "core/k8s/fields.hpp"
#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "core/util/go_duration.hpp"
#include "core/util/strings.hpp"
#include "plugins/ca_certs/ca_certs.hpp"

namespace emco::plugins::ca_certs {

using nlohmann::json;
using resource::Key;
namespace ac = emco::appcontext;

namespace {

json spec_of(const store::Resource& r) {
  json d = json::parse(r.data);
  json s = d.value("spec", json::object());
  return s.is_object() ? s : json::object();
}

std::string name_of(const store::Resource& r) { return r.key.parts.back().second; }

std::vector<std::string> strings_at(const json& j, const json::json_pointer& p) {
  std::vector<std::string> out;
  if (!j.contains(p) || !j.at(p).is_array()) return out;
  for (const auto& e : j.at(p))
    if (e.is_string()) out.push_back(e.get<std::string>());
  return out;
}

std::string str_at(const json& j, const json::json_pointer& p) {
  return j.contains(p) && j.at(p).is_string() ? j.at(p).get<std::string>() : std::string();
}

Key cluster_key(const std::string& provider, const std::string& cluster) {
  return Key{{{"clusterProvider", provider}, {"cluster", cluster}}};
}

CaCert read_cert(store::Store& st, const resource::Kind& k, const Key& key) {
  auto r = st.get(key);
  CaCert c;
  c.key = key;
  c.kind = &k;
  c.what = store::describe(k, key);
  if (!r) fail(ErrorKind::not_found, c.what + " does not exist");
  c.name = name_of(*r);
  const json s = spec_of(*r);
  const std::string anchor = resource::resource_anchor(k, key);
  auto bad = [&](const std::string& msg, const std::string& hint) {
    fail(ErrorKind::invalid, c.what + " (" + anchor + "): " + msg, hint);
  };
  const std::string provider = str_at(s, "/issuingCluster/clusterProvider"_json_pointer);
  const std::string cluster = str_at(s, "/issuingCluster/cluster"_json_pointer);
  if (provider.empty() || cluster.empty())
    bad("spec.issuingCluster needs clusterProvider and cluster", "name the cluster whose issuer signs the certificates");
  if (!st.get(cluster_key(provider, cluster)))
    bad("spec.issuingCluster names cluster '" + provider + "+" + cluster + "', which is not registered",
        "register it first (emco cluster add) or correct spec.issuingCluster");
  c.issuing_cluster = provider + "+" + cluster;
  c.issuer_name = str_at(s, "/issuerRef/name"_json_pointer);
  c.issuer_kind = str_at(s, "/issuerRef/kind"_json_pointer);
  c.issuer_group = str_at(s, "/issuerRef/group"_json_pointer);
  if (c.issuer_group != "cert-manager.io")
    bad("spec.issuerRef.group '" + c.issuer_group + "' is not a supported issuer",
        "ca-certs enrolls through cert-manager: group: cert-manager.io");
  if (c.issuer_name.empty()) bad("spec.issuerRef.name is empty", "name the cert-manager issuer on the issuing cluster");
  if (c.issuer_kind.empty()) c.issuer_kind = "Issuer";  // cert-manager's default kind
  c.is_ca = s.value("isCA", false);
  if (std::string d = s.value("duration", ""); !d.empty()) {
    std::int64_t ns = 0;
    if (!parse_go_duration(d, ns) || ns <= 0)
      bad("spec.duration '" + d + "' is not a duration", "a Go duration such as 8760h");
    c.duration = go_duration_string(ns);
  }
  const json info = s.value("csrInfo", json::object());
  if (info.contains("keySize") && info["keySize"].is_number_integer() && info["keySize"].get<int>() != 0) {
    c.key_size = info["keySize"].get<int>();
    if (c.key_size < 2048 || c.key_size > 8192) bad("csrInfo.keySize " + std::to_string(c.key_size) + " is out of range", "use 2048 to 8192 bits");
  }
  std::string pka = str_at(info, "/algorithm/publicKeyAlgorithm"_json_pointer);
  if (!pka.empty() && pka != "RSA") bad("csrInfo.algorithm.publicKeyAlgorithm '" + pka + "' is not supported", "use RSA");
  std::string sig = str_at(info, "/algorithm/signatureAlgorithm"_json_pointer);
  if (sig == "SHA384WithRSA") c.signature_digest = "SHA384";
  else if (sig == "SHA512WithRSA") c.signature_digest = "SHA512";
  else if (!sig.empty() && sig != "SHA256WithRSA")
    bad("csrInfo.algorithm.signatureAlgorithm '" + sig + "' is not supported", "use SHA256WithRSA, SHA384WithRSA or SHA512WithRSA");
  c.common_name_prefix = str_at(info, "/subject/names/commonNamePrefix"_json_pointer);
  c.country = strings_at(info, "/subject/locale/country"_json_pointer);
  c.locality = strings_at(info, "/subject/locale/locality"_json_pointer);
  c.postal_code = strings_at(info, "/subject/locale/postalCode"_json_pointer);
  c.province = strings_at(info, "/subject/locale/province"_json_pointer);
  c.street_address = strings_at(info, "/subject/locale/streetAddress"_json_pointer);
  c.organization = strings_at(info, "/subject/organization/names"_json_pointer);
  c.units = strings_at(info, "/subject/organization/units"_json_pointer);
  c.dns_names = strings_at(info, "/dnsNames"_json_pointer);
  c.email_addresses = strings_at(info, "/emailAddresses"_json_pointer);
  return c;
}

// The clusters a cluster group names (upstream module.getClusters): by name
// (it must be registered) or every cluster of the provider with the label.
std::vector<std::string> group_clusters(store::Store& st, const resource::Kind& gk, const store::Resource& g) {
  const json s = spec_of(g);
  const std::string provider = s.value("clusterProvider", "");
  const std::string what = store::describe(gk, g.key) + " (" + resource::resource_anchor(gk, g.key) + ")";
  std::string scope = to_lower(s.value("scope", "name"));
  std::vector<std::string> out;
  if (scope == "label") {
    const std::string label = s.value("label", "");
    if (label.empty()) fail(ErrorKind::invalid, what + ": scope label needs spec.label");
    std::set<std::string> found;
    for (const auto& r : st.list(resource::kind("clusterLabel"), Key{{{"clusterProvider", provider}}}))
      if (*r.key.get("clusterLabel") == label) found.insert(*r.key.get("cluster"));
    out.assign(found.begin(), found.end());
    return out;
  }
  const std::string cluster = s.value("cluster", "");
  if (cluster.empty()) fail(ErrorKind::invalid, what + ": scope name needs spec.cluster");
  if (!st.get(cluster_key(provider, cluster)))
    fail(ErrorKind::invalid, what + ": cluster '" + provider + "+" + cluster + "' is not registered",
         "register it first (emco cluster add) or correct the cluster group");
  out.push_back(cluster);
  return out;
}

void add_cluster(std::vector<EdgeCluster>& out, const std::string& provider, const std::string& cluster,
                 const std::string& ns) {
  auto it = std::find_if(out.begin(), out.end(),
                         [&](const EdgeCluster& e) { return e.provider == provider && e.cluster == cluster; });
  if (it == out.end()) it = out.insert(out.end(), EdgeCluster{provider, cluster, {}});
  if (!ns.empty() && std::find(it->namespaces.begin(), it->namespaces.end(), ns) == it->namespaces.end())
    it->namespaces.push_back(ns);
}

void put(ac::AppContext& ctx, ac::Cluster& cl, const json& obj) {
  cl.put({obj["metadata"]["name"].get<std::string>() + "+" + obj["kind"].get<std::string>(), ctx.intern(obj.dump())});
}

ac::AppContext new_context(const Intent& in, const std::string& id, const std::string& app, const std::string& created) {
  ac::AppContext ctx;
  ctx.id = id;
  ctx.owner = {in.cert.kind->id, in.cert.key};
  ctx.created = created;
  ctx.meta = {{"CaCert", in.cert.name}, {"Namespace", "default"}};
  if (auto p = in.cert.key.get("project")) ctx.meta["Project"] = *p;
  if (auto p = in.cert.key.get("clusterProvider")) ctx.meta["ClusterProvider"] = *p;
  ac::App a;
  a.name = app;
  ctx.apps.push_back(std::move(a));
  return ctx;
}

}  // namespace

Intent load_intent(store::Store& st, const resource::Kind& k, const Key& key) {
  Intent in;
  in.cert = read_cert(st, k, key);
  in.logical_cloud = k.id == "caCertLc";
  if (!in.logical_cloud) {
    const auto& gk = resource::kind("caCertClusterGroupCp");
    for (const auto& g : st.list(gk, key))
      for (const auto& c : group_clusters(st, gk, g)) add_cluster(in.clusters, spec_of(g).value("clusterProvider", ""), c, "");
  } else {
    const auto& lk = resource::kind("caCertLogicalCloud");
    const auto& gk = resource::kind("caCertClusterGroupLc");
    const std::string project = *key.get("project");
    for (const auto& l : st.list(lk, key)) {
      const std::string lc_name = spec_of(l).value("logicalCloud", "");
      const Key lc_key{{{"project", project}, {"logicalCloud", lc_name}}};
      auto lc = st.get(lc_key);
      if (!lc)
        fail(ErrorKind::invalid,
             store::describe(lk, l.key) + " (" + resource::resource_anchor(lk, l.key) + "): logical cloud '" + lc_name +
                 "' does not exist",
             "create it first or correct spec.logicalCloud");
      const std::string ns = spec_of(*lc).value("namespace", "");
      std::set<std::string> referenced;
      for (const auto& ref : st.list(resource::kind("clusterReference"), lc_key)) {
        json rs = spec_of(ref);
        referenced.insert(rs.value("clusterProvider", "") + "+" + rs.value("cluster", ""));
      }
      // Upstream getLogicalCloudReferencedClusters: the group's clusters the cloud references.
      for (const auto& g : st.list(gk, l.key)) {
        const std::string provider = spec_of(g).value("clusterProvider", "");
        for (const auto& c : group_clusters(st, gk, g))
          if (referenced.count(provider + "+" + c)) add_cluster(in.clusters, provider, c, ns);
      }
    }
  }
  if (in.clusters.empty())
    fail(ErrorKind::invalid, in.cert.what + " has no clusters to enroll",
         in.logical_cloud ? "add a logical cloud and a cluster group naming clusters it references"
                          : "add a cluster group under '" + resource::resource_anchor(k, key) + "/clusters'");
  return in;
}

std::string object_name(const std::string& ctx, const CaCert& c, const EdgeCluster& e, const std::string& suffix) {
  return ctx + "-" + c.name + "-" + e.provider + "-" + e.cluster + "-" + suffix;
}

std::string common_name(const CaCert& c, const EdgeCluster& e) {
  std::string cn = c.name + "-" + e.provider + "-" + e.cluster + "-ca";
  if (!c.common_name_prefix.empty()) cn += "-" + c.common_name_prefix;
  return cn;
}

json certificate_request(const CaCert& c, const std::string& name, const std::string& csr_pem) {
  json spec = {{"request", base64_encode(csr_pem)},
               {"issuerRef", {{"name", c.issuer_name}, {"kind", c.issuer_kind}, {"group", c.issuer_group}}}};
  if (!c.duration.empty()) spec["duration"] = c.duration;
  if (c.is_ca) spec["isCA"] = true;
  return {{"apiVersion", "cert-manager.io/v1"}, {"kind", "CertificateRequest"}, {"metadata", {{"name", name}}}, {"spec", spec}};
}

ac::AppContext enrollment_context(const Intent& in, const std::string& id, const std::map<std::string, std::string>& csrs,
                                  const std::string& created) {
  ac::AppContext ctx = new_context(in, id, k_enrollment_app, created);
  ac::Cluster issuer;
  issuer.name = in.cert.issuing_cluster;
  for (const auto& e : in.clusters)
    put(ctx, issuer, certificate_request(in.cert, object_name(id, in.cert, e, "cr"), csrs.at(e.id())));
  ctx.apps.front().clusters.push_back(std::move(issuer));
  return ctx;
}

ac::AppContext distribution_context(const Intent& in, const std::string& id, const std::map<std::string, Issued>& issued,
                                    const std::string& created) {
  ac::AppContext ctx = new_context(in, id, k_distribution_app, created);
  for (const auto& e : in.clusters) {
    const Issued& is = issued.at(e.id());
    ac::Cluster cl;
    cl.name = e.id();
    const std::string chain = is.certificate + is.ca;  // the caCert chain, as upstream joins it
    const std::string secret = object_name(id, in.cert, e, "ca");
    const std::string issuer = object_name(id, in.cert, e, "issuer");
    put(ctx, cl,
        {{"apiVersion", "v1"},
         {"kind", "Secret"},
         {"metadata", {{"name", secret}, {"namespace", "cert-manager"}}},
         {"data", {{"tls.crt", base64_encode(chain)}, {"tls.key", base64_encode(is.key)}}}});
    put(ctx, cl,
        {{"apiVersion", "cert-manager.io/v1"},
         {"kind", "ClusterIssuer"},
         {"metadata", {{"name", issuer}}},
         {"spec", {{"ca", {{"secretName", secret}}}}}});
    for (const auto& ns : e.namespaces)
      put(ctx, cl,
          {{"apiVersion", "networking.istio.io/v1beta1"},
           {"kind", "ProxyConfig"},
           {"metadata", {{"name", object_name(id, in.cert, e, ns + "-pc")}, {"namespace", ns}}},
           {"spec", {{"environmentVariables", {{"ISTIO_META_CERT_SIGNER", issuer}}}}}});
    // Istio's mesh config, patched by KNCC: the chain as a trusted CA for the
    // issuer's signer and, without per-namespace ProxyConfigs, the signer
    // every proxy asks for (upstream createIstioServiceResourcess).
    std::string indented = join(split(chain, '\n'), "\n    ");
    json patch = json::array({{{"key", "mesh:\n  caCertificates\n"},
                               {"value", "- certSigners:\n  - clusterissuers.cert-manager.io/" + issuer + "\n  pem: |\n    " + indented}}});
    if (e.namespaces.empty())
      patch.push_back({{"key", "mesh:\n  defaultConfig:\n    proxyMetadata:\n      ISTIO_META_CERT_SIGNER\n"}, {"value", issuer}});
    put(ctx, cl,
        {{"apiVersion", "kncc.k8sappconfig.com.gitlab.com/v1alpha1"},
         {"kind", "ConfigCtrl"},
         {"metadata", {{"name", object_name(id, in.cert, e, "kncc")}, {"namespace", "istio-system"}}},
         {"spec", {{"resource", {{"name", "istio"}, {"namespace", "istio-system"}}}, {"patch", patch}}}});
    ctx.apps.front().clusters.push_back(std::move(cl));
  }
  std::sort(ctx.apps.front().clusters.begin(), ctx.apps.front().clusters.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return ctx;
}

std::optional<Issued> issued_by(const json& live, std::string& problem) {
  problem.clear();
  // The object is the cluster's answer: every field is read by its type, so
  // a value of another type than cert-manager's reads as absent rather than
  // throwing from the JSON library.
  using k8s::str_field;
  const json& status = k8s::field(live, "status");
  bool ready = false;
  for (const auto& c : k8s::array_field(status, "conditions")) {
    const std::string type = str_field(c, "type"), state = str_field(c, "status");
    const std::string message = str_field(c, "message"), reason = str_field(c, "reason");
    if ((type == "Denied" || type == "InvalidRequest") && state == "True")
      problem = type + ": " + (message.empty() ? reason : message);
    if (type == "Ready") {
      ready = state == "True";
      if (state == "False" && (reason == "Failed" || reason == "Denied")) problem = reason + ": " + message;
    }
  }
  if (!ready) return std::nullopt;
  auto cert = base64_decode(str_field(status, "certificate"), {.lenient = true});
  auto ca = base64_decode(str_field(status, "ca"), {.lenient = true});
  if (!cert || cert->empty()) {
    problem = "Ready without status.certificate";
    return std::nullopt;
  }
  if (!ca || ca->empty()) {
    problem = "certificate is generated by an invalid certificate authority (no status.ca)";
    return std::nullopt;
  }
  return Issued{*cert, *ca, {}};
}

}  // namespace emco::plugins::ca_certs
