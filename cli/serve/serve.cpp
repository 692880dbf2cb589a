// `emco serve`: EMCO's REST API v2 over the workspace (cli/serve/api.hpp) on
// the HTTP server of cli/serve/http.hpp, with a delivery thread that drives
// the queue lifecycle operations leave, as `emco sync` does.

#include <openssl/crypto.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <sstream>
#include <thread>

#include "cli/interrupt.hpp"
#include "cli/serve/api.hpp"
#include "cli/serve/dashboard.hpp"
#include "cli/serve/http.hpp"
#include "cli/table.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/util/error.hpp"
#include "core/util/file_io.hpp"
#include "core/util/strings.hpp"

namespace emco::cli {

namespace {

// One line per event on stderr, whole lines from any thread.
class Log {
public:
  explicit Log(Context& ctx) : m_ctx(ctx) {}
  void line(const std::string& text) {
    std::lock_guard lock(m_mutex);
    m_ctx.err << "emco serve: " << text << "\n" << std::flush;
  }
  void warn(const std::string& text) {
    std::lock_guard lock(m_mutex);
    m_ctx.warn(text);
  }

private:
  Context& m_ctx;
  std::mutex m_mutex;
};

// Delivers what lifecycle operations queued, on a thread and a workspace
// connection of its own: lifecycle::resume (what `emco sync` runs) whenever
// an operation was recorded and every 2 s (work other emco processes left
// queued). Contexts another live process delivers are left to it. Stopping
// ends a delivery midway; its work stays queued for the next start or
// `emco sync`.
class Deliverer {
public:
  Deliverer(Context& parent, Log& log) : m_parent(parent), m_log(log) {}
  ~Deliverer() { stop(); }
  void start() {
    m_thread = std::thread([this] { loop(); });
  }
  void kick() {
    std::lock_guard lock(m_mutex);
    m_kicked = true;
    m_wake.notify_one();
  }
  void stop() {
    m_stopping = true;
    kick();
    if (m_thread.joinable()) m_thread.join();
  }

private:
  void loop() {
    while (!m_stopping) {
      {
        std::unique_lock lock(m_mutex);
        m_wake.wait_for(lock, std::chrono::seconds(2), [this] { return m_kicked || m_stopping.load(); });
        m_kicked = false;
      }
      if (m_stopping) break;
      // A connection per round: one kept open could go on reading an old
      // snapshot of the workspace (a cached statement left pending).
      std::ostringstream sink;
      auto ctx = m_parent.sibling(sink, sink);
      lifecycle::OperationOptions o;
      o.runtime = &ctx->runtime();
      o.timeout = std::chrono::hours(24);
      o.interrupt = &m_stopping;
      o.wait_for_others = false;
      o.retry_children = false;  // every round: a failed planner waits for 'emco sync'
      try {
        for (const auto& r : lifecycle::resume(ctx->store(), o)) {
          std::string line = "delivered context " + r.context + ": " + r.status;
          if (!r.failures.empty()) line += " (" + r.failures.front() + ")";
          m_log.line(line);
        }
      } catch (const Error& e) {
        m_log.line("delivery: " + e.message());
      }
    }
  }

