// SWC, the SD-EWAN sub-controller (spec/placement-and-actions.md §5 "DTC →
// SWC"), for the inbound server intents with edgeCNF "sdewan": a CNFService
// "<svc>.<ns>.svc.cluster.local" on every server cluster (ports and CIDR from
// that cluster's kv pairs SdewanCnfPort, SdewanServicePort,
// SdewanServiceAllowedCidr) and a SdewanApplication "<svc>" selecting the
// server's appLabel on every client cluster. Keys are the object names plus
// "-sa", as upstream's.
//
// A client's SdewanApplication carries the ports of the server's first
// cluster; upstream's code takes the server cluster at the client's position
// (an index error when clients outnumber server clusters), which is the same
// object for the usual single server cluster.

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "plugins/dtc/dtc.hpp"

namespace emco::plugins::dtc {

using nlohmann::json;

namespace {

json sdewan(const char* kind, const std::string& name, const std::string& ns, json spec) {
  json meta = {{"name", name}, {"labels", {{"sdewanPurpose", "base"}}}};
  if (!ns.empty()) meta["namespace"] = ns;
  return {{"apiVersion", "batch.sdewan.akraino.org/v1alpha1"}, {"kind", kind}, {"metadata", meta}, {"spec", std::move(spec)}};
}

class Swc : public SubController {
public:
  void update(const TrafficGroup& tg, const controllers::Call& call, appcontext::AppContext& ctx) const override {
    ClusterKv kv(call.store);
    const std::string ns = ctx.meta.count("Namespace") ? ctx.meta.at("Namespace") : "";
    for (const auto& s : tg.servers) {
      if (s.edge_cnf != "sdewan") continue;
      auto [label_key, label_value] = split_label(s.app_label, s.where);
      appcontext::App& server_app = app_of(ctx, s.app, s.where);
      struct Ports {
        appcontext::Cluster* cluster;
        std::string cnf, service, cidr;
      };
      std::vector<Ports> ports;
      for (auto& c : server_app.clusters)
        ports.push_back({&c, kv.require(c.name, "SdewanCnfPort", s, "SD-EWAN"), kv.require(c.name, "SdewanServicePort", s, "SD-EWAN"),
                         kv.require(c.name, "SdewanServiceAllowedCidr", s, "SD-EWAN")});
      const std::string fullname = s.service_name + "." + ns + ".svc.cluster.local";
      for (const auto& p : ports)
        put_object(ctx, *p.cluster, fullname + "-sa",
                   sdewan("CNFService", fullname, ns,
                          {{"fullname", fullname}, {"port", p.cnf}, {"dport", p.service}, {"cidr", p.cidr}}));
      if (ports.empty()) continue;
      json application = sdewan("SdewanApplication", s.service_name, ns,
                                 {{"appNamespace", ns},
                                  {"podSelector", {{"matchLabels", {{label_key, label_value}}}}},
                                  {"servicePort", ports.front().service},
                                  {"cnfPort", ports.front().cnf}});
      for (const auto& c : s.clients)
        for (auto& cl : app_of(ctx, c.app, c.where).clusters) put_object(ctx, cl, s.service_name + "-sa", application);
    }
  }
};

}  // namespace

std::unique_ptr<SubController> make_swc() { return std::make_unique<Swc>(); }

}  // namespace emco::plugins::dtc
