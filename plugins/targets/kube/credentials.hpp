#pragma once
// Credentials for requests: static ones from the kubeconfig, or obtained from
// an exec credential plugin (client.authentication.k8s.io v1/v1beta1) and
// cached until their expirationTimestamp.
//
// The plugin runs without a shell (posix_spawn with pipes), with the
// kubeconfig's args and env added to ours and KUBERNETES_EXEC_INFO set, stdin
// from /dev/null, under a hard time limit after which its whole process group
// is killed. Failures throw Error(unreachable) naming the cluster; the
// plugin's stderr (last line, shortened) is quoted, its stdout never is.

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "plugins/targets/kube/kubeconfig.hpp"

namespace emco::kube {

struct Credentials {
  std::string token;  // Authorization: Bearer
  std::string username;
  std::string password;
  std::string client_cert_pem;
  std::string client_key_pem;
  // When they stop being valid (exec credential expiry); nullopt: no known expiry.
  std::optional<std::chrono::system_clock::time_point> expiry;
};

// Runs the plugin once. `server` and `ca_pem` go into KUBERNETES_EXEC_INFO
// when the config asks for provideClusterInfo. Throws Error(unreachable) on a
// spawn failure, non-zero exit, time-out, or output that is not a valid
// ExecCredential with a token or a certificate/key pair.
Credentials run_exec_plugin(const ExecConfig& exec, const std::string& cluster_label, const std::string& server,
                            const std::string& ca_pem, std::chrono::milliseconds time_limit);

// Reads what a plugin printed: an ExecCredential JSON object whose status has
// a token or a client certificate and key (PEM, the certificate belonging to
// the key), and optionally an RFC 3339 expirationTimestamp. Whatever the
// output's shape, anything else throws Error(unreachable) "<who> <what is
// wrong>" with `hint`; the output itself is never quoted (it holds secrets).
Credentials parse_exec_credential(std::string_view output, const std::string& who, const std::string& hint);

// Thread-safe source of the credentials for one cluster.
class CredentialSource {
public:
  explicit CredentialSource(const ClusterAccess& access,
                            std::chrono::milliseconds exec_time_limit = std::chrono::seconds(30));

  // Current credentials; runs the exec plugin when there is one and nothing
  // valid is cached (an expiry within the next 10 s counts as expired).
  Credentials get();

  // Drops cached exec credentials (after a 401: they may have been revoked).
  // Returns whether there was anything to drop, i.e. whether retrying can help.
  bool invalidate();

  bool uses_exec() const { return m_access.exec.has_value(); }

private:
  ClusterAccess m_access;
  std::chrono::milliseconds m_time_limit;
  std::mutex m_mutex;
  std::optional<Credentials> m_cached;
};

}  // namespace emco::kube
