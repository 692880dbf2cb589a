// What a cloud gives Services: a cluster IP from the service CIDR
// (10.96.0.0/16 here), node ports from 30000-32767 for NodePort and
// LoadBalancer Services, and for LoadBalancer an ingress IP from the
// simulator's range after the load-balancer delay. Requested addresses and
// ports are honoured when free and refused (422, worded as the API words
// it) when another Service holds them. Allocations are read from the stored
// Services, so they survive restarts and free themselves on delete.

#include <arpa/inet.h>

#include <set>

#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "sim/cluster.hpp"

namespace emco::sim::detail {

using nlohmann::json;

namespace {

constexpr uint32_t k_service_low = (10u << 24) | (96u << 16) | 1;     // 10.96.0.1
constexpr uint32_t k_service_first = (10u << 24) | (96u << 16) | 10;  // allocated from 10.96.0.10 (below: the system's)
constexpr uint32_t k_service_last = (10u << 24) | (96u << 16) | 0xfffe;
constexpr int k_node_port_first = 30000;
constexpr int k_node_port_last = 32767;

bool parse_ipv4(const std::string& s, uint32_t& out) {
  in_addr a{};
  if (inet_pton(AF_INET, trim(s).c_str(), &a) != 1) return false;
  out = ntohl(a.s_addr);
  return true;
}

std::string ipv4(uint32_t v) {
  return std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 255) + "." + std::to_string((v >> 8) & 255) +
         "." + std::to_string(v & 255);
}

Response invalid_service(const std::string& name, const std::string& field, const std::string& what) {
  json d = {{"name", name}, {"kind", "Service"},
            {"causes", {{{"reason", "FieldValueInvalid"}, {"message", "Invalid value: " + what}, {"field", field}}}}};
  return status_error(422, "Invalid", "Service \"" + name + "\" is invalid: " + field + ": Invalid value: " + what, d);
}

bool node_ports(const std::string& type) { return type == "NodePort" || type == "LoadBalancer"; }

}  // namespace

IpRange parse_ip_range(const std::string& text) {
  IpRange r;
  auto slash = text.find('/');
  auto dash = text.find('-');
  bool ok = false;
  if (slash != std::string::npos) {
    std::string bits = text.substr(slash + 1);
    int n = bits.empty() || bits.find_first_not_of("0123456789") != std::string::npos ? -1 : std::stoi(bits);
    uint32_t base = 0;
    if (n >= 8 && n <= 30 && parse_ipv4(text.substr(0, slash), base)) {
      uint32_t mask = ~uint32_t{0} << (32 - n);
      r.first = (base & mask) + 1;  // neither the network nor the broadcast address
      r.last = (base | ~mask) - 1;
      ok = true;
    }
  } else if (dash != std::string::npos) {
    ok = parse_ipv4(text.substr(0, dash), r.first) && parse_ipv4(text.substr(dash + 1), r.last) && r.first <= r.last;
  }
  if (!ok)
    fail(ErrorKind::invalid, "invalid load-balancer IP range '" + text + "'",
         "give a CIDR (198.51.100.0/24, prefix 8 to 30) or FIRST-LAST (198.51.100.10-198.51.100.20)");
  return r;
}

