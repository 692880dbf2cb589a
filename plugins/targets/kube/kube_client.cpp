#include "plugins/targets/kube/kube_client.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <thread>

#include "core/k8s/fields.hpp"
#include "core/k8s/resources.hpp"
#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "core/util/printable.hpp"
#include "core/util/strings.hpp"
#include "core/util/utf8.hpp"
#include "plugins/targets/kube/object_metadata.hpp"
#include "plugins/targets/kube/pem.hpp"

namespace emco::kube {
namespace {

using k8s::array_field;
using k8s::str_field;
using json = nlohmann::json;
using std::chrono::milliseconds;

constexpr const char* k_accept_discovery =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

ErrorKind kind_for(KubeErrorCategory c) {
  switch (c) {
    case KubeErrorCategory::unreachable:
    case KubeErrorCategory::tls:
    case KubeErrorCategory::unauthorized:
    case KubeErrorCategory::forbidden: return ErrorKind::unreachable;
    case KubeErrorCategory::not_found: return ErrorKind::not_found;
    case KubeErrorCategory::conflict: return ErrorKind::conflict;
    case KubeErrorCategory::invalid: return ErrorKind::invalid;
    case KubeErrorCategory::server_error:
    case KubeErrorCategory::terminating:
    case KubeErrorCategory::other: return ErrorKind::failed;
  }
  return ErrorKind::failed;
}

// Percent-encodes a path segment or query value (RFC 3986 unreserved kept).
std::string escape(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == ':') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}


// What a server wrote (a Status message, a header) as messages show it.
constexpr std::size_t k_max_server_text = 1024;
constexpr std::size_t k_max_causes = 10;

// "deployments.apps 'web'" / "namespaces 'ns'" for messages.
std::string describe(const ResourceInfo& info, const std::string& ns, const std::string& name) {
  std::string what = info.plural + (info.gvk.group.empty() ? "" : "." + info.gvk.group) + " '" + name + "'";
  if (info.namespaced && !ns.empty()) what += " in namespace '" + ns + "'";
  return what;
}

milliseconds retry_after(const HttpResponse& r, milliseconds cap) {
  std::string v = trim(r.header("retry-after"));
  long seconds = 1;
  if (!v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }) && v.size() < 7)
    seconds = std::stol(v);
  return std::min<milliseconds>(std::chrono::seconds(seconds), cap);
}

}  // namespace

std::string Gvk::api_version() const { return group.empty() ? version : group + "/" + version; }

Gvk Gvk::of(std::string_view api_version, std::string kind) {
  Gvk g;
  auto slash = api_version.find('/');
  if (slash == std::string_view::npos) {
    g.version = std::string(api_version);
  } else {
    g.group = std::string(api_version.substr(0, slash));
    g.version = std::string(api_version.substr(slash + 1));
  }
  g.kind = std::move(kind);
  return g;
}

KubeError::KubeError(KubeErrorCategory category, int http_status, std::string message, std::string hint)
    : Error(kind_for(category), std::move(message), std::move(hint)),
      m_category(category),
      m_http_status(http_status) {}

bool KubeError::transient() const {
  return m_category == KubeErrorCategory::unreachable || m_category == KubeErrorCategory::server_error ||
         m_category == KubeErrorCategory::terminating;
}

KubeClient::KubeClient(ClusterAccess access, KubeClientOptions options, HttpClientFactory factory)
    : m_access(std::move(access)),
      m_options(std::move(options)),
      m_factory(factory ? std::move(factory) : HttpClientFactory(make_curl_client)),
      m_credentials(m_access, m_options.exec_time_limit) {}

KubeClient::~KubeClient() = default;

void KubeClient::sleep_for(milliseconds d) const {
  if (m_options.sleep) m_options.sleep(d);
  else std::this_thread::sleep_for(d);
}

