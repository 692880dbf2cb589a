#pragma once
// The few Kubernetes protobuf bodies kubectl sends with no JSON choice
// (internal to plugins/sim). kubectl's typed clients (e.g. `kubectl
// certificate approve`) encode request bodies as
// application/vnd.kubernetes.protobuf: the "k8s\0" envelope around a
// runtime.Unknown holding the object.

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace emco::sim::detail {

// A CertificateSigningRequest's name, resourceVersion and status.conditions
// as JSON. Returns false with `error` set when the body does not decode.
bool decode_csr_protobuf(const std::string& body, nlohmann::json& out, std::string& error);

// A whole object of the kinds `kubectl create namespace|configmap|secret`
// send: Namespace, ConfigMap, Secret (metadata name, generateName,
// namespace, labels, annotations, finalizers, resourceVersion and the kind's
// fields). Any other kind: false with `error` naming it.
bool decode_object_protobuf(const std::string& body, nlohmann::json& out, std::string& error);

}  // namespace emco::sim::detail
