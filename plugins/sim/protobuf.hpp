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

}  // namespace emco::sim::detail