std::shared_ptr<HttpClient> KubeClient::transport(const Credentials& creds) {
  std::lock_guard lock(m_transport_mutex);
  // An exec plugin may hand out a new client certificate: the TLS identity is
  // part of the transport, so build a new one (new connections) then.
  if (!m_transport || m_transport_cert != creds.client_cert_pem) {
    if (m_transport) {
      HttpStats old = m_transport->stats();
      m_retired_stats.requests += old.requests;
      m_retired_stats.connections += old.connections;
    }
    TransportOptions t;
    t.tls.ca_pem = m_access.ca_pem;
    t.tls.insecure_skip_verify = m_access.insecure_skip_tls_verify;
    t.tls.server_name = m_access.tls_server_name;
    t.tls.client_cert_pem = creds.client_cert_pem;
    t.tls.client_key_pem = creds.client_key_pem;
    t.proxy_url = m_access.proxy_url;
    t.connect_timeout = m_options.connect_timeout;
    m_transport = m_factory(t);
    m_transport_cert = creds.client_cert_pem;
  }
  return m_transport;
}

HttpStats KubeClient::stats() const {
  std::lock_guard lock(m_transport_mutex);
  HttpStats s = m_retired_stats;
  if (m_transport) {
    HttpStats t = m_transport->stats();
    s.requests += t.requests;
    s.connections += t.connections;
  }
  return s;
}

HttpResponse KubeClient::send(const std::string& method, const std::string& path, const std::string& body,
                              const std::string& content_type, const std::string& accept, milliseconds timeout) {
  bool refreshed = false;
  for (int attempt = 0;; ++attempt) {
    Credentials creds = m_credentials.get();
    HttpRequest req;
    req.method = method;
    req.url = m_access.server + path;
    req.body = body;
    req.timeout = timeout.count() > 0 ? timeout : m_options.request_timeout;
    if (timeout.count() > 0) req.connect_timeout = std::min(timeout, m_options.connect_timeout);
    req.headers.emplace_back("Accept", accept);
    req.headers.emplace_back("User-Agent", m_options.user_agent);
    if (!content_type.empty()) req.headers.emplace_back("Content-Type", content_type);
    if (!creds.token.empty()) {
      req.headers.emplace_back("Authorization", "Bearer " + creds.token);
    } else if (!creds.username.empty()) {
      req.headers.emplace_back("Authorization", "Basic " + base64_encode(creds.username + ":" + creds.password));
    }
    HttpResponse r = transport(creds)->send(req);
    if (r.failure != TransportFailure::none) {
      const std::string where = "cluster '" + m_access.label + "': ";
      switch (r.failure) {
        case TransportFailure::tls_verify:
          throw KubeError(KubeErrorCategory::tls, 0,
                          where + "TLS verification of '" + m_access.server + "' failed: " + r.failure_detail,
                          "check certificate-authority(-data) and the server name in the kubeconfig");
        case TransportFailure::tls:
          throw KubeError(KubeErrorCategory::tls, 0,
                          where + "TLS handshake with '" + m_access.server + "' failed: " + r.failure_detail,
                          "check the client certificate and key in the kubeconfig");
        case TransportFailure::resolve:
          throw KubeError(KubeErrorCategory::unreachable, 0,
                          where + "cannot resolve the host of '" + m_access.server + "': " + r.failure_detail,
                          "did you specify the right host or port?");
        case TransportFailure::timeout:
          throw KubeError(KubeErrorCategory::unreachable, 0,
                          where + "request to '" + m_access.server + "' timed out: " + r.failure_detail,
                          "did you specify the right host or port?");
        case TransportFailure::broken:
          throw KubeError(KubeErrorCategory::unreachable, 0,
                          where + "the answer of '" + m_access.server + "' was cut off or is not HTTP: " + r.failure_detail,
                          "is '" + m_access.server + "' a Kubernetes API server? emco retries later");
        case TransportFailure::too_large:
          throw KubeError(KubeErrorCategory::other, 0,
                          where + method + " " + path + ": not read on: " + r.failure_detail,
                          "is '" + m_access.server + "' a Kubernetes API server?");
        case TransportFailure::proxy:
          throw KubeError(KubeErrorCategory::unreachable, 0,
                          where + "proxy '" + m_access.proxy_url + "' failed: " + r.failure_detail,
                          "check proxy-url in the kubeconfig");
        default:
          throw KubeError(KubeErrorCategory::unreachable, 0,
                          where + "cannot connect to '" + m_access.server + "': " + r.failure_detail,
                          "did you specify the right host or port?");
      }
    }
    if ((r.status == 429 || r.status == 503) && attempt < m_options.max_retries) {
      sleep_for(retry_after(r, m_options.max_retry_wait));
      continue;
    }
    if (r.status == 401 && !refreshed && m_credentials.invalidate()) {
      refreshed = true;
      continue;
    }
    return r;
  }
}

