// hpa placement: which clusters' Nodes can hold each app's consumers
// (plugins/hpa/hpa.hpp states the rules and the refresh rule of the Nodes).

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "plugins/hpa/hpa.hpp"

namespace emco::controllers {

using nlohmann::json;
using namespace emco::plugins::hpa;

namespace {

struct Node {
  std::string name;
  std::map<std::string, std::string> labels;
  std::map<std::string, long long> free;  // allocatable, thousandths of the unit
};

// The Nodes of a cluster, or why they cannot be read.
struct ClusterNodes {
  std::vector<Node> nodes;
  std::string error;
};

ClusterNodes read_nodes(const Call& call, const std::string& cluster) {
  ClusterNodes out;
  try {
    if (!call.live) fail(ErrorKind::unsupported, "this plan reads no cluster");
    json list = json::parse(call.live(cluster, "")->list("v1", "Node", ""));
    for (const auto& n : list) {
      Node node;
      node.name = n.value("/metadata/name"_json_pointer, std::string());
      const json labels = n.value("/metadata/labels"_json_pointer, json::object());
      const json allocatable = n.value("/status/allocatable"_json_pointer, json::object());
      for (const auto& [k, v] : labels.items())
        if (v.is_string()) node.labels[k] = v.get<std::string>();
      for (const auto& [k, v] : allocatable.items())
        node.free[k] = milli_of(v.is_string() ? v.get<std::string>() : v.dump(),
                                "node '" + node.name + "' allocatable " + k);
      out.nodes.push_back(std::move(node));
    }
    std::sort(out.nodes.begin(), out.nodes.end(), [](const Node& a, const Node& b) { return a.name < b.name; });
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

// An amount in the intent's unit for messages: cores, MB, or the resource's own.
std::string amount(long long milli, const std::string& resource) {
  long double v = static_cast<long double>(milli) / 1000.0L;
  if (resource == "memory") v /= 1e6L;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3Lf", v);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s + (resource == "memory" ? " MB" : resource == "cpu" ? " cores" : "");
}

std::string label_text(const Requirement& r) { return r.key + (r.value.empty() ? "" : "=" + r.value); }

// Why `nodes` cannot hold the consumers of `intents`, "" when they can.
// Replicas take their requests from the fitting node with the least room
// left (ties by name), so later replicas and consumers see what is left.
std::string shortfall(std::vector<Node> nodes, const std::vector<const Intent*>& intents) {
  for (const Intent* in : intents)
    for (const Consumer& c : in->consumers) {
      const std::string who = "consumer '" + in->name + "/" + c.name + "'";
      std::set<std::string> qualified;
      for (const auto& n : nodes) qualified.insert(n.name);
      for (const Requirement& r : c.requirements) {
        if (r.allocatable) continue;
        std::set<std::string> keep;
        for (const auto& n : nodes) {
          auto it = n.labels.find(r.key);
          if (qualified.count(n.name) && it != n.labels.end() && it->second == r.value) keep.insert(n.name);
        }
        if (keep.empty())
          return who + " requirement '" + r.name + "': no node" +
                 (qualified.size() == nodes.size() ? "" : " left by its other requirements") + " has label " + label_text(r);
        qualified = std::move(keep);
      }
      const long long replicas = std::max(1LL, c.replicas);
      for (long long replica = 1; replica <= replicas; ++replica)
        for (const Requirement& r : c.requirements) {
          if (!r.allocatable) continue;
          const long long need = need_milli(r);
          Node* best = nullptr;
          long long most = 0;
          for (auto& n : nodes) {
            if (!qualified.count(n.name)) continue;
            long long have = n.free.count(r.resource) ? n.free.at(r.resource) : 0;
            most = std::max(most, have);
            if (have >= need && (!best || have < best->free[r.resource])) best = &n;
          }
          if (!best)
            return who + " requirement '" + r.name + "': " + r.resource + " " + amount(need, r.resource) +
                   (replicas > 1 ? " for replica " + std::to_string(replica) + " of " + std::to_string(replicas) : "") +
                   ", the most free on a node is " + amount(most, r.resource) + " (short " +
                   amount(need - most, r.resource) + ")";
          // Later requirements of this replica stay on nodes that fit this one.
          std::set<std::string> fits;
          for (const auto& n : nodes)
            if (qualified.count(n.name) && n.free.count(r.resource) && n.free.at(r.resource) >= need) fits.insert(n.name);
          qualified = std::move(fits);
          best->free[r.resource] -= need;
        }
    }
  return "";
}

}  // namespace

void HpaPlacement::filter(const Call& call, appcontext::AppContext& ctx) const {
  const std::vector<Intent> intents = load(call.store, call.dig);
  std::map<std::string, ClusterNodes> read;  // once per cluster in this plan
  for (auto& app : ctx.apps) {
    std::vector<const Intent*> mine;
    for (const auto& in : intents)
      if (in.app == app.name) mine.push_back(&in);
    if (mine.empty() || app.clusters.empty()) continue;
    std::vector<appcontext::Cluster> kept;
    std::vector<std::pair<std::string, std::string>> failed;  // cluster, why
    for (auto& c : app.clusters) {
      auto it = read.find(c.name);
      if (it == read.end()) it = read.emplace(c.name, read_nodes(call, c.name)).first;
      std::string why = !it->second.error.empty() ? "its Nodes cannot be read: " + it->second.error
                        : it->second.nodes.empty() ? "it has no Nodes"
                                                   : shortfall(it->second.nodes, mine);
      if (why.empty()) {
        kept.push_back(std::move(c));
      } else {
        failed.emplace_back(c.name, why);
        if (call.removed) call.removed(app.name, c.name, why);
      }
    }
    if (kept.empty() && !call.explain_only) {
      std::vector<std::string> where, whys;
      for (const Intent* in : mine) where.push_back(in->where);
      for (const auto& [cluster, why] : failed) whys.push_back(cluster + ": " + why);
      fail(ErrorKind::invalid,
           join(where, ", ") + ": no cluster of app '" + app.name + "' has the nodes it asks for (" + join(whys, "; ") + ")",
           "'emco dig explain' shows each cluster's shortfall; add or resize nodes, or ask for less");
    }
    app.clusters = std::move(kept);
  }
}

}  // namespace emco::controllers
