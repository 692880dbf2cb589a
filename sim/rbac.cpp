// The RBAC authorizer of a simulated cluster. Evaluation follows the
// apiserver's RBAC authorizer: cluster role bindings first, then the role
// bindings of the request's namespace; the first rule that covers the
// request allows it; there are no deny rules.

#include "sim/rbac.hpp"

#include <algorithm>
#include <set>

#include "core/util/strings.hpp"

namespace emco::sim::detail {

using nlohmann::json;

namespace {

bool has_group(const Identity& who, const std::string& group) {
  return std::find(who.groups.begin(), who.groups.end(), group) != who.groups.end();
}

bool anonymous(const Identity& who) { return who.user.empty() || who.user == "system:anonymous"; }

std::string display_user(const Identity& who) { return anonymous(who) ? "system:anonymous" : who.user; }

bool contains(const json& list, const std::string& value) {
  if (!list.is_array()) return false;
  for (const auto& v : list)
    if (v.is_string() && v.get_ref<const std::string&>() == value) return true;
  return false;
}

bool verb_matches(const json& rule, const std::string& verb) {
  const json& verbs = rule.value("verbs", json::array());
  return contains(verbs, "*") || contains(verbs, verb);
}

// "deployments", "deployments/scale", "*" and "*/scale", as RBAC matches them.
bool resource_matches(const json& rule, const std::string& resource) {
  const json& resources = rule.value("resources", json::array());
  if (!resources.is_array()) return false;
  size_t slash = resource.find('/');
  for (const auto& r : resources) {
    if (!r.is_string()) continue;
    const auto& s = r.get_ref<const std::string&>();
    if (s == "*" || s == resource) return true;
    if (slash != std::string::npos && s.size() > 2 && s.compare(0, 2, "*/") == 0 &&
        s.compare(1, std::string::npos, resource, slash, std::string::npos) == 0)
      return true;
  }
  return false;
}

bool rule_allows(const json& rule, const Attributes& a) {
  if (!rule.is_object() || !verb_matches(rule, a.verb)) return false;
  if (!a.resource_request) {
    const json& urls = rule.value("nonResourceURLs", json::array());
    if (!urls.is_array()) return false;
    for (const auto& u : urls) {
      if (!u.is_string()) continue;
      const auto& s = u.get_ref<const std::string&>();
      if (s == "*" || s == a.path) return true;
      if (!s.empty() && s.back() == '*' && starts_with(a.path, s.substr(0, s.size() - 1))) return true;
    }
    return false;
  }
  const json& groups = rule.value("apiGroups", json::array());
  if (!contains(groups, "*") && !contains(groups, a.group)) return false;
  if (!resource_matches(rule, a.resource)) return false;
  const json& names = rule.value("resourceNames", json::array());
  if (names.is_array() && !names.empty()) return contains(names, a.name);
  return true;
}

// Rules of the built-in cluster roles (bootstrap policy), for roleRefs to a
// ClusterRole the cluster does not store.
json builtin_cluster_role(const std::string& name) {
  static const json read = {"get", "list", "watch"};
  static const json write = {"create", "delete", "deletecollection", "patch", "update"};
  static const json view = json::array({
      {{"apiGroups", {""}},
       {"resources",
        {"configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods",
         "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services", "services/status",
         "bindings", "events", "limitranges", "namespaces/status", "pods/log", "pods/status",
         "replicationcontrollers/status", "resourcequotas", "resourcequotas/status", "namespaces"}},
       {"verbs", read}},
      {{"apiGroups", {"apps"}},
       {"resources",
        {"controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale",
         "deployments/status", "replicasets", "replicasets/scale", "replicasets/status", "statefulsets",
         "statefulsets/scale", "statefulsets/status"}},
       {"verbs", read}},
      {{"apiGroups", {"autoscaling"}},
       {"resources", {"horizontalpodautoscalers", "horizontalpodautoscalers/status"}},
       {"verbs", read}},
      {{"apiGroups", {"batch"}}, {"resources", {"cronjobs", "cronjobs/status", "jobs", "jobs/status"}}, {"verbs", read}},
      {{"apiGroups", {"discovery.k8s.io"}}, {"resources", {"endpointslices"}}, {"verbs", read}},
      {{"apiGroups", {"networking.k8s.io"}},
       {"resources", {"ingresses", "ingresses/status", "networkpolicies"}},
       {"verbs", read}},
      {{"apiGroups", {"policy"}}, {"resources", {"poddisruptionbudgets", "poddisruptionbudgets/status"}}, {"verbs", read}},
  });
  static const json edit_extra = json::array({
      {{"apiGroups", {""}},
       {"resources",
        {"pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "configmaps", "endpoints",
         "persistentvolumeclaims", "replicationcontrollers", "replicationcontrollers/scale", "secrets",
         "serviceaccounts", "services", "services/proxy"}},
       {"verbs", write}},
      {{"apiGroups", {""}}, {"resources", {"secrets"}}, {"verbs", read}},
      {{"apiGroups", {""}}, {"resources", {"serviceaccounts"}}, {"verbs", {"impersonate"}}},
      {{"apiGroups", {"apps"}},
       {"resources",
        {"daemonsets", "deployments", "deployments/rollback", "deployments/scale", "replicasets",
         "replicasets/scale", "statefulsets", "statefulsets/scale"}},
       {"verbs", write}},
      {{"apiGroups", {"autoscaling"}}, {"resources", {"horizontalpodautoscalers"}}, {"verbs", write}},
      {{"apiGroups", {"batch"}}, {"resources", {"cronjobs", "jobs"}}, {"verbs", write}},
      {{"apiGroups", {"networking.k8s.io"}}, {"resources", {"ingresses", "networkpolicies"}}, {"verbs", write}},
      {{"apiGroups", {"policy"}}, {"resources", {"poddisruptionbudgets"}}, {"verbs", write}},
  });
  static const json admin_extra = json::array({
      {{"apiGroups", {"rbac.authorization.k8s.io"}},
       {"resources", {"roles", "rolebindings"}},
       {"verbs", {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}}},
      {{"apiGroups", {"authorization.k8s.io"}}, {"resources", {"localsubjectaccessreviews"}}, {"verbs", {"create"}}},
  });
  auto concat = [](std::initializer_list<const json*> parts) {
    json out = json::array();
    for (const json* p : parts)
      for (const auto& r : *p) out.push_back(r);
    return out;
  };
  if (name == "cluster-admin")
    return json::array({{{"apiGroups", {"*"}}, {"resources", {"*"}}, {"verbs", {"*"}}},
                        {{"nonResourceURLs", {"*"}}, {"verbs", {"*"}}}});
  if (name == "view") return view;
  if (name == "edit") return concat({&view, &edit_extra});
  if (name == "admin") return concat({&view, &edit_extra, &admin_extra});
  return nullptr;
}

// What a real cluster's default bindings give every authenticated user
// (system:discovery, system:basic-user, system:public-info-viewer) and,
// for the public-info paths, unauthenticated ones.
const json& default_rules(bool authenticated) {
  static const json everyone = json::array(
      {{{"nonResourceURLs", {"/healthz", "/livez", "/readyz", "/version", "/version/"}}, {"verbs", {"get"}}}});
  static const json users = json::array(
      {{{"nonResourceURLs",
         {"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version",
          "/version/"}},
        {"verbs", {"get"}}},
       {{"apiGroups", {"authorization.k8s.io"}},
        {"resources", {"selfsubjectaccessreviews", "selfsubjectrulesreviews"}},
        {"verbs", {"create"}}},
       {{"apiGroups", {"authentication.k8s.io"}}, {"resources", {"selfsubjectreviews"}}, {"verbs", {"create"}}}});
  return authenticated ? users : everyone;
}

bool subject_matches(const json& subject, const Identity& who, const std::string& binding_ns) {
  if (!subject.is_object()) return false;
  std::string kind = subject.value("kind", "");
  std::string name = subject.value("name", "");
  if (kind == "User") return !anonymous(who) && name == who.user;
  if (kind == "Group") return has_group(who, name);
  if (kind == "ServiceAccount") {
    std::string ns = subject.value("namespace", binding_ns);
    return who.user == "system:serviceaccount:" + ns + ":" + name;
  }
  return false;
}

bool binding_applies(const json& binding, const Identity& who, const std::string& binding_ns) {
  const json& subjects = binding.value("subjects", json::array());
  if (!subjects.is_array()) return false;
  for (const auto& s : subjects)
    if (subject_matches(s, who, binding_ns)) return true;
  return false;
}

const json* stored(const std::map<std::string, json>* objects, const std::string& key) {
  if (!objects) return nullptr;
  auto it = objects->find(key);
  return it == objects->end() ? nullptr : &it->second;
}

// The rules a binding's roleRef points at (null when the role is missing).
json role_rules(const json& binding, const std::string& binding_ns, const RbacObjects& rbac) {
  const json& ref = binding.value("roleRef", json::object());
  if (!ref.is_object()) return nullptr;
  std::string kind = ref.value("kind", "");
  std::string name = ref.value("name", "");
  if (kind == "Role" && !binding_ns.empty()) {
    const json* role = stored(rbac.roles, binding_ns + "/" + name);
    return role ? role->value("rules", json::array()) : json();
  }
  if (kind == "ClusterRole") {
    const json* role = stored(rbac.cluster_roles, "/" + name);
    return role ? role->value("rules", json::array()) : builtin_cluster_role(name);
  }
  return nullptr;
}

std::string subject_text(const json& binding, const Identity& who, const std::string& binding_ns) {
  for (const auto& s : binding.value("subjects", json::array()))
    if (subject_matches(s, who, binding_ns)) return s.value("kind", "") + " \"" + s.value("name", "") + "\"";
  return {};
}

// Calls visit(binding, binding_ns, rules, cluster_binding) for every binding
// that applies to `who` in `ns` (cluster role bindings first); stops when
// visit returns true.
template <typename Visit>
bool each_applicable(const Identity& who, const std::string& ns, const RbacObjects& rbac, Visit visit) {
  if (rbac.cluster_role_bindings)
    for (const auto& [key, b] : *rbac.cluster_role_bindings) {
      if (!binding_applies(b, who, "")) continue;
      json rules = role_rules(b, "", rbac);
      if (rules.is_array() && visit(b, std::string(), rules, true)) return true;
    }
  if (rbac.role_bindings && !ns.empty()) {
    std::string prefix = ns + "/";
    for (auto it = rbac.role_bindings->lower_bound(prefix);
         it != rbac.role_bindings->end() && starts_with(it->first, prefix); ++it) {
      if (!binding_applies(it->second, who, ns)) continue;
      json rules = role_rules(it->second, ns, rbac);
      if (rules.is_array() && visit(it->second, ns, rules, false)) return true;
    }
  }
  return false;
}

// ---- escalation checks ----

// One permission: a verb on one group/resource (and name), or on one URL.
struct Atomic {
  bool resource_rule = true;
  std::string group, resource, name, url, verb;
};

std::vector<std::string> strings_of(const json& rule, const char* key) {
  std::vector<std::string> out;
  if (auto it = rule.find(key); it != rule.end() && it->is_array())
    for (const auto& v : *it)
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

// rbac's BreakdownRule: a rule as the single permissions it grants.
void break_down(const json& rule, std::vector<Atomic>& out) {
  if (!rule.is_object()) return;
  auto verbs = strings_of(rule, "verbs");
  for (const auto& url : strings_of(rule, "nonResourceURLs"))
    for (const auto& v : verbs) out.push_back({false, "", "", "", url, v});
  auto names = strings_of(rule, "resourceNames");
  for (const auto& g : strings_of(rule, "apiGroups"))
    for (const auto& r : strings_of(rule, "resources"))
      for (const auto& v : verbs) {
        if (names.empty()) out.push_back({true, g, r, "", "", v});
        for (const auto& n : names) out.push_back({true, g, r, n, "", v});
      }
}

bool has(const std::vector<std::string>& list, const std::string& v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

// Does an owner's rule cover one permission (rbac's ruleCovers)?
bool covers(const json& owner, const Atomic& a) {
  if (!owner.is_object()) return false;
  auto verbs = strings_of(owner, "verbs");
  if (!has(verbs, "*") && !has(verbs, a.verb)) return false;
  if (!a.resource_rule) {
    for (const auto& u : strings_of(owner, "nonResourceURLs")) {
      if (u == "*" || u == a.url) return true;
      if (!u.empty() && u.back() == '*' && starts_with(a.url, u.substr(0, u.size() - 1))) return true;
    }
    return false;
  }
  auto groups = strings_of(owner, "apiGroups");
  if (!has(groups, "*") && !has(groups, a.group)) return false;
  auto resources = strings_of(owner, "resources");
  bool resource_ok = has(resources, "*") || has(resources, a.resource);
  if (!resource_ok) {
    size_t slash = a.resource.find('/');
    resource_ok = slash != std::string::npos && has(resources, "*" + a.resource.substr(slash));
  }
  if (!resource_ok) return false;
  auto names = strings_of(owner, "resourceNames");
  return names.empty() || (!a.name.empty() && has(names, a.name));
}

// Go's %q of a []string: ["a" "b"].
std::string go_quoted(const std::vector<std::string>& list) {
  std::string out = "[";
  for (size_t i = 0; i < list.size(); ++i) out += (i ? " " : "") + json(list[i]).dump();
  return out + "]";
}

// rbac's CompactRules + CompactString over the missing permissions: one
// line per rule, sorted, permissions on one resource (and name) merged.
std::string describe_missing(const std::vector<Atomic>& missing) {
  struct Rule {
    std::vector<std::string> groups, resources, urls, names, verbs;
  };
  std::vector<Rule> rules;
  std::map<std::string, size_t> simple;  // group/resource/name -> index in rules
  for (const auto& a : missing) {
    if (!a.resource_rule) {
      rules.push_back({{}, {}, {a.url}, {}, {a.verb}});
      continue;
    }
    std::string key = a.group + '\0' + a.resource + '\0' + a.name;
    if (auto it = simple.find(key); it != simple.end()) {
      rules[it->second].verbs.push_back(a.verb);
      continue;
    }
    simple.emplace(key, rules.size());
    rules.push_back({{a.group}, {a.resource}, {}, a.name.empty() ? std::vector<std::string>{} : std::vector<std::string>{a.name},
                     {a.verb}});
  }
  std::set<std::string> lines;
  for (const auto& r : rules) {
    std::vector<std::string> parts;
    if (!r.groups.empty()) parts.push_back("APIGroups:" + go_quoted(r.groups));
    if (!r.resources.empty()) parts.push_back("Resources:" + go_quoted(r.resources));
    if (!r.urls.empty()) parts.push_back("NonResourceURLs:" + go_quoted(r.urls));
    if (!r.names.empty()) parts.push_back("ResourceNames:" + go_quoted(r.names));
    if (!r.verbs.empty()) parts.push_back("Verbs:" + go_quoted(r.verbs));
    lines.insert("{" + join(parts, ", ") + "}");
  }
  return join(std::vector<std::string>(lines.begin(), lines.end()), "\n");
}

// Every rule that applies to `who` in `ns` (RulesFor).
json owner_rules(const Identity& who, const std::string& ns, const RbacObjects& rbac) {
  json out = default_rules(!anonymous(who));
  each_applicable(who, ns, rbac, [&](const json&, const std::string&, const json& rules, bool) {
    for (const auto& r : rules) out.push_back(r);
    return false;
  });
  return out;
}

// ConfirmNoEscalation: "" when `who` holds every permission of `rules` in `ns`.
std::string escalation(const Identity& who, const std::string& ns, const json& rules, const RbacObjects& rbac) {
  std::vector<Atomic> wanted;
  if (rules.is_array())
    for (const auto& r : rules) break_down(r, wanted);
  json owned = owner_rules(who, ns, rbac);
  std::vector<Atomic> missing;
  for (const auto& a : wanted) {
    bool held = false;
    for (const auto& o : owned)
      if ((held = covers(o, a))) break;
    if (!held) missing.push_back(a);
  }
  if (missing.empty()) return {};
  return "user " + json(display_user(who)).dump() + " (groups=" + go_quoted(who.groups) +
         ") is attempting to grant RBAC permissions not currently held:\n" + describe_missing(missing);
}

// metav1.LabelSelector (matchLabels, matchExpressions) against an object's labels.
bool selector_matches(const json& selector, const json& object) {
  if (!selector.is_object()) return false;
  const json labels = object.is_object() ? object.value("/metadata/labels"_json_pointer, json::object()) : json::object();
  auto label = [&](const std::string& k) -> const json* {
    auto it = labels.find(k);
    return it != labels.end() && it->is_string() ? &*it : nullptr;
  };
  if (auto ml = selector.find("matchLabels"); ml != selector.end() && ml->is_object())
    for (const auto& [k, v] : ml->items()) {
      const json* have = label(k);
      if (!have || *have != v) return false;
    }
  if (auto me = selector.find("matchExpressions"); me != selector.end() && me->is_array())
    for (const auto& e : *me) {
      if (!e.is_object()) return false;
      const json* have = label(e.value("key", ""));
      std::string op = e.value("operator", "");
      auto values = strings_of(e, "values");
      bool in = have && has(values, have->get<std::string>());
      if (op == "In" && !in) return false;
      if (op == "NotIn" && in) return false;
      if (op == "Exists" && !have) return false;
      if (op == "DoesNotExist" && have) return false;
      if (op != "In" && op != "NotIn" && op != "Exists" && op != "DoesNotExist") return false;
    }
  return true;
}

}  // namespace

Decision authorize(const Identity& who, const Attributes& a, const RbacObjects& rbac) {
  if (has_group(who, "system:masters")) return {true, ""};
  bool authenticated = !anonymous(who);
  for (const auto& rule : default_rules(authenticated))
    if (rule_allows(rule, a)) return {true, ""};
  Decision d;
  // Namespaced role bindings never grant non-resource URLs or cluster-scoped requests.
  each_applicable(who, a.resource_request ? a.ns : std::string(), rbac,
                  [&](const json& b, const std::string& bns, const json& rules, bool cluster) {
                    for (const auto& rule : rules)
                      if (rule_allows(rule, a)) {
                        const json& ref = b["roleRef"];
                        std::string bname = b["metadata"].value("name", "");
                        d.allowed = true;
                        d.reason = "RBAC: allowed by " +
                                   (cluster ? "ClusterRoleBinding \"" + bname + "\""
                                            : "RoleBinding \"" + bname + "/" + bns + "\"") +
                                   " of " + ref.value("kind", "") + " \"" + ref.value("name", "") + "\" to " +
                                   subject_text(b, who, bns);
                        return true;
                      }
                    return false;
                  });
  return d;
}

json rules_review(const Identity& who, const std::string& ns, const RbacObjects& rbac) {
  json resource_rules = json::array();
  json non_resource_rules = json::array();
  auto add = [&](const json& rule) {
    if (!rule.is_object()) return;
    if (rule.contains("nonResourceURLs")) {
      non_resource_rules.push_back({{"verbs", rule.value("verbs", json::array())},
                                    {"nonResourceURLs", rule["nonResourceURLs"]}});
      return;
    }
    json r = {{"verbs", rule.value("verbs", json::array())},
              {"apiGroups", rule.value("apiGroups", json::array())},
              {"resources", rule.value("resources", json::array())}};
    if (rule.contains("resourceNames") && rule["resourceNames"].is_array() && !rule["resourceNames"].empty())
      r["resourceNames"] = rule["resourceNames"];
    resource_rules.push_back(std::move(r));
  };
  if (has_group(who, "system:masters")) {
    for (const auto& rule : builtin_cluster_role("cluster-admin")) add(rule);
  }
  for (const auto& rule : default_rules(!anonymous(who))) add(rule);
  each_applicable(who, ns, rbac, [&](const json&, const std::string&, const json& rules, bool cluster) {
    for (const auto& rule : rules)
      if (cluster || !rule.contains("nonResourceURLs")) add(rule);
    return false;
  });
  return {{"resourceRules", resource_rules}, {"nonResourceRules", non_resource_rules}, {"incomplete", false}};
}

std::string forbidden_message(const Identity& who, const Attributes& a, const std::string& group_resource) {
  std::string user = "User \"" + display_user(who) + "\"";
  if (!a.resource_request) return "forbidden: " + user + " cannot " + a.verb + " path \"" + a.path + "\"";
  return group_resource + (a.name.empty() ? "" : " \"" + a.name + "\"") + " is forbidden: " + user + " cannot " +
         a.verb + " resource \"" + a.resource + "\" in API group \"" + a.group + "\"" +
         (a.ns.empty() ? std::string(" at the cluster scope") : " in the namespace \"" + a.ns + "\"");
}

std::optional<json> aggregated_rules(const std::string& name, const json& role,
                                     const std::map<std::string, json>& cluster_roles) {
  const json* selectors = nullptr;
  if (auto ar = role.find("aggregationRule"); ar != role.end() && ar->is_object())
    if (auto cs = ar->find("clusterRoleSelectors"); cs != ar->end() && cs->is_array()) selectors = &*cs;
  if (!selectors) return std::nullopt;
  json rules = json::array();
  for (const auto& selector : *selectors)
    for (const auto& [key, other] : cluster_roles) {  // keys "/name": by name
      if (key == "/" + name || !selector_matches(selector, other)) continue;
      for (const auto& rule : other.value("rules", json::array()))
        if (std::find(rules.begin(), rules.end(), rule) == rules.end()) rules.push_back(rule);
    }
  return rules;
}

std::optional<WriteProblem> write_problem(const Identity& who, const std::string& resource, const std::string& ns,
                                          const json& obj, const RbacObjects& rbac) {
  if (has_group(who, "system:masters")) return std::nullopt;
  const std::string group = "rbac.authorization.k8s.io";
  const std::string name = obj.value("/metadata/name"_json_pointer, std::string());
  if (resource == "roles" || resource == "clusterroles") {
    if (authorize(who, {"escalate", true, group, resource, name, ns, {}}, rbac).allowed) return std::nullopt;
    if (std::string e = escalation(who, ns, obj.value("rules", json::array()), rbac); !e.empty()) return WriteProblem{e};
    if (resource == "clusterroles" && obj.contains("aggregationRule") && !obj["aggregationRule"].is_null()) {
      // It can gather anything, so it takes * on everything.
      json full = builtin_cluster_role("cluster-admin");
      if (!escalation(who, ns, full, rbac).empty())
        return WriteProblem{"must have cluster-admin privileges to use the aggregationRule"};
    }
    return std::nullopt;
  }
  if (resource != "rolebindings" && resource != "clusterrolebindings") return std::nullopt;
  const json& ref = obj.value("roleRef", json::object());
  std::string ref_kind = ref.is_object() ? ref.value("kind", "") : "";
  std::string ref_name = ref.is_object() ? ref.value("name", "") : "";
  std::string ref_resource = ref_kind == "Role" ? "roles" : "clusterroles";
  if (authorize(who, {"bind", true, group, ref_resource, ref_name, ns, {}}, rbac).allowed) return std::nullopt;
  json rules = role_rules(obj, ns, rbac);
  if (!rules.is_array())
    return WriteProblem{ref_resource + "." + group + " " + json(ref_name).dump() + " not found", true};
  if (std::string e = escalation(who, ns, rules, rbac); !e.empty()) return WriteProblem{e};
  return std::nullopt;
}

}  // namespace emco::sim::detail