void KubeClient::raise(const HttpResponse& r, const std::string& what) const {
  const std::string where = "cluster '" + m_access.label + "': ";
  json status = json::parse(r.body, nullptr, false);
  // What the server wrote, as the message shows it: without the request's
  // credentials (a server or a proxy's error page may echo them), printable, bounded.
  auto server_text = [this](std::string_view text, std::size_t max_bytes) {
    return printable(scrub(std::string(text), {m_access.token, m_access.password}), max_bytes);
  };
  std::string message, reason;
  std::vector<std::string> causes;
  if (status.is_object()) {
    message = server_text(str_field(status, "message"), k_max_server_text);
    reason = server_text(str_field(status, "reason"), 64);
    if (auto d = status.find("details"); d != status.end() && d->is_object()) {
      for (const auto& cause : array_field(*d, "causes")) {
        if (!cause.is_object() || causes.size() == k_max_causes) continue;
        std::string field = str_field(cause, "field"), msg = str_field(cause, "message");
        causes.push_back(server_text(field.empty() ? msg : field + ": " + msg, 256));
      }
    }
  }
  if (message.empty()) {
    // (credentials scrubbed before the cut, which could leave half of one)
    std::string body = trim(scrub(r.body.substr(0, 4096), {m_access.token, m_access.password}).substr(0, 200));
    message = body.empty() || !utf8::valid(body) ? "HTTP " + std::to_string(r.status) : server_text(body, 200);
  }
  const int s = r.status;
  if (s == 401)
    throw KubeError(KubeErrorCategory::unauthorized, s,
                    where + "unauthorised: the server rejected the credentials of user '" + m_access.user + "'",
                    "check the token, client certificate or exec plugin of the kubeconfig");
  if (s == 403 && status.is_object() && status.contains("details") && status["details"].is_object()) {
    // "unable to create new content in namespace X because it is being
    // terminated": the namespace goes away soon and is made again then.
    for (const auto& cause : array_field(status["details"], "causes"))
      if (cause.is_object() && str_field(cause, "reason") == "NamespaceTerminating")
        throw KubeError(KubeErrorCategory::terminating, s, where + what + ": " + message);
  }
  if (s == 403) throw KubeError(KubeErrorCategory::forbidden, s, where + "forbidden: " + message);
  if (s == 404) throw KubeError(KubeErrorCategory::not_found, s, where + what + ": " + message);
  if (s == 409) throw KubeError(KubeErrorCategory::conflict, s, where + what + ": " + message);
  if (s == 400 || s == 422 || s == 415) {
    std::string text = where + what + ": " + message;
    // The API's message usually lists the causes already; add those it omits.
    std::vector<std::string> missing;
    for (const auto& c : causes)
      if (message.find(c) == std::string::npos) missing.push_back(c);
    if (!missing.empty()) text += " (causes: " + join(missing, "; ") + ")";
    throw KubeError(KubeErrorCategory::invalid, s, text);
  }
  if (s >= 500 || s == 429)
    throw KubeError(KubeErrorCategory::server_error, s,
                    where + what + ": server error " + std::to_string(s) + ": " + message,
                    "the cluster's API server is failing; emco retries later");
  if (s >= 300 && s < 400)
    throw KubeError(KubeErrorCategory::other, s,
                    where + what + ": the server redirects (HTTP " + std::to_string(s) + ") to '" +
                        server_text(r.header("location"), 256) +
                        "'; emco does not follow redirects",
                    "point the kubeconfig's server at the API server itself");
  throw KubeError(KubeErrorCategory::other, s,
                  where + what + ": unexpected HTTP " + std::to_string(s) + (reason.empty() ? "" : " " + reason) +
                      ": " + message);
}

