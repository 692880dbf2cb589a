// libFuzzer target: what an exec credential plugin prints on stdout, as the kube target reads
// it (`parse_exec_credential`: the ExecCredential object, its token or client certificate and
// key checked with OpenSSL, the RFC 3339 expiry). The input is the plugin's whole output.
// Only emco::Error may leave, and its message never quotes the output (which holds the
// credentials): every message is one of a few fixed sentences after the plugin's name, so it
// is one short line whatever the input. Built by
// scripts/fuzz.sh; not part of the CMake build.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/util/error.hpp"
#include "plugins/targets/kube/credentials.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string output(reinterpret_cast<const char*>(data), size);
  try {
    const emco::kube::Credentials creds = emco::kube::parse_exec_credential(output, "plugin 'fuzz'", "hint");
    // A success carries a token or both halves of a certificate pair.
    if (creds.token.empty() && (creds.client_cert_pem.empty() || creds.client_key_pem.empty())) std::abort();
  } catch (const emco::Error& e) {
    const std::string& m = e.message();
    if (m.rfind("plugin 'fuzz' ", 0) != 0 || m.size() > 200 || m.find('\n') != std::string::npos) std::abort();
  }
  return 0;
}
