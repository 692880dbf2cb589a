#pragma once
// The intents of one traffic group intent, read once for every dtc
// sub-controller (spec/resources.md §7): its inbound server intents, each
// with its clients intents, each with its access-point intents, in key order
// (upstream lists them from its database the same way).
//
// Every document is kept with its anchor so that errors name it. load()
// reads the store only; it throws Error(not_found) when the traffic group
// intent named in the group intent does not exist.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/plan/controllers.hpp"

namespace emco::plugins::dtc {

struct AccessPoint {
  std::string where;  // the document's anchor
  std::string action;
  std::vector<std::string> url, access;
};

struct Client {
  std::string where;
  std::string name;  // metadata.name
  std::string app, app_label, service_name;
  std::vector<std::string> namespaces, cidrs;
  std::vector<AccessPoint> access_points;
};

struct Server {
  std::string where;
  std::string name;  // metadata.name (the inbound intent's)
  std::string app, app_label, service_name, protocol, external_name;
  int port = 0;
  bool external_support = false;
  std::string service_mesh;  // "" when unset (upstream's default "none")
  std::string sidecar_proxy, tls_type;
  std::string service_certificate, service_private_key, ca_certificate;
  std::string edge_cnf;  // "" when unset (upstream's default "none")
  std::vector<Client> clients;
};

struct TrafficGroup {
  std::string where;  // the traffic group intent's anchor
  std::string name;   // the intent name from the group intent
  std::vector<Server> servers;
};

TrafficGroup load(const controllers::Call& call);

// "key=value" → {key, value}; Error(invalid) naming `where` otherwise.
std::pair<std::string, std::string> split_label(const std::string& label, const std::string& where);

// The kv pairs of a cluster ("<provider>+<cluster>") from all its kv-pairs
// documents, first value of a key wins (upstream's lookup order); cached.
class ClusterKv {
public:
  explicit ClusterKv(const store::Store& st) : m_store(st) {}
  // The value, or nullptr when no kv-pairs document of the cluster has `key`.
  const std::string* find(const std::string& cluster, const std::string& key);
  // The value; Error(invalid) naming server intent `s` and what needs the pair when it is missing.
  const std::string& require(const std::string& cluster, const std::string& key, const Server& s,
                             const std::string& needed_by);

private:
  const store::Store& m_store;
  std::map<std::string, std::map<std::string, std::string>> m_by_cluster;
};

// Whether cluster "<provider>+<cluster>" carries `label`.
bool has_label(const store::Store& st, const std::string& cluster, const std::string& label);

}  // namespace emco::plugins::dtc