json KubeClient::server_version(milliseconds timeout) {
  HttpResponse r = send("GET", "/version", {}, {}, "application/json", timeout);
  if (r.status != 200) raise(r, "GET /version");
  json v = json::parse(r.body, nullptr, false);
  if (!v.is_object())
    throw KubeError(KubeErrorCategory::other, r.status,
                    "cluster '" + m_access.label + "': /version did not answer with a JSON object",
                    "is '" + m_access.server + "' a Kubernetes API server?");
  return v;
}

void KubeClient::discover_locked() {
  m_resources.clear();
  m_legacy_group_versions.clear();
  m_fetched_group_versions.clear();
  m_aggregated = false;
  bool aggregated = true;
  std::vector<json> docs;
  for (const char* root : {"/api", "/apis"}) {
    HttpResponse r = send("GET", root, {}, {}, k_accept_discovery);
    if (r.status != 200) raise(r, std::string("discovery (GET ") + root + ")");
    json doc = json::parse(r.body, nullptr, false);
    if (!doc.is_object())
      throw KubeError(KubeErrorCategory::other, r.status,
                      "cluster '" + m_access.label + "': discovery " + root + " is not JSON");
    if (r.header("content-type").find("as=APIGroupDiscoveryList") == std::string::npos) aggregated = false;
    docs.push_back(std::move(doc));
  }
  if (aggregated) {
    for (const auto& doc : docs) {
      for (const auto& group : array_field(doc, "items")) {
        if (!group.is_object()) continue;
        std::string gname = group.contains("metadata") && group["metadata"].is_object() ? str_field(group["metadata"], "name") : "";
        for (const auto& ver : array_field(group, "versions")) {
          if (!ver.is_object() || str_field(ver, "freshness") == "Stale") continue;
          std::string vname = str_field(ver, "version");
          for (const auto& res : array_field(ver, "resources")) {
            if (!res.is_object()) continue;
            auto rk = res.find("responseKind");
            if (rk == res.end() || !rk->is_object()) continue;
            ResourceInfo info;
            info.gvk = Gvk{gname, vname, str_field(*rk, "kind")};
            info.plural = str_field(res, "resource");
            info.namespaced = str_field(res, "scope") == "Namespaced";
            if (!info.plural.empty() && !info.gvk.kind.empty()) m_resources.emplace(info.gvk, info);
          }
        }
      }
    }
    m_aggregated = true;
  } else {
    for (const auto& v : array_field(docs[0], "versions"))
      if (v.is_string()) m_legacy_group_versions.insert(v.get<std::string>());
    for (const auto& g : array_field(docs[1], "groups"))
      for (const auto& v : array_field(g, "versions"))
        if (v.is_object()) m_legacy_group_versions.insert(str_field(v, "groupVersion"));
  }
  m_discovered = true;
}

void KubeClient::fetch_group_version_locked(const std::string& gv) {
  m_fetched_group_versions.insert(gv);
  std::string path = gv.find('/') == std::string::npos ? "/api/" + gv : "/apis/" + gv;
  HttpResponse r = send("GET", path);
  if (r.status == 404) return;
  if (r.status != 200) raise(r, "discovery (GET " + path + ")");
  json doc = json::parse(r.body, nullptr, false);
  if (!doc.is_object()) return;
  Gvk base = Gvk::of(gv, "");
  for (const auto& res : array_field(doc, "resources")) {
    if (!res.is_object()) continue;
    std::string name = str_field(res, "name");
    if (name.empty() || name.find('/') != std::string::npos) continue;  // subresources
    ResourceInfo info;
    info.gvk = Gvk{base.group, base.version, str_field(res, "kind")};
    info.plural = name;
    auto namespaced = res.find("namespaced");
    info.namespaced = namespaced != res.end() && namespaced->is_boolean() && namespaced->get<bool>();
    m_resources.emplace(info.gvk, info);
  }
}

