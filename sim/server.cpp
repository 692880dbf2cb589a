// The simulator's network side: one libevent loop thread, one evhttp with
// a shared port (clusters by path prefix) and optional own ports, TLS through
// bufferevent_openssl, authentication, fault injection, watches and the
// timer that drives readiness, fault files and persistence.

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <queue>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "core/util/socket_port.hpp"
#include "core/util/strings.hpp"
#include "sim/cluster.hpp"
#include "sim/sim.hpp"
#include "sim/tls.hpp"
#include "sim/versions.hpp"

namespace emco::sim {

using nlohmann::json;
using namespace detail;
namespace fs = std::filesystem;

namespace {

void write_private_file(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(ErrorKind::failed, "cannot write '" + tmp + "'");
    out << content;
  }
  ::chmod(tmp.c_str(), 0600);
  fs::rename(tmp, path);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void make_private_dir(const std::string& path) {
  fs::create_directories(path);
  ::chmod(path.c_str(), 0700);
}

const char* reason_phrase(int code) {
  switch (code) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
  }
  return "Status";
}

std::once_flag g_threads_once;

}  // namespace

bool Fault::refusing(int64_t now) const {
  if (refuse) return true;
  if (down_until_ms > now) return true;
  if (flap_period_ms > 0 && flap_down_ms > 0) return (now % flap_period_ms) < flap_down_ms;
  return false;
}

json fault_to_json(const Fault& f) {
  return {{"latencyMs", f.latency_ms},        {"errorRate", f.error_rate},
          {"errorCode", f.error_code},        {"retryAfterSeconds", f.retry_after_s},
          {"refuse", f.refuse},               {"downUntilMs", f.down_until_ms},
          {"flapPeriodMs", f.flap_period_ms}, {"flapDownMs", f.flap_down_ms},
          {"expiredCredentials", f.expired_credentials}};
}

Fault fault_from_json(const json& j) {
  if (!j.is_object()) fail(ErrorKind::invalid, "a fault must be a JSON object");
  Fault f;
  try {
    f.latency_ms = j.value("latencyMs", 0);
    f.error_rate = j.value("errorRate", 0.0);
    f.error_code = j.value("errorCode", 503);
    f.retry_after_s = j.value("retryAfterSeconds", 1);
    f.refuse = j.value("refuse", false);
    f.down_until_ms = j.value("downUntilMs", int64_t{0});
    f.flap_period_ms = j.value("flapPeriodMs", int64_t{0});
    f.flap_down_ms = j.value("flapDownMs", int64_t{0});
    f.expired_credentials = j.value("expiredCredentials", false);
  } catch (const json::exception& e) {
    fail(ErrorKind::invalid, std::string("invalid fault: ") + e.what());
  }
  if (f.error_rate < 0 || f.error_rate > 1) fail(ErrorKind::invalid, "fault error rate must be between 0 and 1");
  if (f.error_code != 500 && f.error_code != 503 && f.error_code != 429)
    fail(ErrorKind::invalid, "fault error code must be 500, 503 or 429");
  if (f.latency_ms < 0) fail(ErrorKind::invalid, "fault latency must not be negative");
  return f;
}

struct Simulator::Impl {
  struct Slot {
    std::unique_ptr<Cluster> api;
    std::string token;
    Fault base_fault;
    bool has_file_fault = false;
    Fault file_fault;
    int own_port = 0;
    evhttp_bound_socket* own_socket = nullptr;
    const Fault& fault() const { return has_file_fault ? file_fault : base_fault; }
  };
  struct Delayed;
  struct WatchStream;
  struct Conn {
    int cluster = -2;  // -2 unknown, -1 shared port
    bool identity_done = false;
    CertIdentity identity;
    std::set<Delayed*> delayed;
    std::set<WatchStream*> watches;
  };
  struct Delayed {
    Impl* impl;
    evhttp_request* req;
    evhttp_connection* conn;
    size_t cluster;
    std::string path;
    Identity identity;
    event* timer = nullptr;
  };
  struct WatchStream {
    Impl* impl;
    evhttp_request* req;
    evhttp_connection* conn;
    size_t cluster;
    uint64_t id;
    event* timer = nullptr;
  };

