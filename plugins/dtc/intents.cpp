#include "plugins/dtc/intents.hpp"

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"

namespace emco::plugins::dtc {

using nlohmann::json;

namespace {

std::string anchor_of(const store::Resource& r) { return resource::resource_anchor(*r.kind, r.key); }

std::string str_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<std::string> strings_at(const json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it != j.end() && it->is_array())
    for (const auto& e : *it)
      if (e.is_string()) out.push_back(e.get<std::string>());
  return out;
}

json spec_of(const store::Resource& r) { return json::parse(r.data).value("spec", json::object()); }
std::string name_of(const store::Resource& r) { return r.key.parts.back().second; }

resource::Key cluster_key(const std::string& cluster) {
  auto plus = cluster.find('+');
  return resource::Key{{{"clusterProvider", cluster.substr(0, plus)}, {"cluster", cluster.substr(plus + 1)}}};
}

}  // namespace

TrafficGroup load(const controllers::Call& call) {
  const store::Store& st = call.store;
  resource::Key tgi = call.dig;
  tgi.parts.emplace_back("trafficGroupIntent", call.intent);
  const auto& tgi_kind = resource::kind("trafficGroupIntent");
  TrafficGroup out{resource::resource_anchor(tgi_kind, tgi), call.intent, {}};
  if (!st.get(tgi))
    fail(ErrorKind::not_found, "traffic group intent '" + out.where + "' named in the group intent does not exist",
         "create it or fix the dtc entry of the group intent");
  for (const auto& rs : st.list(resource::kind("inboundServerIntent"), tgi)) {
    json s = spec_of(rs);
    Server server;
    server.where = anchor_of(rs);
    server.name = name_of(rs);
    server.app = str_at(s, "app");
    server.app_label = str_at(s, "appLabel");
    server.service_name = str_at(s, "serviceName");
    server.protocol = str_at(s, "protocol");
    server.external_name = str_at(s, "externalName");
    server.port = s.value("port", 0);
    server.external_support = s.value("externalSupport", false);
    server.service_mesh = str_at(s, "serviceMesh");
    json mgmt = s.value("management", json::object());
    server.sidecar_proxy = str_at(mgmt, "sidecarProxy");
    server.tls_type = str_at(mgmt, "tlsType");
    json certs = s.value("external", json::object()).value("externalCerts", json::object());
    server.service_certificate = str_at(certs, "serviceCertificate");
    server.service_private_key = str_at(certs, "servicePrivateKey");
    server.ca_certificate = str_at(certs, "caCertificate");
    server.edge_cnf = str_at(s, "edgeCNF");
    for (const auto& rc : st.list(resource::kind("inboundClientsIntent"), rs.key)) {
      json c = spec_of(rc);
      Client client{anchor_of(rc),           name_of(rc),           str_at(c, "app"), str_at(c, "appLabel"),
                    str_at(c, "serviceName"), strings_at(c, "namespaces"), strings_at(c, "cidrs"), {}};
      for (const auto& ra : st.list(resource::kind("inboundClientsAccessIntent"), rc.key)) {
        json a = spec_of(ra);
        client.access_points.push_back({anchor_of(ra), str_at(a, "action"), strings_at(a, "url"), strings_at(a, "access")});
      }
      server.clients.push_back(std::move(client));
    }
    out.servers.push_back(std::move(server));
  }
  return out;
}

std::pair<std::string, std::string> split_label(const std::string& label, const std::string& where) {
  auto eq = label.find('=');
  if (eq == std::string::npos || label.find('=', eq + 1) != std::string::npos)
    fail(ErrorKind::invalid, where + ": appLabel '" + label + "' is not of the form key=value",
         "e.g. appLabel: app=http-server");
  return {label.substr(0, eq), label.substr(eq + 1)};
}

const std::string* ClusterKv::find(const std::string& cluster, const std::string& key) {
  auto it = m_by_cluster.find(cluster);
  if (it == m_by_cluster.end()) {
    std::map<std::string, std::string> kv;
    for (const auto& r : m_store.list(resource::kind("clusterKv"), cluster_key(cluster)))
      for (const auto& entry : spec_of(r).value("kv", json::array()))
        for (auto e = entry.begin(); e != entry.end(); ++e)
          if (e->is_string()) kv.emplace(e.key(), e->get<std::string>());
    it = m_by_cluster.emplace(cluster, std::move(kv)).first;
  }
  auto v = it->second.find(key);
  return v == it->second.end() ? nullptr : &v->second;
}

const std::string& ClusterKv::require(const std::string& cluster, const std::string& key, const Server& s,
                                      const std::string& needed_by) {
  if (const std::string* v = find(cluster, key)) return *v;
  auto plus = cluster.find('+');
  fail(ErrorKind::invalid, s.where + ": cluster '" + cluster + "' of app '" + s.app + "' has no kv pair '" + key + "'",
       needed_by + " needs it: add it under cluster-providers/" + cluster.substr(0, plus) + "/clusters/" +
           cluster.substr(plus + 1) + "/kv-pairs");
}

bool has_label(const store::Store& st, const std::string& cluster, const std::string& label) {
  resource::Key k = cluster_key(cluster);
  k.parts.emplace_back("clusterLabel", label);
  return st.get(k).has_value();
}

}  // namespace emco::plugins::dtc