ResourceInfo KubeClient::resource_for(const Gvk& gvk, bool* from_table) {
  if (from_table) *from_table = false;
  std::lock_guard lock(m_discovery_mutex);
  if (!m_discovered && m_options.builtin_kinds) {
    if (const k8s::ResourceType* t = k8s::find_builtin_kind(gvk.group, gvk.version, gvk.kind)) {
      if (from_table) *from_table = true;
      return ResourceInfo{gvk, t->resource, t->namespaced};
    }
  }
  bool fresh = false;
  if (!m_discovered) {
    discover_locked();
    fresh = true;
  }
  for (int round = 0; round < 2; ++round) {
    if (auto it = m_resources.find(gvk); it != m_resources.end()) return it->second;
    const std::string gv = gvk.api_version();
    if (!m_aggregated && m_legacy_group_versions.count(gv) && !m_fetched_group_versions.count(gv)) {
      fetch_group_version_locked(gv);
      if (auto it = m_resources.find(gvk); it != m_resources.end()) return it->second;
    }
    if (fresh) break;
    discover_locked();  // the kind may be new (a CRD applied by someone else)
    fresh = true;
  }
  throw KubeError(KubeErrorCategory::not_found, 0,
                  "cluster '" + m_access.label + "' does not serve kind '" + gvk.kind + "' in '" + gvk.api_version() +
                      "'",
                  "apply the CustomResourceDefinition that defines it first, or check apiVersion and kind");
}

bool KubeClient::rediscover_if_unserved(bool from_table, const HttpResponse& r) {
  if (!from_table || r.status != 404) return false;
  json s = json::parse(r.body, nullptr, false);
  if (s.is_object() && s.contains("details") && s["details"].is_object() && !str_field(s["details"], "name").empty())
    return false;  // a named object is missing: the path exists
  std::lock_guard lock(m_discovery_mutex);
  discover_locked();
  return true;
}

void KubeClient::invalidate_discovery() {
  std::lock_guard lock(m_discovery_mutex);
  m_discovered = false;
}

bool KubeClient::discovery_is_aggregated() {
  std::lock_guard lock(m_discovery_mutex);
  if (!m_discovered) discover_locked();
  return m_aggregated;
}

std::string KubeClient::path_for(const ResourceInfo& info, const std::string& ns, const std::string& name) const {
  std::string p = info.gvk.group.empty() ? "/api/" + info.gvk.version : "/apis/" + info.gvk.group + "/" + info.gvk.version;
  if (info.namespaced && !ns.empty()) p += "/namespaces/" + escape(ns);
  p += "/" + info.plural;
  if (!name.empty()) p += "/" + escape(name);
  return p;
}

namespace {

struct Target {
  ResourceInfo info;
  std::string ns;
  std::string name;
  json body;
};

}  // namespace

static Target prepare(KubeClient& client, const json& object, const std::string& default_ns, bool& from_table) {
  const std::string who = "cluster '" + client.label() + "': ";
  if (!object.is_object()) throw KubeError(KubeErrorCategory::invalid, 0, who + "manifest is not an object");
  std::string api_version = str_field(object, "apiVersion"), kind = str_field(object, "kind");
  if (api_version.empty() || kind.empty())
    throw KubeError(KubeErrorCategory::invalid, 0, who + "manifest has no apiVersion or kind");
  const json& meta = object.contains("metadata") ? object["metadata"] : json::object();
  std::string name = meta.is_object() ? str_field(meta, "name") : "";
  if (name.empty())
    throw KubeError(KubeErrorCategory::invalid, 0, who + kind + " manifest has no metadata.name",
                    "generateName is not supported for apply; give the object a name");
  Target t{client.resource_for(Gvk::of(api_version, kind), &from_table), {}, name, object};
  t.body["metadata"].erase("managedFields");  // the server refuses them in an apply body
  if (t.info.namespaced) {
    t.ns = str_field(meta, "namespace");
    if (t.ns.empty()) t.ns = !default_ns.empty() ? default_ns : !client.access().ns.empty() ? client.access().ns : "default";
    t.body["metadata"]["namespace"] = t.ns;
  } else {
    t.body["metadata"].erase("namespace");
  }
  return t;
}