  SimOptions opts;
  std::string dir;
  bool temp_dir = false;
  std::unique_ptr<CertAuthority> ca;
  std::string secret;
  ClusterEnv env;
  std::vector<Slot> slots;
  std::unordered_map<std::string, size_t> by_name;
  std::unordered_map<int, size_t> by_port;
  // Recursive: libevent can close a connection (calling on_close) from
  // inside a send we make while holding it.
  mutable std::recursive_mutex mutex;
  event_base* base = nullptr;
  evhttp* http = nullptr;
  SSL_CTX* ssl_ctx = nullptr;
  event* tick_event = nullptr;
  int port = 0;
  std::thread thread;
  bool started = false;
  std::priority_queue<std::pair<int64_t, size_t>, std::vector<std::pair<int64_t, size_t>>, std::greater<>> timers;
  std::unordered_map<evhttp_connection*, Conn> conns;
  std::set<size_t> own_port_faults;  // clusters with own ports whose listener follows a fault
  std::mt19937_64 rng{std::random_device{}()};
  int64_t faults_mtime = 0;
  int64_t nodes_mtime = 0;
  int64_t last_fault_check = 0;
  int64_t last_persist = 0;
  bool trace = std::getenv("EMCO_SIM_TRACE") != nullptr;  // one stderr line per request, for debugging

  explicit Impl(SimOptions o) : opts(std::move(o)) {}

  // ---- setup ----

  void init_clusters() {
    std::vector<std::string> names = opts.names;
    if (names.empty()) {
      if (opts.clusters < 1) fail(ErrorKind::invalid, "the simulator needs at least one cluster");
      size_t width = std::to_string(opts.clusters).size();
      for (int i = 1; i <= opts.clusters; ++i) {
        std::string n = std::to_string(i);
        names.push_back("cluster-" + std::string(width - n.size(), '0') + n);
      }
    }
    env.ca = ca.get();
    env.ready_delay_ms = opts.ready_delay_ms;
    env.crd_establish_delay_ms = opts.crd_establish_delay_ms;
    env.finalize_delay_ms = opts.finalize_delay_ms;
    env.version_minor = opts.version_minor;
    env.nodes = opts.nodes;
    env.lb_delay_ms = opts.lb_delay_ms;
    IpRange lb = parse_ip_range(opts.lb_ip_range);
    env.lb_first = lb.first;
    env.lb_last = lb.last;
    for (const auto& c : opts.preinstall) preinstalled_objects(c);  // an unknown name fails here, before any cluster
    env.preinstall = opts.preinstall;
    env.schedule = [this](size_t index, int64_t due) { timers.push({due, index}); };
    slots.resize(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      const auto& n = names[i];
      if (n.empty() || n.find('/') != std::string::npos || by_name.count(n))
        fail(ErrorKind::invalid, "invalid or duplicate cluster name '" + n + "'");
      by_name[n] = i;
      std::string prefix = "/clusters/" + n;
      slots[i].api = std::make_unique<Cluster>(i, n, prefix, env);
      slots[i].token = hmac_hex(secret, n).substr(0, 48);
      auto f = opts.faults.find(n);
      if (f == opts.faults.end()) f = opts.faults.find("*");
      if (f != opts.faults.end()) slots[i].base_fault = f->second;
    }
  }

  void load_state() {
    for (auto& s : slots) {
      std::string text = read_text(dir + "/state/" + s.api->name() + ".json");
      if (text.empty()) continue;
      json snap = json::parse(text, nullptr, false);
      if (snap.is_object()) s.api->restore(snap);
    }
  }

  void persist(bool all) {
    make_private_dir(dir + "/state");
    for (auto& s : slots) {
      if (!all && !s.api->dirty()) continue;
      if (!s.api->dirty() && !fs::exists(dir + "/state/" + s.api->name() + ".json") && s.api->requests() == 0)
        continue;
      write_private_file(dir + "/state/" + s.api->name() + ".json", s.api->snapshot().dump());
      s.api->clear_dirty();
    }
  }

  std::string server_url(size_t i) const {
    std::string scheme = opts.tls ? "https://" : "http://";
    if (opts.own_ports && slots[i].own_port)
      return scheme + opts.host + ":" + std::to_string(slots[i].own_port);
    return scheme + opts.host + ":" + std::to_string(port) + "/clusters/" + slots[i].api->name();
  }

