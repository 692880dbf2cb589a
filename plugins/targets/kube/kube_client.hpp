#pragma once
// KubeClient: one Kubernetes API server (one cluster), spoken to over an
// HttpClient with the credentials of one kubeconfig context.
//
// - Discovery is cached per client: aggregated discovery (apidiscovery.k8s.io
//   v2/v2beta1) when the server offers it, legacy /api + /apis otherwise
//   (group-versions then fetched lazily). A GVK that is not found triggers one
//   rediscovery (a CRD may have been added).
// - Writes use server-side apply (fieldManager=emco, force=true).
// - Every failure is thrown as KubeError: an emco::Error with a category a
//   user (or the sync engine's retry logic) can act on. Messages name the
//   cluster and never contain credentials.
// - 429 and 503 are retried after Retry-After (bounded); a 401 with exec
//   credentials re-runs the plugin once.
// Thread-safe: one worker per cluster is the intended use, several work.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/util/error.hpp"
#include "plugins/targets/kube/credentials.hpp"
#include "plugins/targets/kube/http.hpp"
#include "plugins/targets/kube/kubeconfig.hpp"

namespace emco::kube {

struct Gvk {
  std::string group;  // "" for the core group
  std::string version;
  std::string kind;

  // "apps/v1" or "v1".
  std::string api_version() const;
  // From an object's apiVersion and kind.
  static Gvk of(std::string_view api_version, std::string kind);
  auto operator<=>(const Gvk&) const = default;
};

// What discovery knows about a kind.
struct ResourceInfo {
  Gvk gvk;
  std::string plural;  // "deployments"
  bool namespaced = true;
};

enum class KubeErrorCategory {
  unreachable,   // DNS, refused, timeout, proxy: "did you specify the right host or port?"
  tls,           // certificate verification or handshake failure
  unauthorized,  // 401
  forbidden,     // 403
  not_found,     // 404, or a kind the server does not serve
  conflict,      // 409
  invalid,       // 400, 422 (with the API's causes)
  server_error,  // 5xx, 429 after retries
  terminating,   // the namespace is being deleted (Terminating): retried until it is gone
  other,
};

class KubeError : public Error {
public:
  KubeError(KubeErrorCategory category, int http_status, std::string message, std::string hint = {});
  KubeErrorCategory category() const { return m_category; }
  int http_status() const { return m_http_status; }  // 0 for transport failures
  // Worth retrying later without any change by the user.
  bool transient() const;

private:
  KubeErrorCategory m_category;
  int m_http_status;
};

enum class Propagation { background, foreground, orphan };

struct KubeClientOptions {
  std::chrono::milliseconds request_timeout{30000};
  std::chrono::milliseconds connect_timeout{5000};
  int max_retries = 3;                                // for 429/503
  std::chrono::milliseconds max_retry_wait{10000};    // cap on one Retry-After
  std::chrono::milliseconds establish_timeout{30000}; // CRD Established
  std::chrono::milliseconds exec_time_limit{30000};   // exec credential plugin
  // Map built-in kinds (core/k8s's table of a v1.32 server) to URLs without
  // discovery; discovery then runs only for other kinds, or when the server
  // answers that a built-in path does not exist (older or trimmed servers).
  bool builtin_kinds = true;
  std::string field_manager = "emco";
  std::string user_agent = "emco/0.1";
  // Sleeps between retries and polls; tests replace it.
  std::function<void(std::chrono::milliseconds)> sleep;
};

using HttpClientFactory = std::function<std::unique_ptr<HttpClient>(const TransportOptions&)>;

struct WriteResult {
  bool created = false;  // 201 (new object) rather than 200
  std::string resource_version;
  std::string uid;
  long long generation = 0;
};

class KubeClient {
public:
  // `factory` makes the transport (default: libcurl).
  explicit KubeClient(ClusterAccess access, KubeClientOptions options = {}, HttpClientFactory factory = {});
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  const ClusterAccess& access() const { return m_access; }
  const std::string& label() const { return m_access.label; }

