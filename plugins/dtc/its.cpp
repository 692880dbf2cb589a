// ITS, the Istio sub-controller (spec/placement-and-actions.md §5 "DTC →
// ITS"), for the inbound server intents with serviceMesh "istio".
//
// Per server cluster, when some client cluster is elsewhere: a TLS
// AUTO_PASSTHROUGH Gateway, a ServiceEntry and a DestinationRule in
// istio-system for "<svc>.<ns>.<provider>.<cluster>". Per client cluster that
// is neither a server cluster nor already served for an earlier client of the
// same server: two ServiceEntries (the server hosts, and the bare service
// name) on a virtual IP (240.0.0.2 upwards, one per such cluster of the
// traffic group, as upstream counts) reaching the server clusters' ingress
// gateways, and ISTIO_MUTUAL DestinationRules. Access points add
// AuthorizationPolicies on the server clusters; externalSupport with
// sidecarProxy "yes" adds the external Gateway, VirtualService and (TLS
// SIMPLE/MUTUAL) the credential Secret. Keys have no "+Kind" suffix; a
// DestinationRule's key is its name plus "-dr".
//
// Where upstream's code indexes the server's clusters by the client's
// position (an index error as soon as clients outnumber server clusters),
// the client ServiceEntries list every server cluster's gateway as an
// endpoint; with one server cluster that is upstream's object. Access-point
// hosts are the four names once, where upstream repeats the list for every
// further access point of a client.

#include <nlohmann/json.hpp>

#include <set>

#include "core/util/error.hpp"
#include "plugins/dtc/dtc.hpp"

