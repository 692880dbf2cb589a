// libcurl implementation of HttpClient.
//
// Keep-alive: pools of easy handles. Each handle keeps its own connection
// open between requests, so a worker that takes an idle handle reuses that
// handle's connection; concurrent workers each hold one handle and so at
// most one connection each. The connection cache of libcurl is deliberately
// not shared (libcurl documents that as unsafe across threads).
//
// Clients share their handles with every client of the same connection
// identity (Connections): the same CA data, verification setting, server
// name, client certificate and key, and proxy, and the same origin. Clusters
// behind one endpoint (a fleet reached through a proxy such as Rancher's
// /k8s/clusters/<id>, or `emco sim`) then reuse each other's connections
// instead of each making its own TLS handshake; what a request carries itself
// (a bearer token, basic auth) is not part of the identity, since a
// connection holds none of it. Everything a connection or a resumed TLS
// session does hold is: a CA that verified the server, a client certificate
// that authenticated. So a client never gets a connection or TLS session
// another CA verified or another certificate authenticated, which libcurl
// itself would not notice, as the TLS material reaches it through
// CURLOPT_SSL_CTX_FUNCTION. The handles of one identity share the DNS and
// TLS session caches (a CURLSH with locks).
//
// The idle handles of all clients in the process are bounded (idle_budget):
// an operation keeps a client per cluster, and each idle handle holds three
// descriptors (its connection and libcurl's wake-up socket pair). Idle
// handles to an origin are closed when the last client that sent there goes.
//
// TLS material: libcurl (7.88 here) builds a new SSL_CTX for every
// connection and, given the kubeconfig's CA and client certificate as blobs,
// parses the PEM again each time (with OpenSSL 3.0 about 1.5M instructions
// a certificate, a private key more). Each identity parses them once
// (TlsMaterial), so that its further connections (concurrent workers,
// reconnects, other clusters of the identity) do not, and a PEM that does
// not parse is reported before connecting; each new SSL_CTX gets the parsed
// objects from CURLOPT_SSL_CTX_FUNCTION. Identities whose clusters have the
// same CA data (often a whole fleet: one tool made their certificates) share
// one parsed CA store (CaStores) for as long as any of them lives.

#include <curl/curl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "plugins/targets/kube/http.hpp"
#include "plugins/targets/kube/pem.hpp"

namespace emco::kube {

std::string HttpResponse::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return v;
  return {};
}

namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// Idle handles pooled by every client of the process.
std::atomic<size_t> g_idle{0};

// How many idle handles the process may keep: a sixth of the descriptor
// limit (half of it, three descriptors a handle); the rest is for busy
// handles, the workspace, git and the caller. Pooling every idle handle ran
// a 10,000-cluster instantiate out of descriptors at ~6,700 clusters with a
// limit of 20,000 (~340 clusters with the usual 1,024), and the clusters'
// failed connections then read as unreachable, retried until the timeout.
// Read at each release, so a changed limit applies at once.
size_t idle_budget() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 10000;
  return std::max<size_t>(4, static_cast<size_t>(limit.rlim_cur) / 6);
}

struct SlistFree { void operator()(curl_slist* l) const { curl_slist_free_all(l); } };
using SlistPtr = std::unique_ptr<curl_slist, SlistFree>;

TransportFailure classify(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST: return TransportFailure::resolve;
    case CURLE_COULDNT_CONNECT: return TransportFailure::connect;
    case CURLE_OPERATION_TIMEDOUT: return TransportFailure::timeout;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH: return TransportFailure::tls_verify;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_USE_SSL_FAILED: return TransportFailure::tls;
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_PROXY: return TransportFailure::proxy;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_UNSUPPORTED_PROTOCOL:  // also "Received HTTP/0.9 when not allowed": not an HTTP answer
    case CURLE_BAD_CONTENT_ENCODING: return TransportFailure::broken;
    default: return TransportFailure::other;
  }
}