  Context& m_parent;
  Log& m_log;
  std::thread m_thread;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_kicked = false;
  std::atomic<bool> m_stopping{false};
};

bool authorized(const http::Request& req, const std::string& token) {
  const std::string given = req.header("authorization");
  if (!starts_with(given, "Bearer ")) return false;
  const std::string presented = given.substr(7);
  return presented.size() == token.size() && CRYPTO_memcmp(presented.data(), token.data(), token.size()) == 0;
}

int run_serve(Context& ctx, const Invocation& inv) {
  http::Options ho;
  std::vector<std::string> listen = inv.all("listen");
  if (listen.empty()) listen = {"127.0.0.1:9015"};
  for (const auto& l : listen) ho.listen.push_back(http::parse_address(l));
  const int workers = inv.get_int32("workers", 4);
  if (workers < 1 || workers > 256) fail(ErrorKind::usage, "'--workers' must be from 1 to 256");
  ho.workers = static_cast<std::size_t>(workers);
  ho.tls_cert = inv.get("tls-cert");
  ho.tls_key = inv.get("tls-key");
  std::string token;
  if (inv.has("token-file")) {
    token = trim(read_input_file(inv.get("token-file"), {.what = "token file", .max_bytes = 4096}));
    if (token.empty()) fail(ErrorKind::usage, "the token file '" + inv.get("token-file") + "' is empty");
  }
  for (const auto& a : ho.listen) {
    if (http::is_loopback(a.host)) continue;
    if (token.empty() || ho.tls_cert.empty())
      fail(ErrorKind::usage,
           "listening on " + a.host + " (beyond loopback) needs a token and TLS",
           "add --token-file FILE (clients send 'Authorization: Bearer <token>') and --tls-cert/--tls-key; "
           "only 127.0.0.1, ::1 and localhost count as loopback");
  }
  ctx.store();  // no workspace: fail before listening
  ctx.delivers = true;
  Log log(ctx);
  Deliverer deliverer(ctx, log);
  serve::ApiOptions api;
  api.queued = [&deliverer] { deliverer.kick(); };
  api.warn = [&log](const std::string& w) { log.warn(w); };
  const bool quiet = ctx.quiet;
  const serve::DashboardOptions dashboard{.allow_actions = inv.has("allow-actions"), .token = !token.empty()};
  http::Server server(ho, [&](const http::Request& req) {
    http::Response res;
    if (auto page = serve::dashboard_public(req, dashboard)) {
      res = *page;
    } else if (!token.empty() && !authorized(req, token)) {
      res = {.status = 401, .content_type = "text/plain; charset=utf-8", .body = "Unauthorized\n",
             .headers = {{"WWW-Authenticate", "Bearer"}}};
    } else {
      // A connection to the workspace per request, opened on the worker's
      // thread (one thread per connection): a connection kept open could
      // go on reading an old snapshot (a cached statement left pending).
      std::ostringstream sink;
      if (auto refused = serve::refuse_browser_write(req, dashboard)) {
        res = *refused;
      } else {
        auto request_ctx = ctx.sibling(sink, sink);
        if (auto answer = serve::dashboard_api(*request_ctx, req)) res = *answer;
        else res = serve::handle(*request_ctx, req, api);
      }
    }
    if (!quiet)
      log.line(req.method + " " + req.path + (req.query.empty() ? "" : "?" + req.query) + " " + std::to_string(res.status));
    return res;
  });
  InterruptGuard guard;
  server.start();
  deliverer.start();
  for (const auto& u : server.urls()) ctx.out << "serving EMCO's REST API on " << u << "/v2/\n";
  for (const auto& u : server.urls())
    ctx.out << "dashboard on " << u << "/ (" << (dashboard.allow_actions ? "actions allowed" : "read-only") << ")\n";
  ctx.out << std::flush;
  while (!g_interrupted) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  server.stop();
  deliverer.stop();
  ctx.note("stopped; work still queued stays queued ('emco sync' or the next 'emco serve' delivers it)");
  return 0;
}

}  // namespace

std::vector<CommandSpec> serve_commands() {
  return {{.path = {"serve"},
           .summary = "serve EMCO's REST API v2 over the workspace",
           .description =
               "Answers EMCO's REST API on /v2/<anchor> (the anchors of emcoctl files are its paths) from the\n"
               "workspace, so scripts with curl, other orchestrators and upstream's emcoctl can drive emco over\n"
               "HTTP: GET on resources, collections and status anchors (with EMCO's query parameters), POST to\n"
               "a collection (JSON {metadata, spec}, or multipart/form-data with a 'metadata' part and 'file' or\n"
               "'files' parts, as emcoctl uploads kubeconfigs, charts and profiles), PUT and DELETE on a resource,\n"
               "POST on lifecycle anchors (approve, instantiate, update, rollback, terminate, stop, ...).\n"
               "Requests run the same code as 'emco apply' and 'emco get': the same validation, the same\n"
               "answers. Status codes are upstream's: 201 created, 200 updated or read, 202 operation accepted,\n"
               "204 deleted, 400 invalid, 404 not found, 405 method, 409 conflict (a POST of a resource that\n"
               "exists: PUT changes it), 501 not implemented; errors are plain text. A lifecycle operation is recorded and answered at once; a thread of the server\n"
               "delivers it (as 'emco sync' would) and its progress shows in .../status. Every service's port\n"
               "may point at the one server (repeat --listen). Only 127.0.0.1, ::1 and localhost count as\n"
               "loopback: any other address needs --token-file and --tls-cert/--tls-key. Runs until Ctrl-C;\n"
               "one line per request on stderr (not with --quiet).\n"
               "The dashboard is at / on the same address: the fleet, projects, DIGs with an apps x clusters\n"
               "matrix (aggregated by provider or label), logical clouds, live progress. It is read-only: a\n"
               "write from a browser (a request with Origin, Sec-Fetch-Site or X-EMCO-Client) is refused 403\n"
               "unless --allow-actions, and then still when it comes from another site's page. Clients that\n"
               "are not browsers (curl, emcoctl) are not affected. With --token-file the dashboard asks for\n"
               "the token.",
           .flags = {{.name = "listen", .value = "HOST:PORT",
                      .help = "address to listen on (port 0: any free port)", .repeatable = true,
                      .default_value = "127.0.0.1:9015"},
                     {.name = "token-file", .value = "FILE",
                      .help = "require 'Authorization: Bearer <token>' with the token in FILE", .complete = Complete::file},
                     {.name = "tls-cert", .value = "FILE", .help = "serve HTTPS with this PEM certificate (and chain)",
                      .complete = Complete::file},
                     {.name = "tls-key", .value = "FILE", .help = "the PEM private key of --tls-cert", .complete = Complete::file},
                     {.name = "workers", .value = "N", .help = "requests served at once", .default_value = "4"},
                     {.name = "allow-actions",
                      .help = "let the dashboard (and any browser) run lifecycle operations and other writes"}},
           .examples = {"emco serve",
                        "emco serve --listen 127.0.0.1:9015 --listen 127.0.0.1:9061 --listen 127.0.0.1:9077",
                        "emco serve --listen 0.0.0.0:9015 --token-file token --tls-cert server.crt --tls-key server.key",
                        "emco serve --allow-actions   # then open http://127.0.0.1:9015/",
                        "curl -s localhost:9015/v2/projects",
                        "curl -s -X POST localhost:9015/v2/projects/p1/composite-apps/ca/v1/deployment-intent-groups/dig/instantiate"},
           .handler = run_serve}};
}

}  // namespace emco::cli
