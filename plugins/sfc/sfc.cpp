#include "plugins/sfc/sfc.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/plan/object.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::plugins::sfc {

using nlohmann::json;

namespace {

const char* const k_chain_app = "network-chain-intents";

std::string anchor_of(const store::Resource& r) { return resource::resource_anchor(*r.kind, r.key); }
json spec_of(const store::Resource& r) { return json::parse(r.data).value("spec", json::object()); }
std::string name_of(const store::Resource& r) { return r.key.parts.back().second; }

std::string str_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A label selector as Go's metav1.LabelSelector writes it: only its non-empty fields.
json selector(const json& spec, const char* field) {
  json out = json::object();
  auto it = spec.find(field);
  if (it == spec.end() || !it->is_object()) return out;
  for (const char* f : {"matchLabels", "matchExpressions"})
    if (auto v = it->find(f); v != it->end() && !v->is_null() && !v->empty()) out[f] = *v;
  return out;
}

std::map<std::string, std::string> match_labels(const json& spec, const char* field) {
  std::map<std::string, std::string> out;
  json s = selector(spec, field);
  if (s.contains("matchLabels") && s["matchLabels"].is_object())
    for (auto it = s["matchLabels"].begin(); it != s["matchLabels"].end(); ++it)
      out[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
  return out;
}

// Sets `labels` on the pod template of resource `key` of `app` on `cluster`; equal inputs are edited once.
class Labeller {
public:
  explicit Labeller(appcontext::AppContext& ctx) : m_ctx(ctx) {}
  void label(appcontext::Cluster& cluster, const std::string& key, const std::map<std::string, std::string>& labels,
             const std::string& where, const std::string& app) {
    appcontext::Resource* r = cluster.find(key);
    if (!r)
      fail(ErrorKind::invalid,
           where + ": app '" + app + "' has no resource '" + key + "' on cluster '" + cluster.name + "'",
           "workloadResource and resourceType name an object of the app's chart (emco dig render shows them)");
    std::string memo = r->hash();
    for (const auto& [k, v] : labels) memo += "\n" + k + "=" + v;
    auto it = m_done.find(memo);
    if (it == m_done.end()) {
      std::string what = where + ": resource '" + key + "'";
      json object = controllers::parse_object(r->text(), what);
      json* tmpl = controllers::pod_template(object);
      if (!tmpl)
        fail(ErrorKind::invalid, what + ": a '" + str_at(object, "kind") + "' has no pod template to label",
             "name a Pod or a workload with a pod template");
      json& l = (*tmpl)["metadata"]["labels"];
      if (!l.is_object()) l = json::object();
      for (const auto& [k, v] : labels) l[k] = v;
      it = m_done.emplace(memo, m_ctx.intern(controllers::object_yaml(object))).first;
    }
    r->content = it->second;
  }

private:
  appcontext::AppContext& m_ctx;
  std::unordered_map<std::string, appcontext::ContentRef> m_done;
};

struct Link {
  std::string where, left, right, label, app, key;
};

// The chain text from the links, as upstream builds and checks it.
std::string chain_text(const std::vector<Link>& links, const std::string& where) {
  std::map<std::string, std::string> left_label, label_right;
  std::set<std::string> rights;
  for (const auto& l : links) {
    if (!left_label.emplace(l.left, l.label).second)
      fail(ErrorKind::invalid, l.where + ": left network '" + l.left + "' is the left network of another link too");
    if (!rights.insert(l.right).second)
      fail(ErrorKind::invalid, l.where + ": right network '" + l.right + "' is the right network of another link too");
    if (!label_right.emplace(l.label, l.right).second)
      fail(ErrorKind::invalid, l.where + ": link label '" + l.label + "' is the label of another link too");
  }
  std::string leftmost;
  for (const auto& [net, label] : left_label) {
    if (rights.count(net)) continue;
    if (!leftmost.empty())
      fail(ErrorKind::invalid, where + ": the links have several leftmost networks ('" + leftmost + "', '" + net + "')",
           "each link's leftNet must be the rightNet of the link before it");
    leftmost = net;
  }
  if (leftmost.empty())
    fail(ErrorKind::invalid, where + ": the links have no leftmost network (no links, or they form a ring)",
         "add links under " + where + "/links");
  std::string chain = "net=" + leftmost, net = leftmost;
  size_t count = 0;
  for (auto it = left_label.find(net); it != left_label.end() && count <= links.size(); it = left_label.find(net)) {
    net = label_right[it->second];
    chain += "," + it->second + ",net=" + net;
    ++count;
  }
  if (count != links.size())
    fail(ErrorKind::invalid, where + ": the links do not form one chain from '" + leftmost + "' (" + chain + ")",
         "each link's leftNet must be the rightNet of the link before it");
  return chain;
}

json routing_network() {
  return {{"networkName", ""}, {"gatewayIp", ""}, {"subnet", ""}, {"podSelector", json::object()},
          {"namespaceSelector", json::object()}};
}

}  // namespace

void Sfc::update(const controllers::Call& call, appcontext::AppContext& ctx) const {
  const store::Store& st = call.store;
  auto chains = st.list(resource::kind("sfcIntent"), call.dig);
  if (chains.empty())
    fail(ErrorKind::invalid,
         "the group intent names sfc, but deployment intent group '" +
             resource::resource_anchor(resource::kind("deploymentIntentGroup"), call.dig) + "' has no network chain",
         "add one under .../network-chains or remove sfc from the group intent");
  Labeller labeller(ctx);
  for (const auto& chain_res : chains) {
    std::string where = anchor_of(chain_res), name = name_of(chain_res);
    json spec = spec_of(chain_res);
    std::map<std::string, std::vector<json>> ends;  // "left" / "right"
    for (const auto& r : st.list(resource::kind("sfcClientSelector"), chain_res.key)) {
      json s = spec_of(r);
      json entry = routing_network();
      entry["podSelector"] = selector(s, "podSelector");
      entry["namespaceSelector"] = selector(s, "namespaceSelector");
      std::string end = str_at(s, "chainEnd");
      if (end == "left" || end == "right") ends[end].push_back(std::move(entry));
    }
    std::map<std::string, size_t> filled;
    for (const auto& r : st.list(resource::kind("sfcProviderNetwork"), chain_res.key)) {
      json s = spec_of(r);
      std::string end = str_at(s, "chainEnd");
      if (end != "left" && end != "right") continue;
      auto& list = ends[end];
      size_t& i = filled[end];
      if (i == list.size()) list.push_back(routing_network());
      list[i]["networkName"] = str_at(s, "providerNetwork");
      list[i]["gatewayIp"] = str_at(s, "gatewayIp");
      list[i]["subnet"] = str_at(s, "subnet");
      ++i;
    }
    for (const char* end : {"left", "right"})
      if (ends[end].empty())
        fail(ErrorKind::invalid, where + ": the " + std::string(end) + " end has no client selector and no provider network",
             "add one under " + where + "/client-selectors or " + where + "/provider-networks");

    std::vector<Link> links;
    for (const auto& r : st.list(resource::kind("sfcLink"), chain_res.key)) {
      json s = spec_of(r);
      links.push_back({anchor_of(r), str_at(s, "leftNet"), str_at(s, "rightNet"), str_at(s, "linkLabel"),
                       str_at(s, "app"), str_at(s, "workloadResource") + "+" + str_at(s, "resourceType")});
    }
    std::string chain = chain_text(links, where);

    // The clusters where every app of the chain is placed.
    std::set<std::string> clusters;
    bool first = true;
    for (const auto& l : links) {
      const appcontext::App* app = ctx.find_app(l.app);
      if (!app)
        fail(ErrorKind::invalid, l.where + ": app '" + l.app + "' is not part of the composite app",
             "name an app of the composite app");
      std::set<std::string> mine;
      for (const auto& c : app->clusters) mine.insert(c.name);
      if (first) clusters = std::move(mine);
      else
        std::erase_if(clusters, [&](const std::string& c) { return !mine.count(c); });
      first = false;
    }
    if (clusters.empty())
      fail(ErrorKind::invalid, where + ": no cluster has every app of the chain (" + chain + ")",
           "place the chain's apps on the same clusters");

    json cr = {{"apiVersion", "k8s.plugin.opnfv.org/v1alpha1"},
               {"kind", "NetworkChaining"},
               {"metadata", {{"name", name}}},
               {"spec",
                {{"chainType", str_at(spec, "chainType")},
                 {"routingSpec",
                  {{"namespace", str_at(spec, "namespace")},
                   {"networkChain", chain},
                   {"left", ends["left"]},
                   {"right", ends["right"]}}}}}};
    auto content = ctx.intern(controllers::object_yaml(cr));

    // Links first: adding the chain app may move the apps.
    for (const auto& c : clusters)
      for (const auto& l : links) {
        auto eq = l.label.find('=');
        if (eq == std::string::npos || l.label.find('=', eq + 1) != std::string::npos)
          fail(ErrorKind::invalid, l.where + ": linkLabel '" + l.label + "' is not of the form key=value",
               "e.g. linkLabel: app=slb");
        labeller.label(*ctx.find_app(l.app)->find_cluster(c), l.key, {{l.label.substr(0, eq), l.label.substr(eq + 1)}},
                       l.where, l.app);
      }
    appcontext::App* chain_app = ctx.find_app(k_chain_app);
    if (!chain_app) {
      ctx.apps.push_back(appcontext::App{.name = k_chain_app});
      chain_app = &ctx.apps.back();
    }
    for (const auto& c : clusters) {
      appcontext::Cluster* cl = chain_app->find_cluster(c);
      if (!cl) {
        chain_app->clusters.push_back(appcontext::Cluster{.name = c});
        cl = &chain_app->clusters.back();
      }
      cl->put({name + "+NetworkChaining", content});
    }
    std::sort(chain_app->clusters.begin(), chain_app->clusters.end(),
              [](const appcontext::Cluster& a, const appcontext::Cluster& b) { return a.name < b.name; });
    // Every cluster is a placement group of its own, as allOf clusters are.
    for (size_t i = 0; i < chain_app->clusters.size(); ++i) chain_app->clusters[i].group = static_cast<int>(i + 1);
  }
}

void SfcClient::update(const controllers::Call& call, appcontext::AppContext& ctx) const {
  const store::Store& st = call.store;
  auto clients = st.list(resource::kind("sfcClientIntent"), call.dig);
  std::string dig_where = resource::resource_anchor(resource::kind("deploymentIntentGroup"), call.dig);
  if (clients.empty())
    fail(ErrorKind::invalid, "the group intent names sfcclient, but deployment intent group '" + dig_where +
                                 "' has no sfc client intent",
         "add one under .../sfc-clients or remove sfcclient from the group intent");
  // The labels of the DIG's logical cloud.
  auto dig = st.get(call.dig);
  std::string project = *call.dig.get("project");
  std::string lc_name = str_at(spec_of(*dig), "logicalCloud");
  resource::Key lc_key{{{"project", project}, {"logicalCloud", lc_name}}};
  std::map<std::string, std::string> lc_labels;
  if (auto lc = st.get(lc_key)) {
    json labels = spec_of(*lc).value("labels", json::object());
    for (auto it = labels.begin(); it != labels.end(); ++it)
      if (it->is_string()) lc_labels[it.key()] = it->get<std::string>();
  }
  Labeller labeller(ctx);
  for (const auto& client : clients) {
    std::string where = anchor_of(client);
    json spec = spec_of(client);
    resource::Key chain_key{{{"project", project},
                             {"compositeApp", str_at(spec, "compositeApp")},
                             {"compositeAppVersion", str_at(spec, "compositeAppVersion")},
                             {"deploymentIntentGroup", str_at(spec, "deploymentIntentGroup")},
                             {"sfcIntent", str_at(spec, "sfcIntent")}}};
    std::string chain_where = resource::resource_anchor(resource::kind("sfcIntent"), chain_key);
    if (!st.get(chain_key))
      fail(ErrorKind::invalid, where + ": network chain '" + chain_where + "' does not exist",
           "fix compositeApp, compositeAppVersion, deploymentIntentGroup or sfcIntent");
    std::string end = str_at(spec, "chainEnd");
    bool any = false;
    std::map<std::string, std::string> labels;
    for (const auto& r : st.list(resource::kind("sfcClientSelector"), chain_key)) {
      json s = spec_of(r);
      if (str_at(s, "chainEnd") != end) continue;
      any = true;
      auto ns = match_labels(s, "namespaceSelector");
      bool matches = !ns.empty() && std::all_of(ns.begin(), ns.end(), [&](const auto& kv) {
        auto it = lc_labels.find(kv.first);
        return it != lc_labels.end() && it->second == kv.second;
      });
      if (!matches) continue;
      labels = match_labels(s, "podSelector");
      break;
    }
    if (!any)
      fail(ErrorKind::invalid, where + ": network chain '" + chain_where + "' has no client selector for chain end '" + end + "'",
           "add one under " + chain_where + "/client-selectors");
    if (labels.empty()) {
      std::vector<std::string> have;
      for (const auto& [k, v] : lc_labels) have.push_back(k + "=" + v);
      fail(ErrorKind::invalid,
           where + ": no client selector of chain end '" + end + "' of '" + chain_where +
               "' matches the labels of logical cloud '" + lc_name + "' (" + (have.empty() ? "none" : join(have, ",")) +
               ") with a pod selector",
           "a selector's namespaceSelector.matchLabels must all be labels of the logical cloud (spec.labels)");
    }
    std::string app_name = str_at(spec, "app");
    appcontext::App* app = ctx.find_app(app_name);
    if (!app)
      fail(ErrorKind::invalid, where + ": app '" + app_name + "' is not part of the composite app",
           "name an app of the composite app");
    std::string key = str_at(spec, "workloadResource") + "+" + str_at(spec, "resourceType");
    for (auto& c : app->clusters) labeller.label(c, key, labels, where, app_name);
  }
}

}  // namespace emco::plugins::sfc