struct BodySink {
  std::string* body;
  std::size_t limit;
  bool exceeded = false;
};

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  const size_t n = size * count;
  if (sink->body->size() + n > sink->limit) {
    sink->exceeded = true;
    return 0;  // libcurl aborts the transfer (CURLE_WRITE_ERROR)
  }
  sink->body->append(data, n);
  return n;
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* headers = static_cast<Headers*>(user);
  std::string_view line(data, size * count);
  if (starts_with(line, "HTTP/")) {
    headers->clear();  // a new response (after 100 Continue or a proxy CONNECT)
  } else if (auto colon = line.find(':'); colon != std::string_view::npos) {
    headers->emplace_back(to_lower(line.substr(0, colon)), trim(line.substr(colon + 1)));
  }
  return size * count;
}

// Objects shared by key for as long as someone holds them: find_or_make()
// returns the live one for `key`, or the one `make()` builds (outside the
// lock, so that other keys are served meanwhile; null is not kept). Entries
// of objects nobody holds any more are dropped now and then: a long-running
// process (emco serve) sees clusters come and go.
template <typename T>
class LiveByKey {
public:
  template <typename Make>
  std::shared_ptr<T> find_or_make(const std::string& key, Make&& make) {
    {
      std::lock_guard lock(m_mutex);
      auto it = m_live.find(key);
      if (it != m_live.end())
        if (auto live = it->second.lock()) return live;
    }
    std::shared_ptr<T> made = make();
    if (!made) return nullptr;
    std::lock_guard lock(m_mutex);
    auto& slot = m_live[key];
    if (auto live = slot.lock()) return live;  // another caller made it first
    slot = made;
    if (++m_added % 256 == 0) std::erase_if(m_live, [](const auto& e) { return e.second.expired(); });
    return made;
  }

private:
  std::mutex m_mutex;
  std::map<std::string, std::weak_ptr<T>> m_live;
  size_t m_added = 0;
};

struct StoreFree {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};

// The parsed CA stores in use, by their PEM text. An X509_STORE is read-only
// once built here and OpenSSL locks it for concurrent verifications (the
// connections of one client already shared one). Parsing the CA was about
// half of a client's set-up in a fan-out to 1,000 clusters of one CA.
class CaStores {
public:
  // The store for `pem`, parsed now or shared with a live client; null if
  // the data holds no certificate.
  static std::shared_ptr<X509_STORE> get(const std::string& pem) {
    static auto* stores = new LiveByKey<X509_STORE>();  // never destroyed: clients may outlive static destruction
    return stores->find_or_make(pem, [&] { return parse(pem); });
  }

private:
  static std::shared_ptr<X509_STORE> parse(const std::string& pem) {
    std::unique_ptr<X509_STORE, StoreFree> store(X509_STORE_new());
    int added = 0;
    for (const auto& cert : load_certificates(pem))
      if (store && X509_STORE_add_cert(store.get(), cert.get()) == 1) ++added;
    ERR_clear_error();
    if (added == 0) return nullptr;
    // As libcurl does for its own store, and as kubectl trusts any
    // certificate of its CA file: an intermediate there is an anchor too.
    X509_STORE_set_flags(store.get(), X509_V_FLAG_PARTIAL_CHAIN);
    return std::shared_ptr<X509_STORE>(store.release(), StoreFree{});
  }
};

// The kubeconfig's CA certificates and client certificate chain and key,
// parsed once (pem.hpp's loaders: an encrypted key never prompts). A PEM that
// does not parse leaves `error` set; every request then fails with it, as
// libcurl's own parse would have failed.
class TlsMaterial {
public:
  explicit TlsMaterial(const TlsOptions& tls) {
    if (!tls.ca_pem.empty()) parse_ca(tls.ca_pem);
    if (error.empty() && !tls.client_cert_pem.empty()) parse_client(tls.client_cert_pem, tls.client_key_pem);
  }
  TlsMaterial(const TlsMaterial&) = delete;
  TlsMaterial& operator=(const TlsMaterial&) = delete;

  bool any() const { return m_store || !m_certs.empty(); }