  void write_kubeconfigs() {
    make_private_dir(dir + "/kubeconfigs");
    std::string ca_data = base64_encode(ca->cert_pem());
    for (size_t i = 0; i < slots.size(); ++i) {
      const std::string& n = slots[i].api->name();
      std::string user;
      if (opts.auth == AuthMode::client_cert) {
        KeyPair kp = ca->issue_client("emco-admin", {"system:masters"});
        slots[i].api->trust_certificate(identity_of_pem(kp.cert_pem).fingerprint);
        user = "    client-certificate-data: " + base64_encode(kp.cert_pem) + "\n    client-key-data: " + base64_encode(kp.key_pem) +
               "\n";
      } else {
        user = "    token: " + slots[i].token + "\n";
      }
      std::string text = "apiVersion: v1\nkind: Config\nclusters:\n- name: " + n + "\n  cluster:\n    server: " +
                         server_url(i) + "\n" +
                         (opts.tls ? "    certificate-authority-data: " + ca_data + "\n" : std::string()) +
                         "users:\n- name: " + n + "-admin\n  user:\n" + user + "contexts:\n- name: " + n +
                         "\n  context:\n    cluster: " + n + "\n    user: " + n +
                         "-admin\n    namespace: default\ncurrent-context: " + n + "\npreferences: {}\n";
      write_private_file(dir + "/kubeconfigs/" + n + ".yaml", text);
    }
  }

  evhttp_bound_socket* bind(int want_port) {
    evhttp_bound_socket* h = evhttp_bind_socket_with_handle(http, opts.host.c_str(), static_cast<uint16_t>(want_port));
    return h;
  }

  static int bound_port(evhttp_bound_socket* h) { return emco::bound_port(evhttp_bound_socket_get_fd(h)); }

  // ---- request handling ----

  static bufferevent* make_bev(event_base* base, void* arg) {
    auto* self = static_cast<Impl*>(arg);
    SSL* ssl = SSL_new(self->ssl_ctx);
    bufferevent* bev =
        bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
    if (bev) bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    return bev;
  }

  static void on_close(evhttp_connection* conn, void* arg) {
    auto* self = static_cast<Impl*>(arg);
    std::lock_guard lock(self->mutex);
    auto it = self->conns.find(conn);
    if (it == self->conns.end()) return;
    for (Delayed* d : it->second.delayed) {
      // A detached request is the timer's to answer (which frees it); one
      // still attached dies with the connection.
      if (evhttp_request_get_connection(d->req) == conn) d->req = nullptr;
      d->conn = nullptr;
    }
    for (WatchStream* w : it->second.watches) {
      self->slots[w->cluster].api->close_watch(w->id);
      if (w->timer) event_free(w->timer);
      if (evhttp_request_get_connection(w->req) != conn) evhttp_send_reply_end(w->req);
      delete w;
    }
    self->conns.erase(it);
  }