static WriteResult result_of(const HttpResponse& r) {
  ObjectMetadata m = read_object_metadata(r.body);
  WriteResult w;
  w.created = r.status == 201;
  w.resource_version = std::move(m.resource_version);
  w.uid = std::move(m.uid);
  w.generation = m.generation;
  return w;
}

// A 404 whose Status says the namespace is missing.
static bool namespace_missing(const HttpResponse& r) {
  if (r.status != 404) return false;
  json s = json::parse(r.body, nullptr, false);
  if (!s.is_object() || !s.contains("details") || !s["details"].is_object()) return false;
  return str_field(s["details"], "kind") == "namespaces";
}

WriteResult KubeClient::apply(const json& object, const std::string& default_ns) {
  bool from_table = false;
  Target t = prepare(*this, object, default_ns, from_table);
  const std::string body = t.body.dump() + "\n";
  for (int attempt = 0;; ++attempt) {
    const std::string path =
        path_for(t.info, t.ns, t.name) + "?fieldManager=" + escape(m_options.field_manager) + "&force=true";
    HttpResponse r = send("PATCH", path, body, "application/apply-patch+yaml");
    if (r.status == 200 || r.status == 201) {
      if (t.info.gvk.kind == "Namespace") {
        // A namespace deleted earlier and still Terminating takes the apply
        // but then goes away with everything put into it: not applied yet,
        // retried until it is gone and made again.
        json live = json::parse(r.body, nullptr, false);
        if (live.is_object() && live.contains("metadata") && live["metadata"].is_object() &&
            live["metadata"].contains("deletionTimestamp"))
          throw KubeError(KubeErrorCategory::terminating, r.status,
                          "cluster '" + m_access.label + "': " + describe(t.info, t.ns, t.name) +
                              " is being deleted (Terminating); it is applied again once it is gone");
        std::lock_guard lock(m_ns_mutex);
        m_known_namespaces.insert(t.name);
      }
      return result_of(r);
    }
    if (attempt == 0 && t.info.namespaced && namespace_missing(r)) {
      // Known before, gone now (deleted behind emco's back, or it was
      // Terminating): make it again.
      {
        std::lock_guard lock(m_ns_mutex);
        m_known_namespaces.erase(t.ns);
      }
      ensure_namespace(t.ns);
      continue;
    }
    if (attempt < 2 && rediscover_if_unserved(from_table, r)) {
      t.info = resource_for(t.info.gvk, &from_table);
      continue;
    }
    raise(r, describe(t.info, t.ns, t.name));
  }
}

WriteResult KubeClient::create_if_absent(const json& object, const std::string& default_ns) {
  bool from_table = false;
  Target t = prepare(*this, object, default_ns, from_table);
  for (int attempt = 0;; ++attempt) {
    const std::string path = path_for(t.info, t.ns, "") + "?fieldManager=" + escape(m_options.field_manager);
    HttpResponse r = send("POST", path, t.body.dump(), "application/json");
    if (r.status == 200 || r.status == 201 || r.status == 202) return result_of(r);
    if (r.status == 409) {
      WriteResult w;
      json live = get(t.info.gvk, t.ns, t.name);
      if (live.is_object() && live.contains("metadata")) {
        w.resource_version = str_field(live["metadata"], "resourceVersion");
        w.uid = str_field(live["metadata"], "uid");
      }
      return w;
    }
    if (attempt == 0 && t.info.namespaced && namespace_missing(r)) {
      ensure_namespace(t.ns);
      continue;
    }
    if (attempt < 2 && rediscover_if_unserved(from_table, r)) {
      t.info = resource_for(t.info.gvk, &from_table);
      continue;
    }
    raise(r, describe(t.info, t.ns, t.name));
  }
}

