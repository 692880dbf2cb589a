#include "plugins/ncm/ncm.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <optional>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/plan/object.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::plugins::ncm {

using nlohmann::json;

namespace {

std::string anchor_of(const store::Resource& r) { return resource::resource_anchor(*r.kind, r.key); }
json spec_of(const store::Resource& r) { return json::parse(r.data).value("spec", json::object()); }
std::string name_of(const store::Resource& r) { return r.key.parts.back().second; }

std::string str_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// An IPv4 address as Go's net.ParseIP(...).To4() accepts it (dotted quad; IPv4-mapped IPv6 too).
std::optional<uint32_t> ipv4(const std::string& s) {
  in_addr a4{};
  if (inet_pton(AF_INET, s.c_str(), &a4) == 1) return ntohl(a4.s_addr);
  unsigned char a6[16];
  if (inet_pton(AF_INET6, s.c_str(), a6) != 1) return std::nullopt;
  static const std::array<unsigned char, 12> mapped = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (!std::equal(mapped.begin(), mapped.end(), a6)) return std::nullopt;
  return (uint32_t(a6[12]) << 24) | (uint32_t(a6[13]) << 16) | (uint32_t(a6[14]) << 8) | a6[15];
}

struct Cidr {
  uint32_t first = 0, last = 0;
};

// An IPv4 CIDR as upstream's validation.IsIpv4Cidr accepts it (net.ParseCIDR, an IPv4 address).
std::optional<Cidr> ipv4_cidr(const std::string& s) {
  auto slash = s.find('/');
  if (slash == std::string::npos) return std::nullopt;
  auto ip = ipv4(s.substr(0, slash));
  std::string bits = s.substr(slash + 1);
  if (!ip || bits.empty() || bits.size() > 2 || !std::all_of(bits.begin(), bits.end(), ::isdigit)) return std::nullopt;
  int n = std::stoi(bits);
  if (n > 32 || (bits.size() > 1 && bits[0] == '0')) return std::nullopt;
  uint32_t mask = n == 0 ? 0 : ~uint32_t(0) << (32 - n);
  return Cidr{*ip & mask, (*ip & mask) | ~mask};
}

std::string cidr_text(const Cidr& c) {
  auto dotted = [](uint32_t v) {
    return std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 255) + "." + std::to_string((v >> 8) & 255) +
           "." + std::to_string(v & 255);
  };
  return dotted(c.first) + "-" + dotted(c.last);
}

[[noreturn]] void bad(const std::string& where, const std::string& field, const std::string& message,
                      const std::string& hint = {}) {
  fail(ErrorKind::invalid, where + ": " + field + ": " + message, hint);
}

