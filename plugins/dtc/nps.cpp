// NPS, the network-policy sub-controller (spec/placement-and-actions.md §5
// "DTC → NPS"): one NetworkPolicy per inbound server intent with clients,
// on every cluster of the server app labelled `networkpolicy-supported`.

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "plugins/dtc/dtc.hpp"

namespace emco::plugins::dtc {

using nlohmann::json;

namespace {

class Nps : public SubController {
public:
  void update(const TrafficGroup& tg, const controllers::Call& call, appcontext::AppContext& ctx) const override {
    if (tg.servers.empty())
      fail(ErrorKind::not_found, tg.where + ": the traffic group intent has no inbound server intents",
           "add one under " + tg.where + "/inbound-intents");
    for (const auto& s : tg.servers) {
      auto [key, value] = split_label(s.app_label, s.where);
      if (s.clients.empty()) continue;  // upstream: skipped with a warning
      json from = json::array();
      for (const auto& c : s.clients) {
        auto [ck, cv] = split_label(c.app_label, c.where);  // required by the schema
        from.push_back({{"podSelector", {{"matchLabels", {{ck, cv}}}}}});
        if (s.external_support)
          for (const auto& cidr : c.cidrs) from.push_back({{"ipBlock", {{"cidr", cidr}}}});
      }
      if (!s.external_support) from.push_back({{"ipBlock", {{"cidr", "0.0.0.0/0"}}}});
      // Upstream's two separate items, one with the protocol and one with the port.
      json rule = {{"ports", json::array({{{"protocol", s.protocol}}, {{"port", s.port}}})}};
      if (!from.empty()) rule["from"] = std::move(from);
      const std::string name = tg.name + "-" + s.name;
      json policy = {{"apiVersion", "networking.k8s.io/v1"},
                     {"kind", "NetworkPolicy"},
                     {"metadata", {{"name", name}}},
                     {"spec",
                      {{"podSelector", {{"matchLabels", {{key, value}}}}},
                       {"policyTypes", json::array({"Ingress"})},
                       {"ingress", json::array({std::move(rule)})}}}};
      for (auto& cluster : app_of(ctx, s.app, s.where).clusters)
        if (has_label(call.store, cluster.name, "networkpolicy-supported")) put_object(ctx, cluster, name, policy);
    }
  }
};

}  // namespace

std::unique_ptr<SubController> make_nps() { return std::make_unique<Nps>(); }

}  // namespace emco::plugins::dtc