void KubeClient::ensure_namespace(const std::string& ns) {
  {
    std::lock_guard lock(m_ns_mutex);
    if (m_known_namespaces.count(ns)) return;
  }
  json body = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
  HttpResponse r = send("POST", "/api/v1/namespaces?fieldManager=" + escape(m_options.field_manager), body.dump(),
                        "application/json");
  if (r.status != 200 && r.status != 201 && r.status != 409) raise(r, "namespaces '" + ns + "'");
  std::lock_guard lock(m_ns_mutex);
  m_known_namespaces.insert(ns);
}

bool KubeClient::remove(const Gvk& gvk, const std::string& ns, const std::string& name, Propagation propagation) {
  bool from_table = false;
  ResourceInfo info;
  try {
    info = resource_for(gvk, &from_table);
  } catch (const KubeError& e) {
    // A kind the cluster does not serve has no objects (its CRD is gone,
    // or was never applied: the object was refused when it was applied).
    if (e.category() == KubeErrorCategory::not_found) return false;
    throw;
  }
  const char* policy = propagation == Propagation::foreground ? "Foreground"
                       : propagation == Propagation::orphan   ? "Orphan"
                                                              : "Background";
  json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", policy}};
  std::string effective_ns = info.namespaced && ns.empty() ? (m_access.ns.empty() ? "default" : m_access.ns) : ns;
  HttpResponse r = send("DELETE", path_for(info, effective_ns, name), body.dump(), "application/json");
  if (rediscover_if_unserved(from_table, r)) {
    info = resource_for(gvk);
    r = send("DELETE", path_for(info, effective_ns, name), body.dump(), "application/json");
  }
  if (r.status == 200 || r.status == 202) {
    if (gvk.kind == "Namespace" && gvk.group.empty()) {
      std::lock_guard lock(m_ns_mutex);
      m_known_namespaces.erase(name);
    }
    return true;
  }
  if (r.status == 404) return false;
  raise(r, describe(info, effective_ns, name));
}

json KubeClient::get(const Gvk& gvk, const std::string& ns, const std::string& name) {
  bool from_table = false;
  ResourceInfo info = resource_for(gvk, &from_table);
  std::string effective_ns = info.namespaced && ns.empty() ? (m_access.ns.empty() ? "default" : m_access.ns) : ns;
  HttpResponse r = send("GET", path_for(info, effective_ns, name));
  if (rediscover_if_unserved(from_table, r)) {
    info = resource_for(gvk);
    r = send("GET", path_for(info, effective_ns, name));
  }
  if (r.status == 404) return json();
  if (r.status != 200) raise(r, describe(info, effective_ns, name));
  json live = json::parse(r.body, nullptr, false);
  if (!live.is_object())
    throw KubeError(KubeErrorCategory::other, r.status,
                    "cluster '" + m_access.label + "': " + describe(info, effective_ns, name) +
                        ": reply is not a JSON object");
  return live;
}

std::vector<json> KubeClient::list(const Gvk& gvk, const std::string& ns, const std::string& label_selector) {
  bool from_table = false;
  ResourceInfo info = resource_for(gvk, &from_table);
  std::vector<json> items;
  std::string cont;
  while (true) {
    std::string path = path_for(info, ns, "") + "?limit=500";
    if (!label_selector.empty()) path += "&labelSelector=" + escape(label_selector);
    if (!cont.empty()) path += "&continue=" + escape(cont);
    HttpResponse r = send("GET", path);
    if (rediscover_if_unserved(from_table, r)) {
      from_table = false;
      info = resource_for(gvk);
      continue;  // the first page again, at the discovered path
    }
    if (r.status != 200) raise(r, info.plural + " (list)");
    json doc = json::parse(r.body, nullptr, false);
    if (!doc.is_object()) break;
    for (const auto& item : array_field(doc, "items")) {
      if (!item.is_object()) continue;  // not an object of any kind
      items.push_back(item);
      // Lists omit apiVersion/kind on items; restore them as kubectl does.
      if (!item.contains("apiVersion")) items.back()["apiVersion"] = gvk.api_version();
      if (!item.contains("kind")) items.back()["kind"] = gvk.kind;
    }
    std::string next = doc.contains("metadata") && doc["metadata"].is_object() ? str_field(doc["metadata"], "continue") : "";
    // A server that hands out the token it was given would be asked for ever.
    if (!next.empty() && next == cont)
      throw KubeError(KubeErrorCategory::other, r.status,
                      "cluster '" + m_access.label + "': " + info.plural + " (list): the server repeats its continue token",
                      "the cluster's API server is misbehaving; emco retries later");
    cont = std::move(next);
    if (cont.empty()) break;
  }
  return items;
}