  Conn& conn_state(evhttp_connection* conn) {
    auto it = conns.find(conn);
    if (it != conns.end()) return it->second;
    evhttp_connection_set_closecb(conn, &Impl::on_close, this);
    // Small answers on keep-alive connections: without TCP_NODELAY, Nagle and
    // the client's delayed ACK add ~40 ms to every request.
    if (bufferevent* bev = evhttp_connection_get_bufferevent(conn)) {
      int one = 1;
      setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return conns[conn];
  }

  static void drop_later(evutil_socket_t, short, void* arg) {
    auto* pair = static_cast<std::pair<Impl*, evhttp_connection*>*>(arg);
    Impl* self = pair->first;
    evhttp_connection* conn = pair->second;
    delete pair;
    bool live;
    {
      std::lock_guard lock(self->mutex);
      live = self->conns.count(conn) != 0;
    }
    if (live) evhttp_connection_free(conn);
  }

  void drop(evhttp_connection* conn) {
    // Freeing a connection inside its own request callback is unsafe: do it
    // from the loop once the callback has returned.
    auto* arg = new std::pair<Impl*, evhttp_connection*>(this, conn);
    timeval zero{0, 0};
    event_base_once(base, -1, EV_TIMEOUT, &Impl::drop_later, arg, &zero);
  }

  static void send(evhttp_request* req, const Response& r) {
    evkeyvalq* h = evhttp_request_get_output_headers(req);
    evhttp_add_header(h, "Content-Type", r.content_type.c_str());
    evhttp_add_header(h, "Cache-Control", "no-cache, private");
    for (const auto& [k, v] : r.headers) evhttp_add_header(h, k.c_str(), v.c_str());
    evbuffer* buf = evbuffer_new();
    evbuffer_add(buf, r.body.data(), r.body.size());
    evhttp_send_reply(req, r.status, reason_phrase(r.status), buf);
    evbuffer_free(buf);
  }

  static void on_request(evhttp_request* req, void* arg) { static_cast<Impl*>(arg)->request(req); }

  void request(evhttp_request* req) {
    evhttp_connection* conn = evhttp_request_get_connection(req);
    const evhttp_uri* uri = evhttp_request_get_evhttp_uri(req);
    const char* raw_path = uri ? evhttp_uri_get_path(uri) : nullptr;
    std::string path;
    if (raw_path) {
      size_t len = 0;
      char* decoded = evhttp_uridecode(raw_path, 0, &len);
      if (decoded) {
        path.assign(decoded, len);
        free(decoded);
      }
    }
    if (path.empty()) path = "/";

    std::unique_lock lock(mutex);
    Conn& cs = conn_state(conn);
    if (cs.cluster == -2) {
      bufferevent* bev = evhttp_connection_get_bufferevent(conn);
      int p = bev ? emco::bound_port(bufferevent_getfd(bev)) : 0;
      auto it = by_port.find(p);
      cs.cluster = it == by_port.end() ? -1 : static_cast<int>(it->second);
    }
    long index = cs.cluster;
    if (starts_with(path, "/clusters/")) {
      size_t end = path.find('/', 10);
      std::string name = path.substr(10, end == std::string::npos ? std::string::npos : end - 10);
      auto it = by_name.find(name);
      if (it == by_name.end() || (index >= 0 && static_cast<size_t>(index) != it->second)) {
        send(req, status_error(404, "NotFound", "the server could not find the requested resource"));
        return;
      }
      index = static_cast<long>(it->second);
      path = end == std::string::npos ? "/" : path.substr(end);
      // serverRelativeURLs carry the prefix; a client that joins them to
      // the server URL repeats it.
      std::string again = "/clusters/" + name + "/";
      if (starts_with(path, again)) path = path.substr(again.size() - 1);
    }
    if (index < 0) {
      if (path == "/healthz" || path == "/livez" || path == "/readyz") {
        Response ok;
        ok.content_type = "text/plain; charset=utf-8";
        ok.body = "ok";
        send(req, ok);
      } else {
        send(req, status_error(404, "NotFound", "the server could not find the requested resource"));
      }
      return;
    }
    Slot& slot = slots[static_cast<size_t>(index)];
    const Fault& fault = slot.fault();
    int64_t now = unix_ms();
    if (fault.refusing(now)) {
      drop(conn);
      return;
    }
    bool anonymous = path == "/version" || path == "/healthz" || path == "/livez" || path == "/readyz";
    Identity identity;
    if (!anonymous || fault.expired_credentials) {
      bool ok = false;
      const char* auth = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
      if (auth && starts_with(auth, "Bearer ")) {
        ok = std::string(auth + 7) == slot.token;
        if (ok) identity = {"emco-admin", {"system:masters", "system:authenticated"}};
      } else if (opts.tls) {
        if (!cs.identity_done) {
          bufferevent* bev = evhttp_connection_get_bufferevent(conn);
          cs.identity = peer_identity(bev ? bufferevent_openssl_get_ssl(bev) : nullptr);
          cs.identity_done = true;
        }
        if (!cs.identity.common_name.empty() && slot.api->trusts_certificate(cs.identity.fingerprint)) {
          ok = true;
          identity.user = cs.identity.common_name;
          identity.groups = cs.identity.orgs;
          identity.groups.push_back("system:authenticated");
        }
      }
      if (!ok && anonymous && !fault.expired_credentials) ok = true;
      if (!ok || fault.expired_credentials) {
        send(req, status_error(401, "Unauthorized", "Unauthorized"));
        return;
      }
    }
    if (fault.error_rate > 0 && std::uniform_real_distribution<double>(0, 1)(rng) < fault.error_rate) {
      Response r;
      if (fault.error_code == 429)
        r = status_error(429, "TooManyRequests", "Too many requests, please try again later.",
                         json{{"retryAfterSeconds", fault.retry_after_s}});
      else if (fault.error_code == 503)
        r = status_error(503, "ServiceUnavailable", "the server is currently unable to handle the request",
                         json{{"retryAfterSeconds", fault.retry_after_s}});
      else
        r = status_error(500, "InternalError",
                         "an error on the server (\"simulated fault\") has prevented the request from succeeding");
      if (fault.error_code != 500) r.headers.push_back({"Retry-After", std::to_string(fault.retry_after_s)});
      send(req, r);
      return;
    }
    if (fault.latency_ms > 0) {
      auto* d = new Delayed{this, req, conn, static_cast<size_t>(index), path, identity};
      d->timer = evtimer_new(base, &Impl::on_delayed, d);
      cs.delayed.insert(d);
      timeval tv{fault.latency_ms / 1000, (fault.latency_ms % 1000) * 1000};
      evtimer_add(d->timer, &tv);
      return;
    }
    serve(req, conn, static_cast<size_t>(index), path, identity);
  }

  static void on_delayed(evutil_socket_t, short, void* arg) {
    auto* d = static_cast<Delayed*>(arg);
    Impl* self = d->impl;
    std::unique_lock lock(self->mutex);
    event_free(d->timer);
    if (d->conn) {
      auto it = self->conns.find(d->conn);
      if (it != self->conns.end()) it->second.delayed.erase(d);
    }
    if (d->req) {
      if (d->conn)
        self->serve(d->req, d->conn, d->cluster, d->path, d->identity);
      else
        evhttp_send_reply(d->req, 503, "Service Unavailable", nullptr);  // frees the detached request
    }
    delete d;
  }

  void serve(evhttp_request* req, evhttp_connection* conn, size_t index, const std::string& path,
             const Identity& identity) {
    Request r;
    switch (evhttp_request_get_command(req)) {
      case EVHTTP_REQ_GET: r.method = "GET"; break;
      case EVHTTP_REQ_POST: r.method = "POST"; break;
      case EVHTTP_REQ_PUT: r.method = "PUT"; break;
      case EVHTTP_REQ_DELETE: r.method = "DELETE"; break;
      case EVHTTP_REQ_PATCH: r.method = "PATCH"; break;
      case EVHTTP_REQ_HEAD: r.method = "HEAD"; break;
      default: r.method = "OTHER"; break;
    }
    r.path = path;
    const evhttp_uri* uri = evhttp_request_get_evhttp_uri(req);
    const char* q = uri ? evhttp_uri_get_query(uri) : nullptr;
    if (q) {
      evkeyvalq params;
      TAILQ_INIT(&params);
      if (evhttp_parse_query_str(q, &params) == 0)
        for (evkeyval* kv = params.tqh_first; kv; kv = kv->next.tqe_next) r.query[kv->key] = kv->value;
      evhttp_clear_headers(&params);
    }
    evkeyvalq* in = evhttp_request_get_input_headers(req);
    if (const char* v = evhttp_find_header(in, "Content-Type")) r.content_type = v;
    if (const char* v = evhttp_find_header(in, "Accept")) r.accept = v;
    if (const char* v = evhttp_find_header(in, "User-Agent")) r.user_agent = v;
    for (evkeyval* kv = in->tqh_first; kv; kv = kv->next.tqe_next) {
      if (evutil_ascii_strcasecmp(kv->key, "Impersonate-User") == 0) r.impersonate_user = kv->value;
      if (evutil_ascii_strcasecmp(kv->key, "Impersonate-Group") == 0) r.impersonate_groups.push_back(kv->value);
    }
    evbuffer* body = evhttp_request_get_input_buffer(req);
    size_t len = evbuffer_get_length(body);
    if (len) r.body.assign(reinterpret_cast<const char*>(evbuffer_pullup(body, static_cast<ssize_t>(len))), len);
    r.identity = identity;

    auto* stream = new WatchStream{this, req, conn, index, 0, nullptr};
    Cluster::WatchSend sink = [stream](const std::string& chunk) {
      evbuffer* buf = evbuffer_new();
      evbuffer_add(buf, chunk.data(), chunk.size());
      evhttp_send_reply_chunk(stream->req, buf);
      evbuffer_free(buf);
    };
    Response res = slots[index].api->handle(r, sink);
    if (trace)
      std::fprintf(stderr, "sim: %s %s %s%s [%s] -> %d\n", slots[index].api->name().c_str(), r.method.c_str(),
                   path.c_str(), q ? (std::string("?") + q).c_str() : "", r.content_type.c_str(), res.status);
    if (!res.watch) {
      delete stream;
      send(req, res);
      return;
    }
    stream->id = res.watch_id;
    conn_state(conn).watches.insert(stream);
    evkeyvalq* h = evhttp_request_get_output_headers(req);
    evhttp_add_header(h, "Content-Type", "application/json");
    evhttp_add_header(h, "Cache-Control", "no-cache, private");
    evhttp_send_reply_start(req, 200, "OK");
    if (!res.body.empty()) sink(res.body);
    if (res.watch_timeout_s > 0) {
      stream->timer = evtimer_new(base, &Impl::on_watch_timeout, stream);
      timeval tv{res.watch_timeout_s, 0};
      evtimer_add(stream->timer, &tv);
    }
  }

  static void on_watch_timeout(evutil_socket_t, short, void* arg) {
    auto* w = static_cast<WatchStream*>(arg);
    Impl* self = w->impl;
    std::lock_guard lock(self->mutex);
    self->slots[w->cluster].api->close_watch(w->id);
    auto it = self->conns.find(w->conn);
    if (it != self->conns.end()) it->second.watches.erase(w);
    event_free(w->timer);
    evhttp_send_reply_end(w->req);
    delete w;
  }

  // ---- the periodic tick ----

  static void on_tick(evutil_socket_t, short, void* arg) { static_cast<Impl*>(arg)->tick(); }

  void tick() {
    std::lock_guard lock(mutex);
    int64_t now = unix_ms();
    while (!timers.empty() && timers.top().first <= now) {
      size_t i = timers.top().second;
      timers.pop();
      int64_t next = slots[i].api->tick(now);
      if (next) timers.push({next, i});
    }
    if (now - last_fault_check >= 500) {
      last_fault_check = now;
      reload_fault_file();
      reload_node_file();
    }
    for (size_t i : own_port_faults) reconcile_listener(i, now);
    if (opts.persist && now - last_persist >= int64_t{opts.persist_interval_s} * 1000) {
      last_persist = now;
      try {
        persist(false);
      } catch (const std::exception&) {
        // The next tick retries; stop() reports a failure to persist.
      }
    }
  }

  void reconcile_listener(size_t i, int64_t now) {
    Slot& s = slots[i];
    if (!opts.own_ports || !s.own_port) return;
    bool refuse = s.fault().refusing(now);
    if (refuse && s.own_socket) {
      evhttp_del_accept_socket(http, s.own_socket);
      s.own_socket = nullptr;
    } else if (!refuse && !s.own_socket) {
      s.own_socket = bind(s.own_port);  // retried every tick until it binds
    }
  }

  void note_fault(size_t i) {
    if (opts.own_ports) own_port_faults.insert(i);
  }

  void reload_fault_file() {
    std::string path = dir + "/faults.json";
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      if (faults_mtime != 0) {
        faults_mtime = 0;
        for (size_t i = 0; i < slots.size(); ++i)
          if (slots[i].has_file_fault) {
            slots[i].has_file_fault = false;
            note_fault(i);
          }
      }
      return;
    }
    int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    if (mtime == faults_mtime) return;
    faults_mtime = mtime;
    json doc = json::parse(read_text(path), nullptr, false);
    if (!doc.is_object()) return;
    json clusters = doc.value("clusters", json::object());
    const json* all = clusters.contains("*") ? &clusters["*"] : nullptr;
    for (size_t i = 0; i < slots.size(); ++i) {
      const json* f = clusters.contains(slots[i].api->name()) ? &clusters[slots[i].api->name()] : all;
      bool had = slots[i].has_file_fault;
      if (f) {
        try {
          slots[i].file_fault = fault_from_json(*f);
          slots[i].has_file_fault = true;
        } catch (const Error&) {
          continue;
        }
      } else {
        slots[i].has_file_fault = false;
      }
      if (had || slots[i].has_file_fault) note_fault(i);
    }
  }