// Kubernetes' IsDNS1123Label / IsDNS1123Subdomain / IsValidLabelValue.
bool dns1123_label(const std::string& s) {
  static const std::regex re("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  return s.size() <= 63 && std::regex_match(s, re);
}
bool dns1123_subdomain(const std::string& s) {
  static const std::regex re("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  return s.size() <= 253 && std::regex_match(s, re);
}
bool label_value(const std::string& s) {
  static const std::regex re("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?");
  return s.size() <= 63 && std::regex_match(s, re);
}

// Upstream's validation.IsValidLabel: "[prefix/]name=value" or a bare value.
bool valid_label(const std::string& label) {
  auto eq = label.find('=');
  std::string value = eq == std::string::npos ? label : label.substr(eq + 1);
  if (eq != std::string::npos) {
    std::string pn = label.substr(0, eq), prefix, name = pn;
    if (auto slash = pn.find('/'); slash != std::string::npos) {
      prefix = pn.substr(0, slash);
      name = pn.substr(slash + 1);
      if (prefix.empty() || !dns1123_subdomain(prefix)) return false;
    }
    if (!dns1123_label(name)) return false;
  }
  return !value.empty() && label_value(value);
}

// The IPv4 subnets of one network document, checked as upstream's ValidateSubnet.
std::vector<std::pair<std::string, Cidr>> check_subnets(const json& spec, const std::string& where) {
  std::vector<std::pair<std::string, Cidr>> out;
  const json subnets = spec.value("ipv4Subnets", json::array());
  for (size_t i = 0; i < subnets.size(); ++i) {
    const json& sn = subnets[i];
    std::string field = "ipv4Subnets[" + std::to_string(i) + "]";
    std::string subnet = str_at(sn, "subnet");
    auto cidr = ipv4_cidr(subnet);
    if (!cidr) bad(where, field + ".subnet", "'" + subnet + "' is not an IPv4 CIDR", "e.g. subnet: 172.16.30.0/24");
    if (!resource::is_valid_name(str_at(sn, "name")))
      bad(where, field + ".name", "'" + str_at(sn, "name") + "' is not a valid name", resource::name_rule_text());
    std::string gw = str_at(sn, "gateway");
    if (!gw.empty() && !ipv4_cidr(gw))
      bad(where, field + ".gateway", "'" + gw + "' is not an IPv4 CIDR", "e.g. gateway: 172.16.30.1/24");
    std::string exclude = str_at(sn, "excludeIps");
    std::istringstream words(exclude);
    for (std::string w; words >> w;) {
      auto dots = w.find("..");
      std::vector<std::string> ips = {w.substr(0, dots)};
      if (dots != std::string::npos) ips.push_back(w.substr(dots + 2));
      for (const auto& ip : ips)
        if (!ipv4(ip))
          bad(where, field + ".excludeIps", "'" + exclude + "' is not a list of IPv4 addresses and a..b ranges",
              "e.g. excludeIps: 172.16.30.2 172.16.30.5..172.16.30.10");
    }
    out.emplace_back(subnet, *cidr);
  }
  return out;
}

resource::Key cluster_of(const resource::Key& k) {
  resource::Key c;
  c.parts.assign(k.parts.begin(), k.parts.begin() + 2);
  return c;
}

// No IPv4 subnet of `r` overlaps another of `r` or one of the cluster's other networks.
void check_overlaps(const store::Store& st, const store::Resource& r,
                    const std::vector<std::pair<std::string, Cidr>>& mine) {
  std::string where = anchor_of(r);
  for (size_t i = 0; i < mine.size(); ++i)
    for (size_t j = i + 1; j < mine.size(); ++j)
      if (mine[i].second.first <= mine[j].second.last && mine[j].second.first <= mine[i].second.last)
        bad(where, "ipv4Subnets", "subnets " + mine[i].first + " and " + mine[j].first + " overlap");
  for (const char* kind : {"network", "providerNetwork"})
    for (const auto& other : st.list(resource::kind(kind), cluster_of(r.key))) {
      if (other.kind == r.kind && other.key.str() == r.key.str()) continue;
      for (const auto& sn : spec_of(other).value("ipv4Subnets", json::array())) {
        auto theirs = ipv4_cidr(str_at(sn, "subnet"));
        if (!theirs) continue;
        for (const auto& [text, c] : mine)
          if (c.first <= theirs->last && theirs->first <= c.last)
            fail(ErrorKind::invalid,
                 where + ": ipv4Subnets: subnet " + text + " overlaps subnet " + str_at(sn, "subnet") + " of " +
                     anchor_of(other) + " (" + cidr_text(*theirs) + ")",
                 "the networks of one cluster need disjoint subnets");
      }
    }
}

void check_cni(const json& spec, const std::string& where) {
  if (str_at(spec, "cniType") != "ovn4nfv")
    bad(where, "cniType", "'" + str_at(spec, "cniType") + "' is not a supported CNI type", "cniType: ovn4nfv");
}

json subnets_of(const json& spec, const char* field) {
  json out = json::array();
  for (const auto& sn : spec.value(field, json::array())) {
    json e = {{"subnet", str_at(sn, "subnet")}, {"name", str_at(sn, "name")}};
    if (!str_at(sn, "gateway").empty()) e["gateway"] = str_at(sn, "gateway");
    if (!str_at(sn, "excludeIps").empty()) e["excludeIps"] = str_at(sn, "excludeIps");
    out.push_back(std::move(e));
  }
  return out;
}

json nad(const std::string& name) {
  return {{"apiVersion", "k8s.cni.cncf.io/v1"},
          {"kind", "NetworkAttachmentDefinition"},
          {"metadata", {{"name", name}}},
          {"spec", {{"config", "{\"cniVersion\":\"0.3.1\",\"type\":\"ovn4nfvk8s-cni\",\"nfn-network\":\"" + name + "\"}"}}}};
}

}  // namespace

void check_network(const store::Store& st, const store::Resource& r) {
  json spec = spec_of(r);
  std::string where = anchor_of(r);
  check_cni(spec, where);
  check_overlaps(st, r, check_subnets(spec, where));
}

void check_provider_network(const store::Store& st, const store::Resource& r) {
  json spec = spec_of(r);
  std::string where = anchor_of(r);
  check_cni(spec, where);
  std::string type = upper(str_at(spec, "providerNetType"));
  if (type != "VLAN" && type != "DIRECT")
    bad(where, "providerNetType", "'" + str_at(spec, "providerNetType") + "' is not VLAN or DIRECT");
  auto subnets = check_subnets(spec, where);
  json vlan = spec.value("vlan", json::object());
  std::string id = str_at(vlan, "vlanID");
  // Go's strconv.Atoi: an optional sign and decimal digits.
  static const std::regex number("[+-]?[0-9]+");
  if (!std::regex_match(id, number) || id.size() > 6 || std::stol(id) < 0 || std::stol(id) > 4095)
    bad(where, "vlan.vlanID", "'" + id + "' is not a VLAN id (a number from 0 to 4095)",
        "upstream requires it for DIRECT provider networks too");
  std::string selector = lower(str_at(vlan, "vlanNodeSelector"));
  if (selector != "any" && selector != "specific")
    bad(where, "vlan.vlanNodeSelector", "'" + str_at(vlan, "vlanNodeSelector") + "' is not any or specific");
  size_t labels = 0;
  for (const auto& l : vlan.value("nodeLabelList", json::array())) {
    std::string label = l.is_string() ? l.get<std::string>() : l.dump();
    if (!valid_label(label))
      bad(where, "vlan.nodeLabelList", "'" + label + "' is not a Kubernetes label", "e.g. kubernetes.io/hostname=node1");
    ++labels;
  }
  if (selector == "specific" && labels == 0)
    bad(where, "vlan.nodeLabelList", "vlanNodeSelector specific needs at least one node label");
  check_overlaps(st, r, subnets);
}

appcontext::AppContext NetworkPlanner::plan(const store::Store& st, const resource::Key& key) const {
  appcontext::AppContext ctx;
  std::string cluster = *key.get("clusterProvider") + "+" + *key.get("cluster");
  ctx.meta = {{"Namespace", "default"}};
  bool multus = false;
  for (const auto& kv : st.list(resource::kind("clusterKv"), key)) {
    for (const auto& entry : spec_of(kv).value("kv", json::array())) {
      auto it = entry.find("CNI-Networking-Multi-VM-CNI-Wrapper");
      if (it != entry.end() && it->is_string()) {
        multus = lower(it->get<std::string>()) == "multus";
        break;
      }
    }
  }
  appcontext::Cluster cl{.name = cluster, .group = 1};
  auto put = [&](const std::string& name, const json& object) {
    cl.put({name + "+" + object["kind"].get<std::string>(), ctx.intern(controllers::object_yaml(object))});
  };
  for (const auto& r : st.list(resource::kind("network"), key)) {
    json spec = spec_of(r);
    // Checked when stored; checked again here, as the cluster's other networks may have changed since.
    check_network(st, r);
    std::string name = name_of(r);
    json s = {{"cniType", str_at(spec, "cniType")}};
    if (json v4 = subnets_of(spec, "ipv4Subnets"); !v4.empty()) s["ipv4Subnets"] = v4;
    if (json v6 = subnets_of(spec, "ipv6Subnets"); !v6.empty()) s["ipv6Subnets"] = v6;
    put(name, {{"apiVersion", "k8s.plugin.opnfv.org/v1alpha1"},
               {"kind", "Network"},
               {"metadata", {{"name", name}, {"labels", {{"net", name}}}}},
               {"spec", s}});
    if (multus) put(name, nad(name));
  }
  for (const auto& r : st.list(resource::kind("providerNetwork"), key)) {
    json spec = spec_of(r);
    check_provider_network(st, r);
    std::string name = name_of(r);
    json vlan = spec.value("vlan", json::object());
    json s = {{"cniType", str_at(spec, "cniType")},
              {"providerNetType", str_at(spec, "providerNetType")},
              {"vlan",
               {{"vlanId", str_at(vlan, "vlanID")},
                {"providerInterfaceName", str_at(vlan, "providerInterfaceName")},
                {"logicalInterfaceName", str_at(vlan, "logicalInterfaceName")},
                {"vlanNodeSelector", str_at(vlan, "vlanNodeSelector")},
                {"nodeLabelList", vlan.value("nodeLabelList", json::array())}}}};
    if (json v4 = subnets_of(spec, "ipv4Subnets"); !v4.empty()) s["ipv4Subnets"] = v4;
    if (json v6 = subnets_of(spec, "ipv6Subnets"); !v6.empty()) s["ipv6Subnets"] = v6;
    put(name, {{"apiVersion", "k8s.plugin.opnfv.org/v1alpha1"},
               {"kind", "ProviderNetwork"},
               {"metadata", {{"name", name}}},
               {"spec", s}});
    if (multus) put(name, nad(name));
  }
  appcontext::App app{.name = "network-intents"};
  app.clusters.push_back(std::move(cl));
  ctx.apps.push_back(std::move(app));
  return ctx;
}

}  // namespace emco::plugins::ncm