namespace emco::plugins::dtc {

using nlohmann::json;

namespace {

const char* const k_networking = "networking.istio.io/v1beta1";

json meta(const std::string& name, const std::string& ns) {
  json m = {{"name", name}};
  if (!ns.empty()) m["namespace"] = ns;
  return m;
}

json istio(const char* kind, const std::string& name, const std::string& ns, json spec) {
  return {{"apiVersion", k_networking}, {"kind", kind}, {"metadata", meta(name, ns)}, {"spec", std::move(spec)}};
}

json gateway(const std::string& name, const std::string& ns, const std::string& port_name, const std::string& protocol,
             uint32_t port, const std::vector<std::string>& hosts, const std::string& tls_mode,
             const std::string& credential) {
  json tls = json::object();
  if (!tls_mode.empty()) tls["mode"] = tls_mode;
  if (!credential.empty()) tls["credentialName"] = credential;
  json server = {{"port", {{"name", port_name}, {"number", port}, {"protocol", protocol}}}, {"hosts", hosts}, {"name", "tls"}};
  if (!tls.empty()) server["tls"] = std::move(tls);
  return istio("Gateway", name, ns, {{"servers", json::array({server})}, {"selector", {{"istio", "ingressgateway"}}}});
}

json destination_rule(const std::string& name, const std::string& host, const std::string& ns) {
  return istio("DestinationRule", name, ns, {{"host", host}, {"trafficPolicy", {{"tls", {{"mode", "ISTIO_MUTUAL"}}}}}});
}

json service_entry(const std::string& name, const std::string& ns, const std::vector<std::string>& hosts,
                   const std::vector<std::string>& addresses, const std::vector<std::string>& export_to,
                   const json& endpoints, const Server& s) {
  json spec = {{"hosts", hosts},
               {"location", "MESH_INTERNAL"},
               {"resolution", "DNS"},
               {"ports", json::array({{{"name", "tcp"}, {"number", s.port}, {"protocol", s.protocol}}})}};
  if (!addresses.empty()) spec["addresses"] = addresses;
  if (!export_to.empty()) spec["exportTo"] = export_to;
  if (!endpoints.empty()) spec["endpoints"] = endpoints;
  return istio("ServiceEntry", name, ns, std::move(spec));
}

struct Gateways {
  std::string cluster;
  std::string address;
  uint32_t external = 0, internal = 0, http = 0, https = 0;
};

uint32_t port_kv(ClusterKv& kv, const std::string& cluster, const std::string& key, const Server& s) {
  const std::string& v = kv.require(cluster, key, s, "Istio traffic");
  size_t used = 0;
  unsigned long n = 0;
  try {
    n = std::stoul(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != v.size() || n > 65535)
    fail(ErrorKind::invalid,
         s.where + ": kv pair '" + key + "' of cluster '" + cluster + "' is '" + v + "', not a port number");
  return static_cast<uint32_t>(n);
}

// The next virtual IP: upstream starts from 240.0.0.1 and increments before use.
class VirtualIps {
public:
  std::string next() { return "240.0.0." + std::to_string(++m_last); }

private:
  int m_last = 1;
};

class Its : public SubController {
public:
  void update(const TrafficGroup& tg, const controllers::Call& call, appcontext::AppContext& ctx) const override {
    ClusterKv kv(call.store);
    VirtualIps ips;
    const std::string ns = ctx.meta.count("Namespace") ? ctx.meta.at("Namespace") : "";
    for (const auto& s : tg.servers) {
      if (s.service_mesh != "istio") continue;
      const bool external = s.external_support && s.sidecar_proxy == "yes";
      const bool tls = s.tls_type == "MUTUAL" || s.tls_type == "SIMPLE";
      if (external && !tls && s.tls_type != "NONE")
        fail(ErrorKind::invalid, s.where + ": management.tlsType '" + s.tls_type + "' is not MUTUAL, SIMPLE or NONE",
             "external access through the ingress gateway needs one of them");
      appcontext::App& server_app = app_of(ctx, s.app, s.where);
      std::vector<Gateways> gws;
      for (const auto& c : server_app.clusters) {
        Gateways g{c.name, kv.require(c.name, "istioIngressGatewayAddress", s, "Istio traffic"), 0, 0, 0, 0};
        g.external = port_kv(kv, c.name, "istioIngressGatewayPort", s);
        g.internal = port_kv(kv, c.name, "istioIngressGatewayInternalPort", s);
        if (external && tls) g.https = port_kv(kv, c.name, "istioIngressGatewayHttpsPort", s);
        if (external && !tls) g.http = port_kv(kv, c.name, "istioIngressGatewayHttpPort", s);
        gws.push_back(std::move(g));
      }
      std::vector<std::string> server_hosts;
      for (const auto& g : gws) {
        auto [provider, cluster] = split_cluster(g.cluster);
        server_hosts.push_back(s.service_name + "." + ns + "." + provider + "." + cluster);
      }
      std::set<std::string> server_clusters;
      for (const auto& g : gws) server_clusters.insert(g.cluster);

      // Client side: resources per new client cluster, kept in client order.
      std::vector<std::pair<appcontext::Cluster*, std::vector<std::pair<std::string, json>>>> client_objects;
      std::set<std::string> client_clusters, served;
      std::vector<std::pair<size_t, const AccessPoint*>> access;  // (index within its client, point)
      for (const auto& c : s.clients) {
        for (auto& cl : app_of(ctx, c.app, c.where).clusters) {
          client_clusters.insert(cl.name);
          if (server_clusters.count(cl.name) || !served.insert(cl.name).second) continue;
          client_objects.push_back({&cl, client_resources(s, ns, server_hosts, gws, ips.next())});
        }
        for (size_t k = 0; k < c.access_points.size(); ++k) access.emplace_back(k, &c.access_points[k]);
      }

      // Server side, per server cluster: external access, cross-cluster access, access points.
      for (size_t m = 0; m < gws.size(); ++m) {
        appcontext::Cluster& cl = *server_app.find_cluster(gws[m].cluster);
        if (external) external_resources(ctx, cl, s, ns, gws[m]);
        bool elsewhere = false;
        for (const auto& cc : client_clusters) elsewhere = elsewhere || cc != gws[m].cluster;
        if (elsewhere) {
          const std::string& host = server_hosts[m];
          put_object(ctx, cl, s.service_name + "-gateway",
                     gateway(s.service_name + "-gateway", "istio-system", "tls", "TLS", gws[m].internal, {host},
                             "AUTO_PASSTHROUGH", ""));
          put_object(ctx, cl, s.service_name + "-se-server",
                     service_entry(s.service_name + "-se-server", "istio-system", {host}, {}, {"."},
                                   json::array({{{"address", s.service_name + "." + ns}}}), s));
          put_object(ctx, cl, s.service_name + "-se-server-dr-dr",
                     destination_rule(s.service_name + "-se-server-dr", host, "istio-system"));
        }
        for (const auto& [k, ap] : access) {
          std::vector<std::string> hosts = {s.service_name + "." + ns, s.service_name + "." + ns + ".svc.cluster.local",
                                            s.service_name};
          if (external) hosts.push_back(s.external_name);
          json policy = {{"apiVersion", "security.istio.io/v1beta1"},
                         {"kind", "AuthorizationPolicy"},
                         {"metadata", meta(s.app, ns)},
                         {"spec",
                          {{"action", ap->action},
                           {"rules", json::array({{{"to", json::array({{{"operation",
                                                                         {{"methods", ap->access},
                                                                          {"paths", ap->url},
                                                                          {"hosts", hosts}}}}})}}})}}}};
          put_object(ctx, cl, s.service_name + "-auth-" + std::to_string(k) + std::to_string(m), policy);
        }
      }
      for (auto& [cl, objects] : client_objects)
        for (auto& [key, object] : objects) put_object(ctx, *cl, key, object);
    }
  }

private:
  static std::vector<std::pair<std::string, json>> client_resources(const Server& s, const std::string& ns,
                                                                    const std::vector<std::string>& server_hosts,
                                                                    const std::vector<Gateways>& gws,
                                                                    const std::string& ip) {
    json endpoints = json::array();
    for (const auto& g : gws) endpoints.push_back({{"address", g.address}, {"ports", {{"tcp", g.external}}}});
    std::vector<std::pair<std::string, json>> out;
    const std::string& svc = s.service_name;
    out.emplace_back(svc + "-se-client0", service_entry(svc + "-se-client0", ns, server_hosts, {ip}, {}, endpoints, s));
    out.emplace_back(svc + "-se-client1", service_entry(svc + "-se-client1", ns, {svc}, {ip}, {}, endpoints, s));
    for (size_t i = 0; i < server_hosts.size(); ++i) {
      std::string name = svc + "-dr-client" + std::to_string(i);
      out.emplace_back(name + "-dr", destination_rule(name, server_hosts[i], ns));
    }
    out.emplace_back(svc + "-dr-client-svcname-dr", destination_rule(svc + "-dr-client-svcname", svc, ns));
    return out;
  }

  static void external_resources(appcontext::AppContext& ctx, appcontext::Cluster& cl, const Server& s,
                                 const std::string& ns, const Gateways& g) {
    std::string name = s.tls_type == "MUTUAL" ? "mutual" : s.tls_type == "SIMPLE" ? "simple" : "http";
    bool tls = name != "http";
    uint32_t port = tls ? g.https : g.http;
    const std::string gw = s.service_name + "-ext-" + name + "-gateway";
    const std::string credential = s.service_name + "-credential";
    put_object(ctx, cl, gw,
               gateway(gw, ns, "extsvc", tls ? "HTTPS" : "HTTP", port, {s.external_name}, tls ? s.tls_type : "",
                       credential));
    const std::string vs = s.service_name + "-vs-" + gw;
    json route = {{"name", s.service_name + "-http-route"},
                  {"match", json::array({{{"port", port}}})},
                  {"route", json::array({{{"destination", {{"host", s.service_name}, {"port", {{"number", s.port}}}}}}})}};
    put_object(ctx, cl, vs,
               istio("VirtualService", vs, ns,
                     {{"hosts", json::array({s.external_name})}, {"gateways", json::array({gw})},
                      {"http", json::array({route})}}));
    if (!tls) return;
    json secret = {{"apiVersion", "v1"},
                   {"kind", "Secret"},
                   {"metadata", meta(credential, "istio-system")},
                   {"type", "Opaque"},
                   {"data",
                    {{"ca.crt", s.tls_type == "MUTUAL" ? s.ca_certificate : ""},
                     {"tls.crt", s.service_certificate},
                     {"tls.key", s.service_private_key}}}};
    put_object(ctx, cl, credential, secret);
  }
};

}  // namespace

std::unique_ptr<SubController> make_its() { return std::make_unique<Its>(); }

}  // namespace emco::plugins::dtc