  // Sends a request to `path` (starting with '/', query included) with auth
  // headers, Retry-After handling and the 401 exec refresh. Returns any HTTP
  // response; throws KubeError only for transport failures.
  HttpResponse send(const std::string& method, const std::string& path, const std::string& body = {},
                    const std::string& content_type = {}, const std::string& accept = "application/json",
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  // GET /version with `timeout`; the parsed body.
  nlohmann::json server_version(std::chrono::milliseconds timeout);

  // Discovery (cached). Throws KubeError(not_found) when the server does not
  // serve `gvk`, even after a rediscovery. `from_table` (optional) tells
  // whether the answer came from the built-in table rather than discovery.
  ResourceInfo resource_for(const Gvk& gvk, bool* from_table = nullptr);
  void invalidate_discovery();
  bool discovery_is_aggregated();  // runs discovery if needed

  // Path of an object or (empty name) its collection; `ns` is ignored for
  // cluster-scoped kinds.
  std::string path_for(const ResourceInfo& info, const std::string& ns, const std::string& name) const;

  // Server-side apply of `object` (apiVersion, kind, metadata.name required).
  // A namespaced object without namespace goes to `default_ns` (the context's
  // namespace, else "default", when that is empty). A missing namespace is
  // created and the apply retried once.
  WriteResult apply(const nlohmann::json& object, const std::string& default_ns);

  // POST unless it exists: created=false when the server answered
  // AlreadyExists (the live object is left untouched).
  WriteResult create_if_absent(const nlohmann::json& object, const std::string& default_ns);

  // Ensures namespace `ns` exists (create-if-absent; remembered per client).
  void ensure_namespace(const std::string& ns);

  // Deletes; false when it did not exist (also when the cluster does not serve
  // its kind: such an object cannot exist).
  bool remove(const Gvk& gvk, const std::string& ns, const std::string& name,
              Propagation propagation = Propagation::background);

  // The live object, or a null json when it does not exist.
  nlohmann::json get(const Gvk& gvk, const std::string& ns, const std::string& name);

  // Every object of a kind (in `ns`, or all namespaces when empty) matching a
  // label selector ("a=b,c!=d"); follows `continue` tokens.
  std::vector<nlohmann::json> list(const Gvk& gvk, const std::string& ns, const std::string& label_selector = {});

  // Adds an Approved condition with `reason` and `message` to a
  // CertificateSigningRequest (PUT .../approval). No-op when it is approved already.
  void approve_csr(const std::string& name, const std::string& message = "approved by emco",
                   const std::string& reason = "EmcoApproved");

  // Polls a CRD until its Established condition is True; then rediscovers.
  // Throws KubeError(other) after options.establish_timeout.
  void wait_established(const std::string& crd_name);

  HttpStats stats() const;

  // The credentials requests carry now (runs an exec plugin if needed); for
  // reporting their expiry.
  Credentials credentials() { return m_credentials.get(); }

  // Throws the KubeError that `response` (a non-2xx answer) stands for;
  // `what` names the object or request ("deployments.apps 'web'").
  [[noreturn]] void raise(const HttpResponse& response, const std::string& what) const;

private:
  std::shared_ptr<HttpClient> transport(const Credentials& creds);
  void discover_locked();
  // After a 404 on a path taken from the built-in table whose Status names no
  // object (the path itself is unknown): discovers, and says to retry.
  bool rediscover_if_unserved(bool from_table, const HttpResponse& response);
  void fetch_group_version_locked(const std::string& group_version);
  void sleep_for(std::chrono::milliseconds d) const;

  ClusterAccess m_access;
  KubeClientOptions m_options;
  HttpClientFactory m_factory;
  CredentialSource m_credentials;

  mutable std::mutex m_transport_mutex;
  std::shared_ptr<HttpClient> m_transport;  // shared: a request in flight keeps a replaced one alive
  std::string m_transport_cert;  // client certificate the transport was built with
  HttpStats m_retired_stats;     // transports replaced after an exec certificate rotation

  std::mutex m_discovery_mutex;
  bool m_discovered = false;
  bool m_aggregated = false;
  std::map<Gvk, ResourceInfo> m_resources;
  std::set<std::string> m_legacy_group_versions;  // listed by /api and /apis
  std::set<std::string> m_fetched_group_versions;

  std::mutex m_ns_mutex;
  std::set<std::string> m_known_namespaces;
};

// What a live CertificateSigningRequest (as the cluster answered it) says:
// the issued certificate (status.certificate, base64 as the API carries it,
// checked to decode to a PEM certificate) once signed, empty while it is not.
// Throws Error(failed) naming `what` when a Denied or Failed condition is True
// or the certificate is not one; any JSON shape is read without throwing
// anything else.
std::string signed_certificate(const nlohmann::json& live_csr, const std::string& what);

}  // namespace emco::kube