  // dir/nodes.json (written by `emco sim node`): applied whenever it changes.
  void reload_node_file() {
    struct stat st {};
    if (::stat((dir + "/nodes.json").c_str(), &st) != 0) return;
    int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    if (mtime == nodes_mtime) return;
    nodes_mtime = mtime;
    json doc = json::parse(read_text(dir + "/nodes.json"), nullptr, false);
    if (!doc.is_object()) return;
    json clusters = doc.value("clusters", json::object());
    for (auto& s : slots) {
      if (clusters.contains("*")) s.api->apply_nodes(clusters["*"]);
      if (clusters.contains(s.api->name())) s.api->apply_nodes(clusters[s.api->name()]);
    }
  }

  void run() { event_base_dispatch(base); }
};

Simulator::Simulator(SimOptions options) : m_impl(std::make_unique<Impl>(std::move(options))) {}

Simulator::~Simulator() {
  try {
    stop();
  } catch (...) {
    // Destructors must not throw; stop() already released what it could.
  }
}

void Simulator::start() {
  Impl& s = *m_impl;
  if (s.started) return;
  std::call_once(g_threads_once, [] {
    evthread_use_pthreads();
    // A client that goes away mid-answer must not kill the process: OpenSSL
    // writes to the socket without MSG_NOSIGNAL.
    std::signal(SIGPIPE, SIG_IGN);
  });
  // Bad options are refused before anything touches the disk.
  release(s.opts.version_minor);
  parse_ip_range(s.opts.lb_ip_range);
  if (s.opts.dir.empty()) {
    char tmpl[] = "/tmp/emco-sim-XXXXXX";
    if (!mkdtemp(tmpl)) fail(ErrorKind::failed, "cannot create a temporary directory");
    s.dir = tmpl;
    s.temp_dir = true;
  } else {
    s.dir = fs::absolute(s.opts.dir).string();
  }
  make_private_dir(s.dir);
  s.ca = std::make_unique<CertAuthority>(s.dir);
  s.secret = read_text(s.dir + "/secret");
  if (s.secret.empty()) {
    s.secret = random_hex(32);
    write_private_file(s.dir + "/secret", s.secret);
  }
  s.init_clusters();
  if (s.opts.persist) s.load_state();
  s.reload_node_file();  // Nodes recorded before the start

  s.base = event_base_new();
  s.http = evhttp_new(s.base);
  evhttp_set_allowed_methods(s.http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
                                         EVHTTP_REQ_PATCH | EVHTTP_REQ_HEAD);
  evhttp_set_timeout(s.http, 120);
  evhttp_set_gencb(s.http, &Impl::on_request, &s);
  if (s.opts.tls) {
    KeyPair server = s.ca->issue_server({"localhost"}, {"127.0.0.1"});
    s.ssl_ctx = s.ca->server_context(server);
    evhttp_set_bevcb(s.http, &Impl::make_bev, &s);
  }
  evhttp_bound_socket* shared = s.bind(s.opts.port);
  if (!shared) {
    stop();
    fail(ErrorKind::unreachable, "cannot listen on " + s.opts.host + ":" + std::to_string(s.opts.port),
         "is another simulator running? pick another port");
  }
  s.port = Impl::bound_port(shared);
  if (s.opts.own_ports) {
    for (size_t i = 0; i < s.slots.size(); ++i) {
      int want = s.opts.base_port ? s.opts.base_port + static_cast<int>(i) : 0;
      evhttp_bound_socket* h = s.bind(want);
      if (!h) {
        stop();
        fail(ErrorKind::unreachable, "cannot listen on " + s.opts.host + ":" + std::to_string(want));
      }
      s.slots[i].own_socket = h;
      s.slots[i].own_port = Impl::bound_port(h);
      s.by_port[s.slots[i].own_port] = i;
      if (!(s.slots[i].fault() == Fault{})) s.own_port_faults.insert(i);
    }
  }
  s.write_kubeconfigs();
  s.tick_event = event_new(s.base, -1, EV_PERSIST, &Impl::on_tick, &s);
  timeval tv{0, 50 * 1000};
  event_add(s.tick_event, &tv);
  s.last_persist = unix_ms();
  s.started = true;
  s.thread = std::thread([&s] { s.run(); });
}

