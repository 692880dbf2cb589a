#include "core/k8s/resources.hpp"

#include <algorithm>

namespace emco::k8s {

std::string ResourceType::api_version() const {
  return group.empty() ? version : group + "/" + version;
}

std::string ResourceType::group_resource() const {
  return group.empty() ? resource : resource + "." + group;
}

bool ResourceType::has_subresource(std::string_view name) const {
  return std::find(subresources.begin(), subresources.end(), name) != subresources.end();
}

GroupVersion parse_api_version(std::string_view api_version) {
  auto slash = api_version.find('/');
  if (slash == std::string_view::npos) return {"", std::string(api_version)};
  return {std::string(api_version.substr(0, slash)), std::string(api_version.substr(slash + 1))};
}

ResourceType resource_type(std::string group, std::string version, std::string kind, std::string resource,
                           bool namespaced, std::vector<std::string> short_names, std::vector<std::string> subresources,
                           bool has_generation, std::vector<std::string> categories) {
  ResourceType t;
  t.group = std::move(group);
  t.version = std::move(version);
  t.kind = std::move(kind);
  t.resource = std::move(resource);
  t.singular = t.kind;
  std::transform(t.singular.begin(), t.singular.end(), t.singular.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  t.namespaced = namespaced;
  t.short_names = std::move(short_names);
  t.subresources = std::move(subresources);
  t.has_generation = has_generation;
  t.categories = std::move(categories);
  return t;
}

namespace {

enum Scope { namespaced, cluster };
enum Gen { no_generation, generation };

ResourceType make(std::string group, std::string version, std::string kind, std::string resource, Scope scope,
                  std::vector<std::string> short_names, std::vector<std::string> subresources, Gen gen,
                  std::vector<std::string> categories = {}) {
  return resource_type(std::move(group), std::move(version), std::move(kind), std::move(resource), scope == namespaced,
                       std::move(short_names), std::move(subresources), gen == generation, std::move(categories));
}

ResourceType review(std::string group, std::string kind, std::string resource, Scope scope = cluster) {
  ResourceType t = make(std::move(group), "v1", std::move(kind), std::move(resource), scope, {}, {}, no_generation);
  t.verbs = {"create"};
  return t;
}

std::vector<ResourceType> build_table() {
  const std::vector<std::string> st{"status"};
  const std::vector<std::string> all{"all"};
  return {
      // core/v1
      make("", "v1", "ConfigMap", "configmaps", namespaced, {"cm"}, {}, no_generation),
      make("", "v1", "Endpoints", "endpoints", namespaced, {"ep"}, {}, no_generation),
      make("", "v1", "Event", "events", namespaced, {"ev"}, {}, no_generation),
      make("", "v1", "LimitRange", "limitranges", namespaced, {"limits"}, {}, no_generation),
      make("", "v1", "Namespace", "namespaces", cluster, {"ns"}, {"finalize", "status"}, no_generation),
      make("", "v1", "Node", "nodes", cluster, {"no"}, st, no_generation),
      make("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", namespaced, {"pvc"}, st, no_generation),
      make("", "v1", "PersistentVolume", "persistentvolumes", cluster, {"pv"}, st, no_generation),
      make("", "v1", "Pod", "pods", namespaced, {"po"}, st, no_generation, all),
      make("", "v1", "PodTemplate", "podtemplates", namespaced, {}, {}, no_generation),
      make("", "v1", "ReplicationController", "replicationcontrollers", namespaced, {"rc"}, {"scale", "status"},
           generation, all),
      make("", "v1", "ResourceQuota", "resourcequotas", namespaced, {"quota"}, st, no_generation),
      make("", "v1", "Secret", "secrets", namespaced, {}, {}, no_generation),
      make("", "v1", "ServiceAccount", "serviceaccounts", namespaced, {"sa"}, {}, no_generation),
      make("", "v1", "Service", "services", namespaced, {"svc"}, st, no_generation, all),
      // admissionregistration.k8s.io/v1
      make("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration", "mutatingwebhookconfigurations",
           cluster, {}, {}, generation, {"api-extensions"}),
      make("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration",
           "validatingwebhookconfigurations", cluster, {}, {}, generation, {"api-extensions"}),
      // authentication.k8s.io/v1, authorization.k8s.io/v1 (create-only reviews)
      review("authentication.k8s.io", "SelfSubjectReview", "selfsubjectreviews"),
      review("authorization.k8s.io", "LocalSubjectAccessReview", "localsubjectaccessreviews", namespaced),
      review("authorization.k8s.io", "SelfSubjectAccessReview", "selfsubjectaccessreviews"),
      review("authorization.k8s.io", "SelfSubjectRulesReview", "selfsubjectrulesreviews"),
      review("authorization.k8s.io", "SubjectAccessReview", "subjectaccessreviews"),
      // apiextensions.k8s.io/v1
      make("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", cluster,
           {"crd", "crds"}, st, generation, {"api-extensions"}),
      // apps/v1
      make("apps", "v1", "ControllerRevision", "controllerrevisions", namespaced, {}, {}, no_generation),
      make("apps", "v1", "DaemonSet", "daemonsets", namespaced, {"ds"}, st, generation, all),
      make("apps", "v1", "Deployment", "deployments", namespaced, {"deploy"}, {"scale", "status"}, generation, all),
      make("apps", "v1", "ReplicaSet", "replicasets", namespaced, {"rs"}, {"scale", "status"}, generation, all),
      make("apps", "v1", "StatefulSet", "statefulsets", namespaced, {"sts"}, {"scale", "status"}, generation, all),
      // autoscaling/v2
      make("autoscaling", "v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", namespaced, {"hpa"}, st,
           no_generation, all),
      // batch/v1
      make("batch", "v1", "CronJob", "cronjobs", namespaced, {"cj"}, st, generation, all),
      make("batch", "v1", "Job", "jobs", namespaced, {}, st, generation, all),
      // certificates.k8s.io/v1
      make("certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests", cluster, {"csr"},
           {"approval", "status"}, no_generation),
      // coordination.k8s.io/v1
      make("coordination.k8s.io", "v1", "Lease", "leases", namespaced, {}, {}, no_generation),
      // discovery.k8s.io/v1
      make("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", namespaced, {}, {}, no_generation),
      // networking.k8s.io/v1
      make("networking.k8s.io", "v1", "IngressClass", "ingressclasses", cluster, {}, {}, no_generation),
      make("networking.k8s.io", "v1", "Ingress", "ingresses", namespaced, {"ing"}, st, generation),
      make("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies", namespaced, {"netpol"}, {}, generation),
      // policy/v1
      make("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", namespaced, {"pdb"}, st, generation),
      // rbac.authorization.k8s.io/v1
      make("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", cluster, {}, {},
           no_generation),
      make("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", cluster, {}, {}, no_generation),
      make("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", namespaced, {}, {}, no_generation),
      make("rbac.authorization.k8s.io", "v1", "Role", "roles", namespaced, {}, {}, no_generation),
      // scheduling.k8s.io/v1
      make("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", cluster, {"pc"}, {}, no_generation),
      // storage.k8s.io/v1
      make("storage.k8s.io", "v1", "StorageClass", "storageclasses", cluster, {"sc"}, {}, no_generation),
  };
}

}  // namespace

const std::vector<ResourceType>& builtin_resources() {
  static const std::vector<ResourceType> table = build_table();
  return table;
}

const ResourceType* find_builtin_kind(std::string_view group, std::string_view version, std::string_view kind) {
  for (const auto& t : builtin_resources())
    if (t.kind == kind && t.group == group && t.version == version) return &t;
  return nullptr;
}

const ResourceType* find_builtin_resource(std::string_view group, std::string_view version,
                                          std::string_view resource) {
  for (const auto& t : builtin_resources())
    if (t.resource == resource && t.group == group && t.version == version) return &t;
  return nullptr;
}

std::string object_path(const ResourceType& type, std::string_view ns, std::string_view name) {
  std::string path = type.group.empty() ? "/api/" + type.version : "/apis/" + type.group + "/" + type.version;
  if (type.namespaced && !ns.empty()) {
    path += "/namespaces/";
    path += ns;
  }
  path += "/" + type.resource;
  if (!name.empty()) {
    path += "/";
    path += name;
  }
  return path;
}

}  // namespace emco::k8s
