// libFuzzer target: the kubeconfig parser the kube target uses, with inline (-data) and file
// certificates. Relative file references resolve against tests/fuzz/fixtures (a CA, a client
// certificate and key, a token). For the current context and every named one: the access is
// resolved (files read), validated (certificates and keys parsed, key matches certificate),
// flattened, and the flattened text must parse and resolve again to the same server and
// credentials; registration's prepare_kubeconfig runs on the text too. Only emco::Error may
// leave. Built by scripts/fuzz.sh; not part of the CMake build.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/util/error.hpp"
#include "plugins/targets/kube/kubeconfig.hpp"

#ifndef EMCO_SOURCE_DIR
#error "EMCO_SOURCE_DIR names the checkout (tests/fuzz/CMakeLists.txt)"
#endif

namespace {

using namespace emco::kube;

const std::string k_fixtures = EMCO_SOURCE_DIR "/tests/fuzz/fixtures";

void check(bool ok) {
  if (!ok) std::abort();
}

void each_context(const Kubeconfig& config, const std::string& context) {
  ClusterAccess access;
  try {
    access = resolve_access(config, context, "fuzz");
  } catch (const emco::Error&) {
    return;
  }
  try {
    (void)validate_access(access);
  } catch (const emco::Error&) {
  }
  std::string flat;
  try {
    flat = flatten_kubeconfig(config, context);
  } catch (const emco::Error&) {
    return;
  }
  // What registration stores must read back as the same access: an error here is a finding.
  ClusterAccess back;
  try {
    back = resolve_access(parse_kubeconfig(flat, "<flattened>", {}), {}, "fuzz");
  } catch (const emco::Error&) {
    std::abort();
  }
  check(back.server == access.server && back.ca_pem == access.ca_pem && back.token == access.token &&
        back.client_cert_pem == access.client_cert_pem && back.client_key_pem == access.client_key_pem &&
        back.username == access.username && back.password == access.password && back.ns == access.ns &&
        back.insecure_skip_tls_verify == access.insecure_skip_tls_verify);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  Kubeconfig config;
  try {
    config = parse_kubeconfig(text, "fuzz.kubeconfig", k_fixtures);
  } catch (const emco::Error&) {
    return 0;
  }
  (void)merge_kubeconfigs({config, config});
  each_context(config, {});
  for (const auto& [name, context] : config.contexts) each_context(config, name);
  try {
    (void)prepare_kubeconfig(text, k_fixtures + "/kubeconfig", "fuzz");
  } catch (const emco::Error&) {
  }
  return 0;
}