void Simulator::stop() {
  Impl& s = *m_impl;
  if (s.base && s.thread.joinable()) {
    event_base_loopexit(s.base, nullptr);
    s.thread.join();
  }
  if (s.started && s.opts.persist) s.persist(true);
  s.started = false;
  // Timers of delayed answers and watches first: freeing the evhttp closes
  // every connection (and frees their requests).
  for (auto& [conn, cs] : s.conns) {
    for (auto* d : cs.delayed) {
      event_free(d->timer);
      delete d;
    }
    cs.delayed.clear();
    for (auto* w : cs.watches) {
      if (w->timer) event_free(w->timer);
      s.slots[w->cluster].api->close_watch(w->id);
      delete w;
    }
    cs.watches.clear();
  }
  if (s.http) {
    evhttp_free(s.http);
    s.http = nullptr;
  }
  s.conns.clear();
  if (s.tick_event) {
    event_free(s.tick_event);
    s.tick_event = nullptr;
  }
  if (s.base) {
    event_base_free(s.base);
    s.base = nullptr;
  }
  if (s.ssl_ctx) {
    SSL_CTX_free(s.ssl_ctx);
    s.ssl_ctx = nullptr;
  }
  if (s.temp_dir) {
    std::error_code ec;
    fs::remove_all(s.dir, ec);
    s.temp_dir = false;
  }
}

