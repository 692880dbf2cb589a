#include "plugins/ovnaction/ovnaction.hpp"

#include <arpa/inet.h>

#include <map>
#include <optional>
#include <regex>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/plan/object.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::plugins::ovnaction {

using nlohmann::json;

namespace {

const char* const k_networks_key = "k8s.v1.cni.cncf.io/networks";
const char* const k_nfn_key = "k8s.plugin.opnfv.org/nfn-network";
const char* const k_all_interfaces = "CNI-Networking-Nodus-CNI-For-all-interfaces";
const char* const k_wrapper = "CNI-Networking-Multi-CNI-Wrapper";

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

// Go's encoding/json output: compact, with <, > and & escaped (they only occur inside strings).
std::string go_json(const json& v) {
  std::string in = v.dump(), out;
  out.reserve(in.size());
  for (char c : in) {
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else out += c;
  }
  return out;
}

resource::Key cluster_key(const std::string& cluster) {
  auto plus = cluster.find('+');
  return resource::Key{{{"clusterProvider", cluster.substr(0, plus)}, {"cluster", cluster.substr(plus + 1)}}};
}

struct Interface {
  std::string interface, name, default_gateway, ip, mac;
};

// One interface as Go writes upstream's WorkloadIfIntentSpec: declaration order, ip and mac omitempty.
std::string interface_text(const Interface& i) {
  std::string s = "{\"interface\":" + go_json(i.interface) + ",\"name\":" + go_json(i.name) +
                  ",\"defaultGateway\":" + go_json(i.default_gateway);
  if (!i.ip.empty()) s += ",\"ipAddress\":" + go_json(i.ip);
  if (!i.mac.empty()) s += ",\"macAddress\":" + go_json(i.mac);
  return s + "}";
}

// A field of a JSON object matched as Go's json.Unmarshal does: exact name first, then case-insensitively.
const json* go_field(const json& obj, const std::string& name) {
  if (auto it = obj.find(name); it != obj.end()) return &*it;
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (lower(it.key()) == lower(name)) return &*it;
  return nullptr;
}

std::string go_string_field(const json& obj, const std::string& name, const std::string& what) {
  const json* v = go_field(obj, name);
  if (!v || v->is_null()) return {};
  if (!v->is_string()) fail(ErrorKind::invalid, what + ": field '" + name + "' is not a string");
  return v->get<std::string>();
}

// The nfn-network annotation merged with `add` (upstream's newNfnIfs).
std::string merged_nfn(const std::string* existing, const std::vector<Interface>& add, const std::string& what) {
  std::vector<Interface> list;
  if (existing && !existing->empty()) {
    json j;
    try {
      j = json::parse(*existing);
    } catch (const json::exception&) {
      fail(ErrorKind::invalid, what + ": annotation " + k_nfn_key + " is not JSON: '" + *existing + "'",
           "fix or remove the annotation in the chart");
    }
    if (!j.is_object()) fail(ErrorKind::invalid, what + ": annotation " + k_nfn_key + " is not a JSON object");
    if (const json* ifs = go_field(j, "interface"); ifs && !ifs->is_null()) {
      if (!ifs->is_array()) fail(ErrorKind::invalid, what + ": annotation " + k_nfn_key + ": interface is not a list");
      for (const auto& e : *ifs) {
        if (!e.is_object())
          fail(ErrorKind::invalid, what + ": annotation " + k_nfn_key + ": an interface is not an object");
        std::string w = what + ": annotation " + k_nfn_key;
        list.push_back({go_string_field(e, "interface", w), go_string_field(e, "name", w),
                        go_string_field(e, "defaultGateway", w), go_string_field(e, "ipAddress", w),
                        go_string_field(e, "macAddress", w)});
      }
    }
  }
  auto same = [](const Interface& x, const Interface& y) { return x.name == y.name && x.interface == y.interface; };
  // Upstream's newNfnIfs: each existing interface takes the values of the first new one that matches it,
  // then the new ones matching no existing interface are appended.
  std::vector<Interface> merged = list;
  for (auto& e : merged)
    for (const auto& n : add)
      if (same(e, n)) {
        e.default_gateway = n.default_gateway;
        e.ip = n.ip;
        e.mac = n.mac;
        break;
      }
  for (const auto& n : add) {
    bool found = false;
    for (const auto& e : list) found = found || same(e, n);
    if (!found) merged.push_back(n);
  }
  std::string s = "{\"type\":\"ovn4nfv\",\"interface\":[";
  for (size_t i = 0; i < merged.size(); ++i) s += (i ? "," : "") + interface_text(merged[i]);
  return s + "]}";
}

bool dns1123_label(const std::string& s) {
  static const std::regex re("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  return std::regex_match(s, re);
}

// The keys of NetworkSelectionElement (network-attachment-definition-client v1.2.0) in declaration order.
const std::vector<std::string>& selection_fields() {
  static const std::vector<std::string> f = {"name",          "namespace",        "ips",
                                             "mac",           "infiniband-guid",  "interface",
                                             "interfaceRequest", "portMappings", "bandwidth",
                                             "cni-args",      "default-route"};
  return f;
}

// One network selection element as Go writes it: declared fields in order, empty ones omitted (name always).
std::string selection_text(const json& e) {
  std::string s = "{\"name\":" + go_json(e.value("name", json(""))) ;
  for (size_t i = 1; i < selection_fields().size(); ++i) {
    const auto& f = selection_fields()[i];
    auto it = e.find(f);
    if (it == e.end() || it->is_null()) continue;
    if ((it->is_string() || it->is_array()) && it->empty()) continue;
    s += ",\"" + f + "\":" + go_json(*it);
  }
  return s + "}";
}

// Multus' ParseNetworkAnnotation: a JSON list, or "ns/name@if" items separated by commas.
std::vector<json> parse_networks(const std::string& text, const std::string& default_namespace, const std::string& what) {
  std::vector<json> out;
  if (text.find_first_of("[{\"") != std::string::npos) {
    json j;
    try {
      j = json::parse(text);
    } catch (const json::exception&) {
      fail(ErrorKind::invalid, what + ": annotation " + k_networks_key + " is not valid JSON: '" + text + "'",
           "fix or remove the annotation in the chart");
    }
    if (!j.is_array()) fail(ErrorKind::invalid, what + ": annotation " + k_networks_key + " is not a JSON list");
    for (const auto& e : j) {
      if (!e.is_object())
        fail(ErrorKind::invalid, what + ": annotation " + k_networks_key + ": an element is not an object");
      json el = json::object();
      for (const auto& f : selection_fields())
        if (const json* v = go_field(e, f)) el[f] = *v;
      out.push_back(std::move(el));
    }
  } else {
    for (auto item : split(text, ',')) {
      item = std::string(trim(item));
      std::string ns, name = item, ifname;
      auto slash = split(item, '/');
      if (slash.size() == 2) {
        ns = std::string(trim(slash[0]));
        name = slash[1];
      } else if (slash.size() != 1) {
        fail(ErrorKind::invalid, what + ": annotation " + k_networks_key + ": invalid network object '" + item + "'");
      }
      auto at = split(name, '@');
      name = std::string(trim(at[0]));
      if (at.size() == 2) ifname = std::string(trim(at[1]));
      else if (at.size() != 1)
        fail(ErrorKind::invalid, what + ": annotation " + k_networks_key + ": invalid network object '" + item + "'");
      for (const auto* part : {&ns, &name, &ifname})
        if (!part->empty() && !dns1123_label(*part))
          fail(ErrorKind::invalid,
               what + ": annotation " + k_networks_key + ": '" + *part + "' is not a DNS-1123 label");
      json el = {{"name", name}};
      if (!ns.empty()) el["namespace"] = ns;
      if (!ifname.empty()) el["interface"] = ifname;
      out.push_back(std::move(el));
    }
  }
  for (auto& el : out)
    if (!el.contains("namespace") || el["namespace"].is_null() || el["namespace"] == "") {
      if (default_namespace.empty()) el.erase("namespace");
      else el["namespace"] = default_namespace;
    }
  return out;
}

std::string merged_networks(const std::string* existing, const std::string& default_namespace, const std::string& what) {
  std::vector<json> list;
  // Upstream treats an empty annotation as none.
  if (existing && !existing->empty()) list = parse_networks(*existing, default_namespace, what);
  bool found = false;
  for (const auto& e : list)
    if (e.value("name", json("")) == "ovn-networkobj") found = true;
  if (!found) list.push_back({{"name", "ovn-networkobj"}, {"namespace", "default"}});
  std::string s = "[";
  for (size_t i = 0; i < list.size(); ++i) s += (i ? "," : "") + selection_text(list[i]);
  return s + "]";
}

// The metadata object the annotations go into, and the namespace missing ones default to.
struct Target {
  json* metadata = nullptr;
  std::string default_namespace;
};

Target target_of(json& object, const std::string& what) {
  std::string kind = str_at(object, "kind");
  json* tmpl = controllers::pod_template(object);
  if (!tmpl)
    fail(ErrorKind::invalid, what + ": a '" + kind + "' has no pod template to attach networks to",
         "name a Pod, Deployment, DaemonSet, StatefulSet, ReplicaSet, Job, CronJob, ReplicationController or an "
         "object with spec.template");
  json& m = (*tmpl)["metadata"];
  if (m.is_null()) m = json::object();
  if (!m.is_object()) fail(ErrorKind::invalid, what + ": the pod template's metadata is not an object");
  // Upstream parses a Pod's and the supported kinds' pod templates with their own namespace, other objects with
  // the object's.
  static const std::set<std::string> typed = {"Pod",        "Deployment", "DaemonSet", "StatefulSet",
                                              "ReplicaSet", "Job",        "CronJob",   "ReplicationController"};
  if (typed.count(kind)) return {&m, str_at(m, "namespace")};
  const json& om = object.value("metadata", json::object());
  return {&m, om.is_object() ? str_at(om, "namespace") : ""};
}

// Whether ovnaction adds the Multus networks annotation on `cluster` (upstream's kv lookup, order included).
bool multus_on(const store::Store& st, const std::string& cluster) {
  std::string all = "false", wrapper = "multus";
  for (const auto& r : st.list(resource::kind("clusterKv"), cluster_key(cluster))) {
    for (const auto& entry : spec_of(r).value("kv", json::array())) {
      if (!entry.is_object()) continue;
      if (auto it = entry.find(k_all_interfaces); it != entry.end() && it->is_string()) {
        all = it->get<std::string>();
        break;
      }
      if (auto it = entry.find(k_wrapper); it != entry.end() && it->is_string()) {
        wrapper = it->get<std::string>();
        break;
      }
    }
  }
  // Go's strconv.ParseBool.
  static const std::set<std::string> truthy = {"1", "t", "T", "TRUE", "true", "True"};
  if (truthy.count(all)) return false;
  return lower(wrapper) == "multus";
}

bool valid_ip(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

bool valid_mac(const std::string& s) {
  // Go's net.ParseMAC: 6, 8 or 20 octets separated by ':' or '-', or dotted groups of four hex digits.
  static const std::regex colon("[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}|[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){7}|"
                                "[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){19}");
  static const std::regex dotted("[0-9A-Fa-f]{4}(\\.[0-9A-Fa-f]{4}){2}|[0-9A-Fa-f]{4}(\\.[0-9A-Fa-f]{4}){3}|"
                                 "[0-9A-Fa-f]{4}(\\.[0-9A-Fa-f]{4}){9}");
  if (std::regex_match(s, colon)) return s.find(':') == std::string::npos || s.find('-') == std::string::npos;
  return std::regex_match(s, dotted);
}

struct InterfaceDoc {
  std::string where;
  Interface spec;
};

// The networks (virtual and provider) ncm holds for a cluster, cached.
class ClusterNetworks {
public:
  explicit ClusterNetworks(const store::Store& st) : m_store(st) {}
  bool has(const std::string& cluster, const std::string& network) {
    auto it = m_by_cluster.find(cluster);
    if (it == m_by_cluster.end()) {
      std::set<std::string> names;
      for (const char* k : {"network", "providerNetwork"})
        for (const auto& r : m_store.list(resource::kind(k), cluster_key(cluster))) names.insert(name_of(r));
      it = m_by_cluster.emplace(cluster, std::move(names)).first;
    }
    return it->second.count(network) > 0;
  }

private:
  const store::Store& m_store;
  std::map<std::string, std::set<std::string>> m_by_cluster;
};

}  // namespace

void OvnAction::update(const controllers::Call& call, appcontext::AppContext& ctx) const {
  const store::Store& st = call.store;
  resource::Key intent_key = call.dig;
  intent_key.parts.emplace_back("netControllerIntent", call.intent);
  if (!st.get(intent_key))
    fail(ErrorKind::not_found,
         "network controller intent '" + resource::resource_anchor(resource::kind("netControllerIntent"), intent_key) +
             "' named in the group intent does not exist",
         "create it or fix the ovnaction entry of the group intent");
  ClusterNetworks networks(st);
  std::map<std::string, bool> multus;  // by cluster
  for (const auto& wi : st.list(resource::kind("workloadIntent"), intent_key)) {
    json spec = spec_of(wi);
    std::string where = anchor_of(wi);
    std::vector<InterfaceDoc> ifs;
    for (const auto& r : st.list(resource::kind("interfaceIntent"), wi.key)) {
      json s = spec_of(r);
      InterfaceDoc d{anchor_of(r),
                     {str_at(s, "interface"), str_at(s, "name"), str_at(s, "defaultGateway"), str_at(s, "ipAddress"),
                      str_at(s, "macAddress")}};
      if (d.spec.default_gateway.empty()) d.spec.default_gateway = "false";
      if (!d.spec.ip.empty() && !valid_ip(d.spec.ip))
        fail(ErrorKind::invalid, d.where + ": ipAddress '" + d.spec.ip + "' is not an IP address");
      if (!d.spec.mac.empty() && !valid_mac(d.spec.mac))
        fail(ErrorKind::invalid, d.where + ": macAddress '" + d.spec.mac + "' is not a MAC address");
      ifs.push_back(std::move(d));
    }
    if (ifs.empty()) continue;  // upstream: warned and skipped
    std::string app_name = str_at(spec, "app");
    appcontext::App* app = ctx.find_app(app_name);
    if (!app)
      fail(ErrorKind::invalid, where + ": app '" + app_name + "' is not part of the composite app",
           "name an app of the composite app");
    std::vector<Interface> add;
    for (const auto& d : ifs) add.push_back(d.spec);
    std::string key = str_at(spec, "workloadResource") + "+" + str_at(spec, "type");
    // Equal inputs give equal outputs: annotate each (content, multus) once.
    std::unordered_map<std::string, appcontext::ContentRef> done;
    for (auto& cl : app->clusters) {
      for (const auto& d : ifs)
        if (!networks.has(cl.name, d.spec.name)) {
          resource::Key ck = cluster_key(cl.name);
          std::string provider = *ck.get("clusterProvider"), cluster = *ck.get("cluster");
          fail(ErrorKind::invalid,
               d.where + ": network '" + d.spec.name + "' does not exist on cluster '" + cl.name + "' of app '" +
                   app_name + "'",
               "create it under cluster-providers/" + provider + "/clusters/" + cluster +
                   "/networks or .../provider-networks, or place the app elsewhere");
        }
      appcontext::Resource* r = cl.find(key);
      if (!r) continue;  // upstream: logged and skipped
      auto m = multus.find(cl.name);
      if (m == multus.end()) m = multus.emplace(cl.name, multus_on(st, cl.name)).first;
      std::string memo = r->hash() + (m->second ? "+multus" : "");
      auto it = done.find(memo);
      if (it == done.end()) {
        std::string what = where + ": resource '" + key + "'";
        json object = controllers::parse_object(r->text(), what);
        Target t = target_of(object, what);
        json& annotations = (*t.metadata)["annotations"];
        if (!annotations.is_object()) annotations = json::object();
        auto existing = [&](const char* k) -> std::optional<std::string> {
          auto a = annotations.find(k);
          if (a == annotations.end() || a->is_null()) return std::nullopt;
          return a->is_string() ? a->get<std::string>() : a->dump();
        };
        auto nfn = existing(k_nfn_key);
        annotations[k_nfn_key] = merged_nfn(nfn ? &*nfn : nullptr, add, what);
        if (m->second) {
          auto nets = existing(k_networks_key);
          annotations[k_networks_key] = merged_networks(nets ? &*nets : nullptr, t.default_namespace, what);
        }
        it = done.emplace(memo, ctx.intern(controllers::object_yaml(object))).first;
      }
      r->content = it->second;
    }
  }
}

}  // namespace emco::plugins::ovnaction
