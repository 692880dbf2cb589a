// Protobuf bodies decoded with a table of the Kubernetes messages kubectl's
// typed clients send (field numbers as the k8s.io/api .proto files define
// them). Go's protobuf encoding writes every non-pointer field, zero or
// not; the JSON encoding leaves zero ones out (omitempty), so zero scalars
// are dropped unless the Go field is a pointer, where zero is a value.

#include "sim/protobuf.hpp"

#include <ctime>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "core/util/base64.hpp"

namespace emco::sim::detail {

using nlohmann::json;

namespace {

enum class Type {
  string,
  bytes,          // JSON: base64
  int32,
  int64,
  boolean,
  message,        // JSON object (empty ones kept: non-pointer structs encode as {})
  string_map,     // map<string, string>
  bytes_map,      // map<string, bytes>
  quantity_map,   // map<string, resource.Quantity>
  int_or_string,
  time,           // metav1.Time: RFC 3339, zero left out
  ignored,        // read-only on writes (status) or metadata the server sets
};

struct Message;

struct Field {
  int number;
  const char* name;
  Type type;
  const Message* message = nullptr;
  bool repeated = false;
  bool pointer = false;  // a Go pointer: zero is a value, not "unset"
};

struct Message {
  const char* name;
  std::vector<Field> fields;
  const Field* find(int number) const {
    for (const auto& f : fields)
      if (f.number == number) return &f;
    return nullptr;
  }
};

constexpr bool k_rep = true;
constexpr bool k_ptr = true;

// ---- apimachinery ----

const Message& owner_reference() {
  static const Message m{"OwnerReference",
                         {{5, "apiVersion", Type::string},
                          {1, "kind", Type::string},
                          {3, "name", Type::string},
                          {4, "uid", Type::string},
                          {6, "controller", Type::boolean, nullptr, false, k_ptr},
                          {7, "blockOwnerDeletion", Type::boolean, nullptr, false, k_ptr}}};
  return m;
}

const Message& object_meta() {
  static const Message m{"ObjectMeta",
                         {{1, "name", Type::string},
                          {2, "generateName", Type::string},
                          {3, "namespace", Type::string},
                          {4, "selfLink", Type::ignored},
                          {5, "uid", Type::string},
                          {6, "resourceVersion", Type::string},
                          {7, "generation", Type::ignored},
                          {8, "creationTimestamp", Type::ignored},
                          {9, "deletionTimestamp", Type::ignored},
                          {10, "deletionGracePeriodSeconds", Type::ignored},
                          {11, "labels", Type::string_map},
                          {12, "annotations", Type::string_map},
                          {13, "ownerReferences", Type::message, &owner_reference(), k_rep},
                          {14, "finalizers", Type::string, nullptr, k_rep},
                          {17, "managedFields", Type::ignored}}};
  return m;
}

const Message& label_selector() {
  static const Message requirement{"LabelSelectorRequirement",
                                   {{1, "key", Type::string},
                                    {2, "operator", Type::string},
                                    {3, "values", Type::string, nullptr, k_rep}}};
  static const Message m{"LabelSelector",
                         {{1, "matchLabels", Type::string_map},
                          {2, "matchExpressions", Type::message, &requirement, k_rep}}};
  return m;
}

// ---- core/v1 ----

const Message& local_object_reference() {
  static const Message m{"LocalObjectReference", {{1, "name", Type::string}}};
  return m;
}

const Message& container() {
  static const Message port{"ContainerPort",
                            {{1, "name", Type::string},
                             {2, "hostPort", Type::int32},
                             {3, "containerPort", Type::int32},
                             {4, "protocol", Type::string},
                             {5, "hostIP", Type::string}}};
  static const Message env{"EnvVar", {{1, "name", Type::string}, {2, "value", Type::string}}};
  static const Message resources{"ResourceRequirements",
                                 {{1, "limits", Type::quantity_map}, {2, "requests", Type::quantity_map}}};
  static const Message mount{"VolumeMount",
                             {{1, "name", Type::string},
                              {2, "readOnly", Type::boolean},
                              {3, "mountPath", Type::string},
                              {4, "subPath", Type::string},
                              {5, "mountPropagation", Type::string, nullptr, false, k_ptr},
                              {6, "subPathExpr", Type::string}}};
  static const Message m{"Container",
                         {{1, "name", Type::string},
                          {2, "image", Type::string},
                          {3, "command", Type::string, nullptr, k_rep},
                          {4, "args", Type::string, nullptr, k_rep},
                          {5, "workingDir", Type::string},
                          {6, "ports", Type::message, &port, k_rep},
                          {7, "env", Type::message, &env, k_rep},
                          {8, "resources", Type::message, &resources},
                          {9, "volumeMounts", Type::message, &mount, k_rep},
                          {13, "terminationMessagePath", Type::string},
                          {14, "imagePullPolicy", Type::string},
                          {16, "stdin", Type::boolean},
                          {17, "stdinOnce", Type::boolean},
                          {18, "tty", Type::boolean},
                          {20, "terminationMessagePolicy", Type::string}}};
  return m;
}

const Message& pod_template() {
  static const Message spec{"PodSpec",
                            {{2, "containers", Type::message, &container(), k_rep},
                             {3, "restartPolicy", Type::string},
                             {4, "terminationGracePeriodSeconds", Type::int64, nullptr, false, k_ptr},
                             {5, "activeDeadlineSeconds", Type::int64, nullptr, false, k_ptr},
                             {6, "dnsPolicy", Type::string},
                             {7, "nodeSelector", Type::string_map},
                             {8, "serviceAccountName", Type::string},
                             {9, "serviceAccount", Type::string},
                             {10, "nodeName", Type::string},
                             {11, "hostNetwork", Type::boolean},
                             {12, "hostPID", Type::boolean},
                             {13, "hostIPC", Type::boolean},
                             {15, "imagePullSecrets", Type::message, &local_object_reference(), k_rep},
                             {16, "hostname", Type::string},
                             {17, "subdomain", Type::string},
                             {19, "schedulerName", Type::string},
                             {20, "initContainers", Type::message, &container(), k_rep},
                             {21, "automountServiceAccountToken", Type::boolean, nullptr, false, k_ptr},
                             {24, "priorityClassName", Type::string},
                             {25, "priority", Type::int32, nullptr, false, k_ptr},
                             {30, "enableServiceLinks", Type::boolean, nullptr, false, k_ptr}}};
  static const Message m{"PodTemplateSpec", {{1, "metadata", Type::message, &object_meta()}, {2, "spec", Type::message, &spec}}};
  return m;
}

const Message& namespace_() {
  static const Message spec{"NamespaceSpec", {{1, "finalizers", Type::string, nullptr, k_rep}}};
  static const Message m{"Namespace",
                         {{1, "metadata", Type::message, &object_meta()},
                          {2, "spec", Type::message, &spec},
                          {3, "status", Type::ignored}}};
  return m;
}

const Message& config_map() {
  static const Message m{"ConfigMap",
                         {{1, "metadata", Type::message, &object_meta()},
                          {2, "data", Type::string_map},
                          {3, "binaryData", Type::bytes_map},
                          {4, "immutable", Type::boolean, nullptr, false, k_ptr}}};
  return m;
}

const Message& secret() {
  static const Message m{"Secret",
                         {{1, "metadata", Type::message, &object_meta()},
                          {2, "data", Type::bytes_map},
                          {3, "type", Type::string},
                          {4, "stringData", Type::string_map},
                          {5, "immutable", Type::boolean, nullptr, false, k_ptr}}};
  return m;
}

const Message& service_account() {
  static const Message m{"ServiceAccount",
                         {{1, "metadata", Type::message, &object_meta()},
                          {3, "imagePullSecrets", Type::message, &local_object_reference(), k_rep},
                          {4, "automountServiceAccountToken", Type::boolean, nullptr, false, k_ptr}}};
  return m;
}

const Message& service() {
  static const Message port{"ServicePort",
                            {{1, "name", Type::string},
                             {2, "protocol", Type::string},
                             {3, "port", Type::int32},
                             {4, "targetPort", Type::int_or_string},
                             {5, "nodePort", Type::int32},
                             {6, "appProtocol", Type::string, nullptr, false, k_ptr}}};
  static const Message spec{"ServiceSpec",
                            {{1, "ports", Type::message, &port, k_rep},
                             {2, "selector", Type::string_map},
                             {3, "clusterIP", Type::string},
                             {4, "type", Type::string},
                             {5, "externalIPs", Type::string, nullptr, k_rep},
                             {7, "sessionAffinity", Type::string},
                             {8, "loadBalancerIP", Type::string},
                             {10, "externalName", Type::string},
                             {11, "externalTrafficPolicy", Type::string},
                             {12, "healthCheckNodePort", Type::int32},
                             {13, "publishNotReadyAddresses", Type::boolean},
                             {17, "ipFamilyPolicy", Type::string, nullptr, false, k_ptr},
                             {18, "clusterIPs", Type::string, nullptr, k_rep},
                             {19, "ipFamilies", Type::string, nullptr, k_rep},
                             {20, "allocateLoadBalancerNodePorts", Type::boolean, nullptr, false, k_ptr},
                             {21, "loadBalancerClass", Type::string, nullptr, false, k_ptr},
                             {22, "internalTrafficPolicy", Type::string, nullptr, false, k_ptr}}};
  static const Message m{"Service",
                         {{1, "metadata", Type::message, &object_meta()},
                          {2, "spec", Type::message, &spec},
                          {3, "status", Type::ignored}}};
  return m;
}

const Message& resource_quota() {
  static const Message spec{"ResourceQuotaSpec",
                            {{1, "hard", Type::quantity_map}, {2, "scopes", Type::string, nullptr, k_rep}}};
  static const Message m{"ResourceQuota",
                         {{1, "metadata", Type::message, &object_meta()},
                          {2, "spec", Type::message, &spec},
                          {3, "status", Type::ignored}}};
  return m;
}

// ---- apps/v1, batch/v1 ----

const Message& deployment() {
  static const Message rolling{"RollingUpdateDeployment",
                               {{1, "maxUnavailable", Type::int_or_string}, {2, "maxSurge", Type::int_or_string}}};
  static const Message strategy{"DeploymentStrategy", {{1, "type", Type::string}, {2, "rollingUpdate", Type::message, &rolling}}};
  static const Message spec{"DeploymentSpec",
                            {{1, "replicas", Type::int32, nullptr, false, k_ptr},
                             {2, "selector", Type::message, &label_selector()},
                             {3, "template", Type::message, &pod_template()},
                             {4, "strategy", Type::message, &strategy},
                             {5, "minReadySeconds", Type::int32},
                             {6, "revisionHistoryLimit", Type::int32, nullptr, false, k_ptr},
                             {7, "paused", Type::boolean},
                             {9, "progressDeadlineSeconds", Type::int32, nullptr, false, k_ptr}}};
  static const Message m{"Deployment",
                         {{1, "metadata", Type::message, &object_meta()},
                          {2, "spec", Type::message, &spec},
                          {3, "status", Type::ignored}}};
  return m;
}

const Message& stateful_set() {
  static const Message rolling{"RollingUpdateStatefulSetStrategy",
                               {{1, "partition", Type::int32, nullptr, false, k_ptr},
                                {2, "maxUnavailable", Type::int_or_string}}};
  static const Message strategy{"StatefulSetUpdateStrategy",
                                {{1, "type", Type::string}, {2, "rollingUpdate", Type::message, &rolling}}};
  static const Message spec{"StatefulSetSpec",
                            {{1, "replicas", Type::int32, nullptr, false, k_ptr},
                             {2, "selector", Type::message, &label_selector()},
                             {3, "template", Type::message, &pod_template()},
                             {5, "serviceName", Type::string},
                             {6, "podManagementPolicy", Type::string},
                             {7, "updateStrategy", Type::message, &strategy},
                             {8, "revisionHistoryLimit", Type::int32, nullptr, false, k_ptr},
                             {9, "minReadySeconds", Type::int32}}};
  static const Message m{"StatefulSet",
                         {{1, "metadata", Type::message, &object_meta()},
                          {2, "spec", Type::message, &spec},
                          {3, "status", Type::ignored}}};
  return m;
}

const Message& daemon_set() {
  static const Message rolling{"RollingUpdateDaemonSet",
                               {{1, "maxUnavailable", Type::int_or_string}, {2, "maxSurge", Type::int_or_string}}};
  static const Message strategy{"DaemonSetUpdateStrategy",
                                {{1, "type", Type::string}, {2, "rollingUpdate", Type::message, &rolling}}};
  static const Message spec{"DaemonSetSpec",
                            {{1, "selector", Type::message, &label_selector()},
                             {2, "template", Type::message, &pod_template()},
                             {3, "updateStrategy", Type::message, &strategy},
                             {4, "minReadySeconds", Type::int32},
                             {6, "revisionHistoryLimit", Type::int32, nullptr, false, k_ptr}}};
  static const Message m{"DaemonSet",
                         {{1, "metadata", Type::message, &object_meta()},
                          {2, "spec", Type::message, &spec},
                          {3, "status", Type::ignored}}};
  return m;
}

const Message& job_spec() {
  static const Message m{"JobSpec",
                         {{1, "parallelism", Type::int32, nullptr, false, k_ptr},
                          {2, "completions", Type::int32, nullptr, false, k_ptr},
                          {3, "activeDeadlineSeconds", Type::int64, nullptr, false, k_ptr},
                          {4, "selector", Type::message, &label_selector()},
                          {5, "manualSelector", Type::boolean, nullptr, false, k_ptr},
                          {6, "template", Type::message, &pod_template()},
                          {7, "backoffLimit", Type::int32, nullptr, false, k_ptr},
                          {8, "ttlSecondsAfterFinished", Type::int32, nullptr, false, k_ptr},
                          {9, "completionMode", Type::string, nullptr, false, k_ptr},
                          {10, "suspend", Type::boolean, nullptr, false, k_ptr},
                          {14, "podReplacementPolicy", Type::string, nullptr, false, k_ptr},
                          {15, "managedBy", Type::string, nullptr, false, k_ptr}}};
  return m;
}

const Message& job() {
  static const Message m{"Job",
                         {{1, "metadata", Type::message, &object_meta()},
                          {2, "spec", Type::message, &job_spec()},
                          {3, "status", Type::ignored}}};
  return m;
}

const Message& cron_job() {
  static const Message tmpl{"JobTemplateSpec",
                            {{1, "metadata", Type::message, &object_meta()}, {2, "spec", Type::message, &job_spec()}}};
  static const Message spec{"CronJobSpec",
                            {{1, "schedule", Type::string},
                             {2, "startingDeadlineSeconds", Type::int64, nullptr, false, k_ptr},
                             {3, "concurrencyPolicy", Type::string},
                             {4, "suspend", Type::boolean, nullptr, false, k_ptr},
                             {5, "jobTemplate", Type::message, &tmpl},
                             {6, "successfulJobsHistoryLimit", Type::int32, nullptr, false, k_ptr},
                             {7, "failedJobsHistoryLimit", Type::int32, nullptr, false, k_ptr},
                             {8, "timeZone", Type::string, nullptr, false, k_ptr}}};
  static const Message m{"CronJob",
                         {{1, "metadata", Type::message, &object_meta()},
                          {2, "spec", Type::message, &spec},
                          {3, "status", Type::ignored}}};
  return m;
}

// ---- rbac.authorization.k8s.io/v1 ----

const Message& policy_rule() {
  static const Message m{"PolicyRule",
                         {{1, "verbs", Type::string, nullptr, k_rep},
                          {2, "apiGroups", Type::string, nullptr, k_rep},
                          {3, "resources", Type::string, nullptr, k_rep},
                          {4, "resourceNames", Type::string, nullptr, k_rep},
                          {5, "nonResourceURLs", Type::string, nullptr, k_rep}}};
  return m;
}

const Message& role() {
  static const Message m{"Role",
                         {{1, "metadata", Type::message, &object_meta()},
                          {2, "rules", Type::message, &policy_rule(), k_rep}}};
  return m;
}

const Message& cluster_role() {
  static const Message aggregation{"AggregationRule",
                                   {{1, "clusterRoleSelectors", Type::message, &label_selector(), k_rep}}};
  static const Message m{"ClusterRole",
                         {{1, "metadata", Type::message, &object_meta()},
                          {2, "rules", Type::message, &policy_rule(), k_rep},
                          {3, "aggregationRule", Type::message, &aggregation}}};
  return m;
}

const Message& role_binding() {
  static const Message subject{"Subject",
                               {{1, "kind", Type::string},
                                {2, "apiGroup", Type::string},
                                {3, "name", Type::string},
                                {4, "namespace", Type::string}}};
  static const Message ref{"RoleRef", {{1, "apiGroup", Type::string}, {2, "kind", Type::string}, {3, "name", Type::string}}};
  static const Message m{"RoleBinding",
                         {{1, "metadata", Type::message, &object_meta()},
                          {2, "subjects", Type::message, &subject, k_rep},
                          {3, "roleRef", Type::message, &ref}}};
  return m;
}

// ---- certificates.k8s.io/v1 ----

const Message& csr() {
  static const Message condition{"CertificateSigningRequestCondition",
                                 {{1, "type", Type::string},
                                  {2, "reason", Type::string},
                                  {3, "message", Type::string},
                                  {4, "lastUpdateTime", Type::time},
                                  {5, "lastTransitionTime", Type::time},
                                  {6, "status", Type::string}}};
  static const Message status{"CertificateSigningRequestStatus",
                              {{1, "conditions", Type::message, &condition, k_rep}, {2, "certificate", Type::bytes}}};
  static const Message spec{"CertificateSigningRequestSpec",
                            {{1, "request", Type::bytes},
                             {2, "username", Type::string},
                             {3, "uid", Type::string},
                             {4, "groups", Type::string, nullptr, k_rep},
                             {5, "usages", Type::string, nullptr, k_rep},
                             {6, "extra", Type::ignored},
                             {7, "signerName", Type::string},
                             {8, "expirationSeconds", Type::int32, nullptr, false, k_ptr}}};
  static const Message m{"CertificateSigningRequest",
                         {{1, "metadata", Type::message, &object_meta()},
                          {2, "spec", Type::message, &spec},
                          {3, "status", Type::message, &status}}};
  return m;
}

// ---- authorization.k8s.io/v1, authentication.k8s.io/v1 ----

const Message& resource_attributes() {
  static const Message m{"ResourceAttributes",
                         {{1, "namespace", Type::string},
                          {2, "verb", Type::string},
                          {3, "group", Type::string},
                          {4, "version", Type::string},
                          {5, "resource", Type::string},
                          {6, "subresource", Type::string},
                          {7, "name", Type::string}}};
  return m;
}

const Message& non_resource_attributes() {
  static const Message m{"NonResourceAttributes", {{1, "path", Type::string}, {2, "verb", Type::string}}};
  return m;
}

const Message& self_subject_access_review() {
  static const Message spec{"SelfSubjectAccessReviewSpec",
                            {{1, "resourceAttributes", Type::message, &resource_attributes()},
                             {2, "nonResourceAttributes", Type::message, &non_resource_attributes()}}};
  static const Message m{"SelfSubjectAccessReview",
                         {{1, "metadata", Type::message, &object_meta()},
                          {2, "spec", Type::message, &spec},
                          {3, "status", Type::ignored}}};
  return m;
}

const Message& subject_access_review() {
  static const Message spec{"SubjectAccessReviewSpec",
                            {{1, "resourceAttributes", Type::message, &resource_attributes()},
                             {2, "nonResourceAttributes", Type::message, &non_resource_attributes()},
                             {3, "user", Type::string},
                             {4, "groups", Type::string, nullptr, k_rep},
                             {5, "extra", Type::ignored},
                             {6, "uid", Type::string}}};
  static const Message m{"SubjectAccessReview",
                         {{1, "metadata", Type::message, &object_meta()},
                          {2, "spec", Type::message, &spec},
                          {3, "status", Type::ignored}}};
  return m;
}

const Message& self_subject_rules_review() {
  static const Message spec{"SelfSubjectRulesReviewSpec", {{1, "namespace", Type::string}}};
  static const Message m{"SelfSubjectRulesReview",
                         {{1, "metadata", Type::message, &object_meta()},
                          {2, "spec", Type::message, &spec},
                          {3, "status", Type::ignored}}};
  return m;
}

const Message& self_subject_review() {
  static const Message m{"SelfSubjectReview", {{1, "metadata", Type::message, &object_meta()}, {2, "status", Type::ignored}}};
  return m;
}

// meta/v1 DeleteOptions, which typed clients send with the group version
// of the resource being deleted ("v1", "apps/v1", ...).
const Message& delete_options() {
  static const Message preconditions{"Preconditions",
                                     {{1, "uid", Type::string, nullptr, false, k_ptr},
                                      {2, "resourceVersion", Type::string, nullptr, false, k_ptr}}};
  static const Message m{"DeleteOptions",
                         {{1, "gracePeriodSeconds", Type::int64, nullptr, false, k_ptr},
                          {2, "preconditions", Type::message, &preconditions},
                          {3, "orphanDependents", Type::boolean, nullptr, false, k_ptr},
                          {4, "propagationPolicy", Type::string, nullptr, false, k_ptr},
                          {5, "dryRun", Type::string, nullptr, k_rep}}};
  return m;
}

const Message* message_for(const std::string& api_version, const std::string& kind) {
  if (kind == "DeleteOptions") return &delete_options();
  struct Entry {
    const char* api_version;
    const char* kind;
    const Message& (*message)();
  };
  static const Entry table[] = {
      {"v1", "Namespace", namespace_},
      {"v1", "ConfigMap", config_map},
      {"v1", "Secret", secret},
      {"v1", "ServiceAccount", service_account},
      {"v1", "Service", service},
      {"v1", "ResourceQuota", resource_quota},
      {"apps/v1", "Deployment", deployment},
      {"apps/v1", "StatefulSet", stateful_set},
      {"apps/v1", "DaemonSet", daemon_set},
      {"batch/v1", "Job", job},
      {"batch/v1", "CronJob", cron_job},
      {"rbac.authorization.k8s.io/v1", "Role", role},
      {"rbac.authorization.k8s.io/v1", "ClusterRole", cluster_role},
      {"rbac.authorization.k8s.io/v1", "RoleBinding", role_binding},
      {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", role_binding},
      {"certificates.k8s.io/v1", "CertificateSigningRequest", csr},
      {"authorization.k8s.io/v1", "SelfSubjectAccessReview", self_subject_access_review},
      {"authorization.k8s.io/v1", "SelfSubjectRulesReview", self_subject_rules_review},
      {"authorization.k8s.io/v1", "SubjectAccessReview", subject_access_review},
      {"authorization.k8s.io/v1", "LocalSubjectAccessReview", subject_access_review},
      {"authentication.k8s.io/v1", "SelfSubjectReview", self_subject_review},
  };
  for (const auto& e : table)
    if (api_version == e.api_version && kind == e.kind) return &e.message();
  return nullptr;
}

// ---- the wire format ----

struct Wire {
  int number = 0;
  int type = 0;         // 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32
  uint64_t value = 0;   // varint
  std::string_view bytes;
};

bool varint(std::string_view& in, uint64_t& out) {
  out = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in.empty()) return false;
    auto b = static_cast<unsigned char>(in[0]);
    in.remove_prefix(1);
    out |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

bool next(std::string_view& in, Wire& w) {
  uint64_t key;
  if (!varint(in, key)) return false;
  w.number = static_cast<int>(key >> 3);
  w.type = static_cast<int>(key & 7);
  switch (w.type) {
    case 0: return varint(in, w.value);
    case 1:
    case 5: {
      size_t n = w.type == 1 ? 8 : 4;
      if (in.size() < n) return false;
      w.bytes = in.substr(0, n);
      in.remove_prefix(n);
      return true;
    }
    case 2: {
      uint64_t len;
      if (!varint(in, len) || len > in.size()) return false;
      w.bytes = in.substr(0, len);
      in.remove_prefix(len);
      return true;
    }
  }
  return false;
}

// Whether a field the table does not describe carries only zero values
// (what Go writes for fields left unset).
bool zero(const Wire& w, int depth = 0) {
  if (w.type == 0) return w.value == 0;
  if (w.type != 2) return w.bytes.find_first_not_of('\0') == std::string_view::npos;
  if (w.bytes.empty()) return true;
  if (depth > 8) return false;
  std::string_view in = w.bytes;
  Wire inner;
  while (!in.empty())
    if (!next(in, inner) || !zero(inner, depth + 1)) return false;
  return true;
}

struct Decoder {
  std::string error;

  bool fail(const Message& m, const Wire& w, const std::string& what) {
    error = "protobuf field " + std::to_string(w.number) + " of " + m.name + ": " + what;
    return false;
  }

  // The fields 1 and 2 of a small message (map entries, Quantity, Time,
  // IntOrString parts).
  bool parts(std::string_view in, std::vector<Wire>& out) {
    Wire w;
    while (!in.empty()) {
      if (!next(in, w)) return false;
      out.push_back(w);
    }
    return true;
  }

  bool scalar(const Field& f, const Wire& w, json& value, bool& present) {
    present = true;
    switch (f.type) {
      case Type::string:
        if (w.type != 2) return false;
        value = std::string(w.bytes);
        present = f.repeated || f.pointer || !w.bytes.empty();
        return true;
      case Type::bytes:
        if (w.type != 2) return false;
        value = base64_encode(w.bytes);
        present = f.repeated || f.pointer || !w.bytes.empty();
        return true;
      case Type::int32:
        if (w.type != 0) return false;
        value = static_cast<int32_t>(w.value);
        present = f.repeated || f.pointer || w.value != 0;
        return true;
      case Type::int64:
        if (w.type != 0) return false;
        value = static_cast<int64_t>(w.value);
        present = f.repeated || f.pointer || w.value != 0;
        return true;
      case Type::boolean:
        if (w.type != 0) return false;
        value = w.value != 0;
        present = f.repeated || f.pointer || w.value != 0;
        return true;
      default: return false;
    }
  }

  bool decode(std::string_view in, const Message& m, json& out, int depth = 0) {
    if (depth > 32) {
      error = "protobuf body nested too deeply";
      return false;
    }
    if (!out.is_object()) out = json::object();
    Wire w;
    while (!in.empty()) {
      if (!next(in, w)) {
        error = std::string("cannot decode the protobuf encoding of ") + m.name;
        return false;
      }
      const Field* f = m.find(w.number);
      if (!f) {
        if (zero(w)) continue;
        return fail(m, w, "not supported by the simulator; send JSON");
      }
      json value;
      bool present = true;
      switch (f->type) {
        case Type::ignored: continue;
        case Type::message:
          if (w.type != 2) return fail(m, w, "wrong wire type");
          if (!decode(w.bytes, *f->message, value, depth + 1)) return false;
          break;
        case Type::string_map:
        case Type::bytes_map:
        case Type::quantity_map: {
          std::vector<Wire> entry;
          if (w.type != 2 || !parts(w.bytes, entry)) return fail(m, w, "bad map entry");
          std::string key, val;
          for (const auto& e : entry) {
            if (e.type != 2) continue;
            if (e.number == 1) key = std::string(e.bytes);
            if (e.number == 2) val = std::string(e.bytes);
          }
          if (f->type == Type::quantity_map) {
            std::vector<Wire> q;
            if (!parts(val, q)) return fail(m, w, "bad quantity");
            val.clear();
            for (const auto& p : q)
              if (p.number == 1 && p.type == 2) val = std::string(p.bytes);
          }
          out[f->name][key] = f->type == Type::bytes_map ? base64_encode(val) : val;
          continue;
        }
        case Type::int_or_string: {
          std::vector<Wire> p;
          if (w.type != 2 || !parts(w.bytes, p)) return fail(m, w, "bad IntOrString");
          int64_t type = 0, int_val = 0;
          std::string str_val;
          for (const auto& e : p) {
            if (e.number == 1 && e.type == 0) type = static_cast<int64_t>(e.value);
            if (e.number == 2 && e.type == 0) int_val = static_cast<int32_t>(e.value);
            if (e.number == 3 && e.type == 2) str_val = std::string(e.bytes);
          }
          value = type == 1 ? json(str_val) : json(int_val);
          break;
        }
        case Type::time: {
          std::vector<Wire> p;
          if (w.type != 2 || !parts(w.bytes, p)) return fail(m, w, "bad Time");
          int64_t seconds = 0;
          for (const auto& e : p)
            if (e.number == 1 && e.type == 0) seconds = static_cast<int64_t>(e.value);
          if (seconds == 0) continue;
          std::time_t t = static_cast<std::time_t>(seconds);
          std::tm tm{};
          gmtime_r(&t, &tm);
          char buf[32];
          std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
          value = buf;
          break;
        }
        default:
          if (!scalar(*f, w, value, present)) return fail(m, w, "wrong wire type");
          break;
      }
      if (!present) continue;
      if (f->repeated)
        out[f->name].push_back(std::move(value));
      else
        out[f->name] = std::move(value);
    }
    return true;
  }
};

}  // namespace

bool decode_object_protobuf(const std::string& body, json& out, std::string& error) {
  if (body.size() < 4 || body.compare(0, 4, std::string("k8s\0", 4)) != 0) {
    error = "protobuf body without the k8s envelope";
    return false;
  }
  // runtime.Unknown: typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2.
  std::string_view in = std::string_view(body).substr(4);
  std::string api_version, kind;
  std::string_view raw;
  Wire w;
  while (!in.empty()) {
    if (!next(in, w)) {
      error = "cannot decode the protobuf body";
      return false;
    }
    if (w.number == 1 && w.type == 2) {
      std::string_view tm = w.bytes;
      Wire t;
      while (!tm.empty() && next(tm, t)) {
        if (t.number == 1 && t.type == 2) api_version = std::string(t.bytes);
        if (t.number == 2 && t.type == 2) kind = std::string(t.bytes);
      }
    } else if (w.number == 2 && w.type == 2) {
      raw = w.bytes;
    }
  }
  const Message* m = message_for(api_version, kind);
  if (!m) {
    error = "the simulator cannot read protobuf bodies of " + (kind.empty() ? std::string("this object") : kind) +
            " (" + api_version + "); send JSON";
    return false;
  }
  Decoder d;
  json obj = json::object();
  if (!d.decode(raw, *m, obj)) {
    error = d.error;
    return false;
  }
  out = json{{"apiVersion", api_version}, {"kind", kind}};
  for (auto& [k, v] : obj.items()) out[k] = std::move(v);
  return true;
}

}  // namespace emco::sim::detail