int Simulator::port() const { return m_impl->port; }
const std::string& Simulator::dir() const { return m_impl->dir; }

std::vector<std::string> Simulator::cluster_names() const {
  std::vector<std::string> out;
  for (const auto& s : m_impl->slots) out.push_back(s.api->name());
  return out;
}

namespace {
size_t slot_of(const Simulator::Impl& s, const std::string& cluster) {
  auto it = s.by_name.find(cluster);
  if (it == s.by_name.end()) fail(ErrorKind::not_found, "simulated cluster '" + cluster + "' not found");
  return it->second;
}
}  // namespace

std::string Simulator::server_url(const std::string& cluster) const {
  return m_impl->server_url(slot_of(*m_impl, cluster));
}

std::string Simulator::kubeconfig_path(const std::string& cluster) const {
  slot_of(*m_impl, cluster);
  return m_impl->dir + "/kubeconfigs/" + cluster + ".yaml";
}

std::string Simulator::ca_path() const { return m_impl->dir + "/ca.crt"; }

json Simulator::get(const std::string& cluster, const std::string& api_version, const std::string& kind,
                    const std::string& ns, const std::string& name) const {
  std::lock_guard lock(m_impl->mutex);
  return m_impl->slots[slot_of(*m_impl, cluster)].api->get(api_version, kind, ns, name);
}

