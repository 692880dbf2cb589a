// libFuzzer target: live objects as a cluster answers them, where emco reads their status to
// decide what happens next: a CertificateSigningRequest for a logical cloud's user
// (`kube::signed_certificate`: conditions, the base64 PEM certificate checked with OpenSSL), a
// cert-manager CertificateRequest for ca-certs enrollment (`ca_certs::issued_by`), and
// readiness (`kube::evaluate_readiness`) of the same object. The input is the object's JSON
// text; what does not parse as JSON is dropped, as the kube client refuses it before. Only
// emco::Error may leave. Built by scripts/fuzz.sh; not part of the CMake build.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "plugins/ca_certs/ca_certs.hpp"
#include "plugins/targets/kube/kube_client.hpp"
#include "plugins/targets/kube/readiness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json live = nlohmann::json::parse(data, data + size, nullptr, false);
  if (live.is_discarded()) return 0;
  try {
    (void)emco::kube::signed_certificate(live, "certificatesigningrequest 'fuzz'");
  } catch (const emco::Error&) {
  }
  std::string problem;
  auto issued = emco::plugins::ca_certs::issued_by(live, problem);
  // Issued means signed with both halves present, and no refusal beside it.
  if (issued && (issued->certificate.empty() || issued->ca.empty() || !problem.empty())) std::abort();
  (void)emco::kube::evaluate_readiness(live);
  return 0;
}