  // CURLOPT_SSL_CTX_FUNCTION: called by libcurl with the new connection's
  // SSL_CTX, before its SSL object exists. The leaf certificate first, then
  // the rest of the chain.
  static CURLcode install(CURL*, void* ssl_ctx, void* self) {
    auto* ctx = static_cast<SSL_CTX*>(ssl_ctx);
    const auto& m = *static_cast<const TlsMaterial*>(self);
    if (m.m_store) SSL_CTX_set1_cert_store(ctx, m.m_store.get());
    if (m.m_certs.empty()) return CURLE_OK;
    bool ok = SSL_CTX_use_certificate(ctx, m.m_certs.front().get()) == 1 && SSL_CTX_use_PrivateKey(ctx, m.m_key.get()) == 1;
    for (size_t i = 1; ok && i < m.m_certs.size(); ++i) ok = SSL_CTX_add1_chain_cert(ctx, m.m_certs[i].get()) == 1;
    if (ok) return CURLE_OK;
    ERR_clear_error();
    return CURLE_SSL_CERTPROBLEM;
  }

  std::string error;  // empty: parsed
  TransportFailure failure = TransportFailure::tls;

private:
  void parse_ca(const std::string& pem) {
    m_store = CaStores::get(pem);
    if (!m_store) {
      error = "the certificate-authority data holds no PEM certificate";
      failure = TransportFailure::tls_verify;
    }
  }

  void parse_client(const std::string& cert_pem, const std::string& key_pem) {
    m_certs = load_certificates(cert_pem);
    if (m_certs.empty()) {
      error = "the client-certificate data holds no PEM certificate";
      return;
    }
    m_key = load_private_key(key_pem);
    if (!m_key) {
      error = "the client-key data holds no PEM private key";
    } else if (X509_check_private_key(m_certs.front().get(), m_key.get()) != 1) {
      ERR_clear_error();
      error = "the client key does not match the client certificate";
    }
  }

  std::shared_ptr<X509_STORE> m_store;  // shared with the clients of the same CA data
  std::vector<X509Ptr> m_certs;  // the client's certificate, then its chain
  PkeyPtr m_key;
};