std::vector<json> Simulator::list(const std::string& cluster, const std::string& api_version,
                                  const std::string& kind, const std::string& ns) const {
  std::lock_guard lock(m_impl->mutex);
  return m_impl->slots[slot_of(*m_impl, cluster)].api->list(api_version, kind, ns);
}

size_t Simulator::object_count(const std::string& cluster) const {
  std::lock_guard lock(m_impl->mutex);
  return m_impl->slots[slot_of(*m_impl, cluster)].api->object_count();
}

uint64_t Simulator::requests_served(const std::string& cluster) const {
  std::lock_guard lock(m_impl->mutex);
  return m_impl->slots[slot_of(*m_impl, cluster)].api->requests();
}

std::map<std::string, uint64_t> Simulator::writes_served(const std::string& cluster) const {
  std::lock_guard lock(m_impl->mutex);
  return m_impl->slots[slot_of(*m_impl, cluster)].api->writes();
}

void Simulator::set_fault(const std::string& cluster, const Fault& fault) {
  std::lock_guard lock(m_impl->mutex);
  size_t i = slot_of(*m_impl, cluster);
  m_impl->slots[i].base_fault = fault;
  m_impl->note_fault(i);
}

Fault Simulator::fault(const std::string& cluster) const {
  std::lock_guard lock(m_impl->mutex);
  return m_impl->slots[slot_of(*m_impl, cluster)].fault();
}

}  // namespace emco::sim
