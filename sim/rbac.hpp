#pragma once
// RBAC authorization for one simulated cluster (internal to sim),
// decided as kube-apiserver's RBAC authorizer decides it:
//   - group system:masters may do anything (the simulator's admin kubeconfigs);
//   - every authenticated user has what a real cluster's default bindings
//     give system:authenticated (system:discovery, system:basic-user,
//     system:public-info-viewer): GET of /api*, /openapi*, /version, health
//     paths, and create of the self-subject reviews; unauthenticated
//     requests only the public-info paths;
//   - anything else only through the cluster's stored Roles, RoleBindings,
//     ClusterRoles and ClusterRoleBindings (subjects User, Group,
//     ServiceAccount; rules with apiGroups, resources incl. subresources and
//     "*/sub", verbs, resourceNames, nonResourceURLs with a trailing "*").
// A roleRef to a ClusterRole that is not stored resolves to the built-in
// cluster-admin, admin, edit or view role of a real cluster (a subset of
// their rules covering the built-in kinds the simulator serves).
// ClusterRole aggregation (aggregated_rules) and the API's escalation and
// bind checks on RBAC writes (write_problem) are here too; the cluster
// applies them (cluster.cpp).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace emco::sim::detail {

// Who sent a request. An empty user is an anonymous request.
struct Identity {
  std::string user;
  std::vector<std::string> groups;
};

// What a request does, in RBAC terms.
struct Attributes {
  std::string verb;               // "get", "list", "create", ..., or "approve" for signers
  bool resource_request = true;
  std::string group;              // resource requests
  std::string resource;           // "deployments" or "deployments/scale"
  std::string name;               // empty for collections and creates by POST
  std::string ns;                 // empty: cluster scope
  std::string path;               // non-resource requests: "/version"
};

// The RBAC objects of one cluster: store maps "namespace/name" -> object
// (cluster-scoped objects have an empty namespace). Null: none stored.
struct RbacObjects {
  const std::map<std::string, nlohmann::json>* roles = nullptr;
  const std::map<std::string, nlohmann::json>* role_bindings = nullptr;
  const std::map<std::string, nlohmann::json>* cluster_roles = nullptr;
  const std::map<std::string, nlohmann::json>* cluster_role_bindings = nullptr;
};

struct Decision {
  bool allowed = false;
  std::string reason;  // for allowed: what allowed it, as the RBAC authorizer words it
};

Decision authorize(const Identity& who, const Attributes& what, const RbacObjects& rbac);

// The rules that apply to `who` in namespace `ns` (cluster-wide ones
// included), as SelfSubjectRulesReview reports them:
// {"resourceRules":[{verbs,apiGroups,resources,resourceNames}],"nonResourceRules":[{verbs,nonResourceURLs}]}
nlohmann::json rules_review(const Identity& who, const std::string& ns, const RbacObjects& rbac);

// The API's 403 message: `deployments.apps "web" is forbidden: User "alice"
// cannot create resource "deployments" in API group "apps" in the namespace
// "ns1"` (`group_resource` is the prefix, "deployments.apps"), or
// `forbidden: User "alice" cannot get path "/metrics"`.
std::string forbidden_message(const Identity& who, const Attributes& what, const std::string& group_resource);

// The clusterrole-aggregation controller's view: for a ClusterRole with
// aggregationRule.clusterRoleSelectors, the rules it should hold: those of
// every other stored ClusterRole whose labels match one of the selectors
// (matchLabels and matchExpressions), selectors in order, roles by name, each
// distinct rule once. nullopt for a ClusterRole without an aggregationRule.
std::optional<nlohmann::json> aggregated_rules(const std::string& name, const nlohmann::json& role,
                                               const std::map<std::string, nlohmann::json>& cluster_roles);

// Why the API would refuse `who` writing (create, update, patch, apply) the
// RBAC object `obj` of `resource` ("roles", "clusterroles", "rolebindings",
// "clusterrolebindings") in namespace `ns` ("" for cluster scope), or nullopt
// when allowed. As the RBAC storage does:
//   - system:masters may write anything;
//   - a Role or ClusterRole: `escalate` on it, or holding every rule it grants
//     (in `ns`, cluster-wide rules included); an aggregationRule needs full
//     authority (cluster-admin) unless `escalate` is held;
//   - a binding: `bind` on the role it references, or holding every rule of
//     that role.
// The message is the API's: `user "alice" (groups=["system:authenticated"])
// is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""],
// Resources:["secrets"], Verbs:["get"]}` (the 403's cause after
// `roles.rbac.authorization.k8s.io "r" is forbidden: `). `not_found` is set when
// a binding references a Role that does not exist (the API answers 404).
struct WriteProblem {
  std::string message;
  bool not_found = false;
};
std::optional<WriteProblem> write_problem(const Identity& who, const std::string& resource, const std::string& ns,
                                          const nlohmann::json& obj, const RbacObjects& rbac);

}  // namespace emco::sim::detail