void KubeClient::approve_csr(const std::string& name, const std::string& message, const std::string& reason) {
  const Gvk gvk{"certificates.k8s.io", "v1", "CertificateSigningRequest"};
  json csr = get(gvk, "", name);
  if (csr.is_null())
    throw KubeError(KubeErrorCategory::not_found, 404,
                    "cluster '" + m_access.label + "': certificatesigningrequests.certificates.k8s.io '" + name +
                        "' not found");
  if (!csr["status"].is_object()) csr["status"] = json::object();
  json& conditions = csr["status"]["conditions"];
  if (!conditions.is_array()) conditions = json::array();
  for (const auto& c : conditions)
    if (str_field(c, "type") == "Approved" && str_field(c, "status") == "True") return;
  std::string now = format_rfc3339(std::chrono::system_clock::now());
  conditions.push_back({{"type", "Approved"},
                        {"status", "True"},
                        {"reason", reason},
                        {"message", message},
                        {"lastUpdateTime", now},
                        {"lastTransitionTime", now}});
  ResourceInfo info = resource_for(gvk);
  HttpResponse r = send("PUT", path_for(info, "", name) + "/approval", csr.dump(), "application/json");
  if (r.status != 200 && r.status != 201) raise(r, describe(info, "", name) + " (approval)");
}

std::string signed_certificate(const json& live, const std::string& what) {
  const json& status = k8s::field(live, "status");
  for (const auto& c : array_field(status, "conditions")) {
    const std::string type = str_field(c, "type");
    if ((type == "Denied" || type == "Failed") && str_field(c, "status") == "True") {
      std::string why = str_field(c, "message");
      if (why.empty()) why = str_field(c, "reason");
      fail(ErrorKind::failed, what + " was " + (type == "Denied" ? "denied" : "not signed") + ": " + printable(why, 300));
    }
  }
  const std::string cert = str_field(status, "certificate");
  if (cert.empty()) return cert;
  auto pem = base64_decode(cert);
  if (!pem) fail(ErrorKind::failed, what + " holds a status.certificate that is not base64");
  try {
    inspect_certificates(*pem, what + "'s status.certificate");
  } catch (const Error& e) {
    fail(ErrorKind::failed, e.message(), "the cluster's signer issued something that is not a certificate");
  }
  return cert;
}

void KubeClient::wait_established(const std::string& crd_name) {
  const Gvk gvk{"apiextensions.k8s.io", "v1", "CustomResourceDefinition"};
  auto deadline = std::chrono::steady_clock::now() + m_options.establish_timeout;
  milliseconds pause(20);
  while (true) {
    json crd = get(gvk, "", crd_name);
    if (crd.is_object() && crd.contains("status") && crd["status"].is_object()) {
      for (const auto& c : array_field(crd["status"], "conditions")) {
        if (str_field(c, "type") == "Established" && str_field(c, "status") == "True") {
          invalidate_discovery();
          return;
        }
      }
    }
    if (std::chrono::steady_clock::now() + pause > deadline)
      throw KubeError(KubeErrorCategory::other, 0,
                      fmt::format("cluster '{}': customresourcedefinition '{}' not established after {} s",
                                  m_access.label, crd_name, m_options.establish_timeout.count() / 1000.0),
                      "check the CRD's status conditions on the cluster");
    sleep_for(pause);
    pause = std::min(pause * 2, milliseconds(500));
  }
}

}  // namespace emco::kube