Response Cluster::allocate_service(const json* old, json& obj) {
  const TypeInfo* services = find_kind("", "v1", "Service");
  std::string name = obj["metadata"].value("name", "");
  std::string ns = obj["metadata"].value("namespace", "");
  std::string self = ns + "/" + name;
  auto& spec = obj["spec"];
  if (!spec.is_object()) spec = json::object();
  if (!spec.contains("type")) spec["type"] = "ClusterIP";
  std::string type = spec["type"];

  // What the other Services hold.
  std::set<uint32_t> ips, ingress;
  std::set<int> ports;
  if (auto sit = m_objects.find(services->store_key()); sit != m_objects.end())
    for (const auto& [k, s] : sit->second) {
      if (k == self) continue;
      uint32_t ip;
      if (parse_ipv4(s.value("/spec/clusterIP"_json_pointer, std::string()), ip)) ips.insert(ip);
      for (const auto& p : s.value("/spec/ports"_json_pointer, json::array()))
        if (p.contains("nodePort")) ports.insert(p.value("nodePort", 0));
      for (const auto& i : s.value("/status/loadBalancer/ingress"_json_pointer, json::array()))
        if (parse_ipv4(i.value("ip", ""), ip)) ingress.insert(ip);
    }

  std::string requested = spec.value("clusterIP", "");
  if (type != "ExternalName" && requested != "None") {
    if (requested.empty() && old) requested = old->value("/spec/clusterIP"_json_pointer, std::string());
    uint32_t ip = 0;
    if (!requested.empty()) {
      if (!parse_ipv4(requested, ip) || ip < k_service_low || ip > k_service_last)
        return invalid_service(name, "spec.clusterIPs",
                               "[\"" + requested + "\"]: failed to allocate IP " + requested +
                                   ": the provided IP (" + requested + ") is not in the valid range. The range of "
                                   "valid IPs is 10.96.0.0/16");
      if (ips.count(ip))
        return invalid_service(name, "spec.clusterIPs",
                               "[\"" + requested + "\"]: failed to allocate IP " + requested +
                                   ": provided IP is already allocated");
    } else {
      for (ip = k_service_first; ip <= k_service_last && ips.count(ip); ++ip) {
      }
      if (ip > k_service_last) return status_error(500, "InternalError", "the service CIDR 10.96.0.0/16 is full");
    }
    spec["clusterIP"] = ipv4(ip);
    spec["clusterIPs"] = {ipv4(ip)};
  }

  if (spec.contains("ports") && spec["ports"].is_array()) {
    json old_ports = old ? old->value("/spec/ports"_json_pointer, json::array()) : json::array();
    int next = k_node_port_first;
    for (size_t i = 0; i < spec["ports"].size(); ++i) {
      auto& p = spec["ports"][i];
      if (!p.is_object()) continue;
      if (!p.contains("protocol")) p["protocol"] = "TCP";
      if (!p.contains("targetPort")) p["targetPort"] = p.value("port", 0);
      if (!node_ports(type)) {
        p.erase("nodePort");
        continue;
      }
      int want = p.value("nodePort", 0);
      if (want == 0)  // keep the port an earlier version of this Service had
        for (const auto& o : old_ports)
          if (o.value("port", -1) == p.value("port", -2) && o.value("protocol", "TCP") == p["protocol"])
            want = o.value("nodePort", 0);
      std::string field = "spec.ports[" + std::to_string(i) + "].nodePort";
      if (want != 0) {
        if (want < k_node_port_first || want > k_node_port_last)
          return invalid_service(name, field,
                                 std::to_string(want) + ": provided port is not in the valid range. The range of "
                                                        "valid ports is 30000-32767");
        if (ports.count(want))
          return invalid_service(name, field, std::to_string(want) + ": provided port is already allocated");
      } else {
        while (next <= k_node_port_last && ports.count(next)) ++next;
        if (next > k_node_port_last)
          return status_error(500, "InternalError", "no node ports left in 30000-32767");
        want = next;
      }
      p["nodePort"] = want;
      ports.insert(want);
    }
  }
  if (!spec.contains("sessionAffinity")) spec["sessionAffinity"] = "None";
  if (type != "ExternalName") {
    if (!spec.contains("ipFamilies")) spec["ipFamilies"] = {"IPv4"};
    if (!spec.contains("ipFamilyPolicy")) spec["ipFamilyPolicy"] = "SingleStack";
    if (!spec.contains("internalTrafficPolicy")) spec["internalTrafficPolicy"] = "Cluster";
  }
  if (type == "LoadBalancer" && !spec.contains("externalTrafficPolicy")) spec["externalTrafficPolicy"] = "Cluster";

  // The load balancer: an ingress IP now (no delay) or from the timer.
  if (!obj.contains("status") || !obj["status"].is_object()) obj["status"] = {{"loadBalancer", json::object()}};
  bool has_ingress = !obj.value("/status/loadBalancer/ingress"_json_pointer, json::array()).empty();
  if (type != "LoadBalancer") {
    obj["status"]["loadBalancer"] = json::object();
  } else if (!has_ingress) {
    if (m_env.lb_delay_ms <= 0) {
      uint32_t ip = m_env.lb_first;
      while (ip <= m_env.lb_last && ingress.count(ip)) ++ip;
      if (ip <= m_env.lb_last) obj["status"]["loadBalancer"] = {{"ingress", {{{"ip", ipv4(ip)}, {"ipMode", "VIP"}}}}};
    } else if (!old || old->value("/spec/type"_json_pointer, std::string()) != "LoadBalancer") {
      schedule({unix_ms() + m_env.lb_delay_ms, Pending::load_balancer, services->store_key(), self,
                obj["metadata"].value("uid", "")});
    }
  }
  return {};
}

void Cluster::assign_load_balancer(const TypeInfo& info, const std::string& key) {
  json* svc = find(info, key);
  if (!svc || svc->value("/spec/type"_json_pointer, std::string()) != "LoadBalancer") return;
  if (!svc->value("/status/loadBalancer/ingress"_json_pointer, json::array()).empty()) return;
  std::set<uint32_t> taken;
  for (const auto& [k, s] : m_objects[info.store_key()])
    for (const auto& i : s.value("/status/loadBalancer/ingress"_json_pointer, json::array())) {
      uint32_t ip;
      if (parse_ipv4(i.value("ip", ""), ip)) taken.insert(ip);
    }
  uint32_t ip = m_env.lb_first;
  while (ip <= m_env.lb_last && taken.count(ip)) ++ip;
  if (ip > m_env.lb_last) return;  // the range is used up: pending, as a cloud out of addresses leaves it
  json updated = *svc;
  updated["status"]["loadBalancer"] = {{"ingress", {{{"ip", ipv4(ip)}, {"ipMode", "VIP"}}}}};
  controller_write(info, key, updated, k8s::Scope::status);
}

}  // namespace emco::sim::detail