// The handles, TLS material and caches of one connection identity (see
// the top of this file), shared by its clients for as long as one lives.
class Connections {
public:
  explicit Connections(const TransportOptions& options) : tls(options.tls) {
    m_share = curl_share_init();
    curl_share_setopt(m_share, CURLSHOPT_LOCKFUNC, &Connections::lock);
    curl_share_setopt(m_share, CURLSHOPT_UNLOCKFUNC, &Connections::unlock);
    curl_share_setopt(m_share, CURLSHOPT_USERDATA, this);
    curl_share_setopt(m_share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(m_share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  }
  Connections(const Connections&) = delete;
  Connections& operator=(const Connections&) = delete;

  ~Connections() {
    for (auto& [origin, pool] : m_origins) close(pool.idle);
    curl_share_cleanup(m_share);
  }

  // A client sends to `origin` for the first time; detach() when it goes.
  void attach(const std::string& origin) {
    std::lock_guard lock(m_pool_mutex);
    ++m_origins[origin].clients;
  }

  // The last client of `origin` gone: its idle connections are closed.
  void detach(const std::string& origin) {
    std::vector<CURL*> idle;
    {
      std::lock_guard lock(m_pool_mutex);
      auto it = m_origins.find(origin);
      if (it == m_origins.end() || --it->second.clients > 0) return;
      idle = std::move(it->second.idle);
      m_origins.erase(it);
    }
    close(idle);
  }

  // An idle handle connected to `origin` (attached), or a new one.
  CURL* acquire(const std::string& origin) {
    {
      std::lock_guard lock(m_pool_mutex);
      auto& idle = m_origins[origin].idle;
      if (!idle.empty()) {
        CURL* h = idle.back();
        idle.pop_back();
        --g_idle;
        return h;
      }
    }
    CURL* h = curl_easy_init();
    if (!h) fail(ErrorKind::internal, "cannot create a libcurl handle");
    return h;
  }

  // Pools the handle, or past the process's budget closes it (and its
  // connection): the origin's clients connect again on a later request.
  void release(const std::string& origin, CURL* h) {
    if (g_idle.fetch_add(1) < idle_budget()) {
      std::lock_guard lock(m_pool_mutex);
      m_origins[origin].idle.push_back(h);
      return;
    }
    --g_idle;
    curl_easy_cleanup(h);
  }

  CURLSH* share() const { return m_share; }

  const TlsMaterial tls;

private:
  struct Origin {
    size_t clients = 0;
    std::vector<CURL*> idle;
  };

  static void close(std::vector<CURL*>& idle) {
    for (CURL* h : idle) curl_easy_cleanup(h);
    g_idle -= idle.size();
    idle.clear();
  }

  static void lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<Connections*>(user)->m_locks[static_cast<size_t>(data) % k_locks].lock();
  }
  static void unlock(CURL*, curl_lock_data data, void* user) {
    static_cast<Connections*>(user)->m_locks[static_cast<size_t>(data) % k_locks].unlock();
  }

  static constexpr size_t k_locks = 8;
  CURLSH* m_share = nullptr;
  std::array<std::mutex, k_locks> m_locks;
  std::mutex m_pool_mutex;
  std::map<std::string, Origin> m_origins;  // by origin ("https://host:port")
};

// The live Connections by identity. The key is a SHA-256 digest of the
// identity's fields, so that no copy of a private key sits in the map.
class ConnectionRegistry {
public:
  static std::shared_ptr<Connections> get(const TransportOptions& options) {
    static auto* registry = new LiveByKey<Connections>();  // never destroyed: clients may outlive static destruction
    return registry->find_or_make(identity_key(options), [&] { return std::make_shared<Connections>(options); });
  }

private:
  // Each field with its length before it, so that no two identities read alike.
  static std::string identity_key(const TransportOptions& options) {
    const TlsOptions& tls = options.tls;
    std::string fields;
    for (const std::string* field : {&tls.ca_pem, &tls.server_name, &tls.client_cert_pem, &tls.client_key_pem, &options.proxy_url}) {
      fields += std::to_string(field->size());
      fields += ':';
      fields += *field;
    }
    fields += tls.insecure_skip_verify ? '1' : '0';
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int length = 0;
    if (EVP_Digest(fields.data(), fields.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1)
      fail(ErrorKind::internal, "cannot compute a SHA-256 digest");
    OPENSSL_cleanse(fields.data(), fields.size());
    return std::string(reinterpret_cast<const char*>(digest.data()), length);
  }
};

// "scheme://authority" of an absolute URL: connections are kept per origin.
std::string origin_of(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  const size_t end = url.find_first_of("/?#", scheme + 3);
  return url.substr(0, end);
}

class CurlHttpClient final : public HttpClient {
public:
  explicit CurlHttpClient(const TransportOptions& options) : m_options(options) {
    global_init();
    m_connections = ConnectionRegistry::get(options);
  }

  ~CurlHttpClient() override {
    for (const std::string& origin : m_origins) m_connections->detach(origin);
  }

  HttpResponse send(const HttpRequest& request) override {
    const std::string origin = origin_of(request.url);
    {
      std::lock_guard lock(m_origins_mutex);
      if (m_origins.insert(origin).second) m_connections->attach(origin);
    }
    CURL* h = m_connections->acquire(origin);
    HttpResponse response;
    try {
      perform(h, request, response);
    } catch (...) {
      m_connections->release(origin, h);
      throw;
    }
    m_connections->release(origin, h);
    return response;
  }

  HttpStats stats() const override { return {m_requests.load(), m_connections_made.load()}; }

private:
  // The URL to request and, with tls-server-name, the CONNECT_TO entry that
  // sends it to the real host: curl then verifies and sends SNI for the name.
  std::string target_url(const std::string& url, SlistPtr& connect_to) const {
    if (m_options.tls.server_name.empty()) return url;
    CURLU* u = curl_url();
    std::string result = url;
    if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
      char* host = nullptr;
      char* port = nullptr;
      curl_url_get(u, CURLUPART_HOST, &host, 0);
      curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
      if (host && port) {
        std::string entry = m_options.tls.server_name + ":" + port + ":" + host + ":" + port;
        connect_to.reset(curl_slist_append(nullptr, entry.c_str()));
        curl_url_set(u, CURLUPART_HOST, m_options.tls.server_name.c_str(), 0);
        char* rewritten = nullptr;
        if (curl_url_get(u, CURLUPART_URL, &rewritten, 0) == CURLUE_OK) result = rewritten;
        curl_free(rewritten);
      }
      curl_free(host);
      curl_free(port);
    }
    curl_url_cleanup(u);
    return result;
  }

