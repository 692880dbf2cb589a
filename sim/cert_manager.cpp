// The part of cert-manager a ca-certs enrollment meets: its approver (every
// CertificateRequest is approved, as cert-manager's default approver does)
// and its CA issuer, which signs the request with the CA in the issuer's
// secret. A request whose issuer or secret is missing stays Ready=False
// (Pending) until an Issuer, ClusterIssuer or Secret is written, then it is
// signed if it now can be; a signed one keeps its status.

#include "core/util/base64.hpp"
#include "core/util/go_duration.hpp"
#include "core/util/strings.hpp"
#include "sim/cluster.hpp"
#include "sim/tls.hpp"

namespace emco::sim::detail {

using nlohmann::json;

namespace {

json condition(const std::string& type, const std::string& status, const std::string& reason,
               const std::string& message, const std::string& time) {
  return {{"type", type}, {"status", status}, {"reason", reason}, {"message", message}, {"lastTransitionTime", time}};
}

// cert-manager's default duration (90 days).
constexpr long k_default_seconds = 2160L * 3600;

}  // namespace

void Cluster::issue_certificate_request(const json* old, json& obj) {
  if (old && old->contains("/status/certificate"_json_pointer)) {
    obj["status"] = (*old)["status"];
    return;
  }
  const std::string t = now();
  json approved = condition("Approved", "True", "cert-manager.io", "Certificate request has been approved by cert-manager.io", t);
  auto pending = [&](const std::string& reason, const std::string& message) {
    obj["status"] = {{"conditions", {approved, condition("Ready", "False", reason, message, t)}}};
  };
  const json ref = obj.value("/spec/issuerRef"_json_pointer, json::object());
  const std::string kind = ref.value("kind", "Issuer"), name = ref.value("name", "");
  const std::string ns = obj["metadata"].value("namespace", "");
  const TypeInfo* issuer_type = find_kind("cert-manager.io", "v1", kind);
  json* issuer = issuer_type ? find(*issuer_type, (kind == "ClusterIssuer" ? "" : ns) + "/" + name) : nullptr;
  if (!issuer) {
    pending("Pending", "Referenced \"" + kind + "\" not found: " + to_lower(kind) + ".cert-manager.io \"" + name + "\" not found");
    return;
  }
  const std::string secret_name = issuer->value("/spec/ca/secretName"_json_pointer, std::string());
  if (secret_name.empty()) {
    pending("Pending", "issuer " + name + " is not a CA issuer");
    return;
  }
  // A ClusterIssuer's secret lives in the cluster resource namespace.
  const std::string secret_ns = kind == "ClusterIssuer" ? "cert-manager" : ns;
  const TypeInfo* secret_type = find_kind("", "v1", "Secret");
  json* secret = secret_type ? find(*secret_type, secret_ns + "/" + secret_name) : nullptr;
  auto data = [&](const char* key) {
    const json* d = secret && secret->contains("data") ? &(*secret)["data"] : nullptr;
    std::string b64 = d && d->is_object() ? d->value(key, std::string()) : "";
    return base64_decode(b64, {.lenient = true}).value_or("");
  };
  const std::string ca_cert = data("tls.crt"), ca_key = data("tls.key");
  if (ca_cert.empty() || ca_key.empty()) {
    pending("Pending", "Referenced secret " + secret_ns + "/" + secret_name + " not found or without tls.crt and tls.key");
    return;
  }
  long seconds = k_default_seconds;
  std::int64_t ns_duration = 0;
  if (parse_go_duration(obj.value("/spec/duration"_json_pointer, std::string()), ns_duration) && ns_duration > 0)
    seconds = static_cast<long>(ns_duration / 1000000000LL);
  std::string error;
  auto csr = base64_decode(obj.value("/spec/request"_json_pointer, std::string()), {.lenient = true});
  std::string cert = sign_with_ca(csr.value_or(""), ca_cert, ca_key, obj.value("/spec/isCA"_json_pointer, false), seconds, error);
  if (cert.empty()) {
    obj["status"] = {{"conditions", {approved, condition("Ready", "False", "Failed", error, t)}}, {"failureTime", t}};
    return;
  }
  // status.ca: the issuing CA's certificate (the top of its chain).
  obj["status"] = {{"conditions", {approved, condition("Ready", "True", "Issued", "Certificate fetched from issuer successfully", t)}},
                   {"certificate", base64_encode(cert)},
                   {"ca", base64_encode(ca_cert)}};
}

void Cluster::requeue_certificate_requests() {
  const TypeInfo* crs = find_kind("cert-manager.io", "v1", "CertificateRequest");
  if (!crs) return;
  auto it = m_objects.find(crs->store_key());
  if (it == m_objects.end()) return;
  for (const auto& [key, cr] : it->second)
    if (!cr.contains("/status/certificate"_json_pointer)) enqueue(*crs, key);
}

void Cluster::reconcile_certificate_request(const TypeInfo& info, const std::string& key) {
  json* live = find(info, key);
  if (!live || live->contains("/status/certificate"_json_pointer)) return;
  json updated = *live;
  issue_certificate_request(live, updated);
  controller_write(info, key, std::move(updated), k8s::Scope::status);
}

}  // namespace emco::sim::detail
