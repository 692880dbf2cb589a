#pragma once
// Kubernetes protobuf request bodies (internal to sim). kubectl's
// typed clients (`kubectl create deployment|job|cronjob|service|role|...`,
// `kubectl auth can-i|whoami`, `kubectl certificate approve`) encode
// request bodies as application/vnd.kubernetes.protobuf: the "k8s\0"
// envelope around a runtime.Unknown holding the object's TypeMeta and its
// protobuf encoding.

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace emco::sim::detail {

// Decodes an object into its JSON form. Known kinds: Namespace, ConfigMap,
// Secret, ServiceAccount, Service, ResourceQuota, Deployment, StatefulSet,
// DaemonSet, Job, CronJob, Role, ClusterRole, RoleBinding,
// ClusterRoleBinding, CertificateSigningRequest, the access reviews, and
// DeleteOptions (under any apiVersion, as typed clients send it).
// Zero values of non-pointer Go fields (which protobuf always carries) are
// left out as the JSON encoding's omitempty would; status is ignored except
// for CertificateSigningRequests. Returns false with `error` set when the
// body does not decode, the kind is not known, or a field the simulator does
// not know carries a value (rather than dropping it silently).
bool decode_object_protobuf(const std::string& body, nlohmann::json& out, std::string& error);

}  // namespace emco::sim::detail