  void perform(CURL* h, const HttpRequest& request, HttpResponse& response) {
    curl_easy_reset(h);  // keeps the connection, DNS and session caches
    std::array<char, CURL_ERROR_SIZE> errbuf{};
    SlistPtr connect_to;
    std::string url = target_url(request.url, connect_to);
    curl_easy_setopt(h, CURLOPT_SHARE, m_connections->share());
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    if (connect_to) curl_easy_setopt(h, CURLOPT_CONNECT_TO, connect_to.get());
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf.data());
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
    auto connect_timeout = request.connect_timeout.count() > 0 ? request.connect_timeout : m_options.connect_timeout;
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_timeout.count()));

    const TlsOptions& tls = m_options.tls;
    if (tls.insecure_skip_verify) {
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    } else {
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    }
    const TlsMaterial& material = m_connections->tls;
    if (!material.error.empty()) {
      response.status = 0;
      response.failure = material.failure;
      response.failure_detail = material.error;
      return;
    }
    if (!tls.ca_pem.empty()) {
      // Only the kubeconfig's CA is trusted, as with kubectl: no system
      // bundle. TlsMaterial::install puts it in each SSL_CTX.
      curl_easy_setopt(h, CURLOPT_CAINFO, nullptr);
      curl_easy_setopt(h, CURLOPT_CAPATH, nullptr);
    }
    if (material.any()) {
      curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, &TlsMaterial::install);
      curl_easy_setopt(h, CURLOPT_SSL_CTX_DATA, &material);
    }
    if (!m_options.proxy_url.empty()) curl_easy_setopt(h, CURLOPT_PROXY, m_options.proxy_url.c_str());

    if (request.method == "GET") {
      curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else if (request.method == "HEAD") {
      curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
      if (!request.body.empty() || request.method != "DELETE") {
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.c_str());
      }
    }
    SlistPtr headers;
    auto add = [&](const std::string& line) {
      curl_slist* next = curl_slist_append(headers.get(), line.c_str());
      if (!next) fail(ErrorKind::internal, "out of memory building request headers");
      headers.release();
      headers.reset(next);
    };
    for (const auto& [k, v] : request.headers) add(k + ": " + v);
    add("Expect:");  // no 100-continue round trip for request bodies
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
    BodySink sink{&response.body, request.max_body_bytes};
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &response.headers);

    CURLcode rc = curl_easy_perform(h);
    ++m_requests;
    long new_connections = 0;
    curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &new_connections);
    m_connections_made += static_cast<uint64_t>(new_connections);
    if (rc != CURLE_OK) {
      response.status = 0;
      response.failure = sink.exceeded ? TransportFailure::too_large : classify(rc);
      response.failure_detail = sink.exceeded ? "the answer is larger than " + std::to_string(request.max_body_bytes >> 20) + " MiB"
                                : errbuf[0]   ? std::string(errbuf.data())
                                              : curl_easy_strerror(rc);
      response.body.clear();
      while (!response.failure_detail.empty() && std::isspace(static_cast<unsigned char>(response.failure_detail.back())))
        response.failure_detail.pop_back();
      return;
    }
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    response.status = static_cast<int>(status);
  }

  TransportOptions m_options;
  std::shared_ptr<Connections> m_connections;
  std::mutex m_origins_mutex;
  std::set<std::string> m_origins;  // attached to m_connections
  std::atomic<uint64_t> m_requests{0};
  std::atomic<uint64_t> m_connections_made{0};
};

}  // namespace

std::unique_ptr<HttpClient> make_curl_client(const TransportOptions& options) {
  return std::make_unique<CurlHttpClient>(options);
}

}  // namespace emco::kube
