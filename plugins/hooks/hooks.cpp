// emco hooks (plugin.hpp): the kind, its check, and the OperationHooks that
// run them.

#include "plugins/hooks/plugin.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>

#include <nlohmann/json.hpp>

#include "core/appcontext/header_rows.hpp"
#include "core/appcontext/status_rows.hpp"
#include "core/util/error.hpp"
#include "core/util/go_duration.hpp"
#include "core/util/strings.hpp"
#include "plugins/targets/kube/http.hpp"

extern char** environ;

namespace emco::plugins::hooks {

using nlohmann::json;
using resource::Key;
namespace lc = emco::lifecycle;
namespace ac = emco::appcontext;
using namespace std::chrono;

namespace {

constexpr size_t k_max_output = 64 * 1024;  // kept of a command's output (the tail beyond is dropped)

json spec_of(const store::Resource& r) { return json::parse(r.data).value("spec", json::object()); }

milliseconds timeout_of(const json& spec) {
  std::int64_t ns = 0;
  if (!parse_go_duration(spec.value("timeout", "60s"), ns) || ns <= 0) ns = 60'000'000'000;
  return duration_cast<milliseconds>(nanoseconds(ns));
}

// What the hook is told: the operation and where it stands, per cluster.
json facts(const lc::HookCall& call) {
  json clusters = json::object();
  if (ac::exists(call.st, call.context)) {
    auto h = ac::header(call.st, call.context);
    for (const auto& s : ac::resource_states(call.st, h.status_context.empty() ? call.context : h.status_context)) {
      json& c = clusters[s.cluster];
      if (!c.is_object()) c = json::object();
      c[s.status] = c.value(s.status, 0) + 1;
    }
  }
  auto part = [&](const char* e) { return call.dig.get(e).value_or(""); };
  return {{"hookPoint", lc::hook_point_name(call.point)},
          {"operation", call.operation},
          {"project", part("project")},
          {"compositeApp", part("compositeApp")},
          {"compositeAppVersion", part("compositeAppVersion")},
          {"deploymentIntentGroup", part("deploymentIntentGroup")},
          {"revision", call.revision},
          {"contextId", call.context},
          {"clusters", clusters}};
}

lc::HookOutcome run_command(const json& exec, const json& f, milliseconds limit, const std::function<void()>& keepalive) {
  lc::HookOutcome out;
  std::vector<std::string> argv;
  for (const auto& a : exec.value("command", json::array())) argv.push_back(a.get<std::string>());
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  env.push_back("EMCO_HOOK_POINT=" + f["hookPoint"].get<std::string>());
  env.push_back("EMCO_OPERATION=" + f["operation"].get<std::string>());
  env.push_back("EMCO_PROJECT=" + f["project"].get<std::string>());
  env.push_back("EMCO_COMPOSITE_APP=" + f["compositeApp"].get<std::string>());
  env.push_back("EMCO_COMPOSITE_APP_VERSION=" + f["compositeAppVersion"].get<std::string>());
  env.push_back("EMCO_DIG=" + f["deploymentIntentGroup"].get<std::string>());
  env.push_back("EMCO_REVISION=" + std::to_string(f["revision"].get<long>()));
  env.push_back("EMCO_CONTEXT_ID=" + f["contextId"].get<std::string>());
  env.push_back("EMCO_CLUSTER_RESULTS=" + f["clusters"].dump());
  const json extra = exec.value("env", json::object());
  for (const auto& [k, v] : extra.items()) env.push_back(k + "=" + v.get<std::string>());
  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  const std::string dir = exec.value("dir", "");

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    out.message = std::string("cannot run the command: ") + std::strerror(errno);
    return out;
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);  // its own process group: a timeout kills what it started too
    ::dup2(fds[1], 1);
    ::dup2(fds[1], 2);
    int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    if (!dir.empty() && ::chdir(dir.c_str()) != 0) {
      dprintf(2, "cannot enter %s: %s\n", dir.c_str(), std::strerror(errno));
      ::_exit(127);
    }
    ::execvpe(cargv[0], cargv.data(), cenv.data());
    dprintf(2, "cannot run %s: %s\n", cargv[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    out.message = std::string("cannot run the command: ") + std::strerror(errno);
    return out;
  }
  ::setpgid(pid, pid);
  const auto deadline = steady_clock::now() + limit;
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    const auto left = duration_cast<milliseconds>(deadline - steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    if (keepalive) keepalive();
    pollfd p{fds[0], POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    ssize_t got = ::read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // every writer closed: the command ended (or closed its output)
    if (out.log.size() < k_max_output) out.log.append(buf, static_cast<size_t>(got));
  }
  if (timed_out) ::kill(-pid, SIGKILL);
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (out.log.size() > k_max_output) out.log.resize(k_max_output);
  const std::string cmd = join(argv, " ");
  if (timed_out) {
    out.message = "'" + cmd + "' did not finish within " + go_duration_string(duration_cast<nanoseconds>(limit).count()) +
                  " and was killed";
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    out.ok = true;
    out.message = "'" + cmd + "' exited 0";
  } else if (WIFEXITED(status)) {
    out.message = "'" + cmd + "' exited " + std::to_string(WEXITSTATUS(status));
  } else {
    out.message = "'" + cmd + "' was killed by signal " + std::to_string(WTERMSIG(status));
  }
  if (!out.ok) {
    std::string tail = trim(out.log);
    if (tail.size() > 300) tail = "..." + tail.substr(tail.size() - 300);
    if (!tail.empty()) out.message += ": " + tail;
  }
  return out;
}

lc::HookOutcome run_http(const json& http, const json& f, milliseconds limit, const lc::HookCall& call) {
  lc::HookOutcome out;
  kube::HttpRequest req;
  req.method = http.value("method", "POST");
  req.url = http.value("url", "");
  req.headers = {{"Content-Type", "application/json"}};
  const json headers = http.value("headers", json::object());
  for (const auto& [k, v] : headers.items()) req.headers.push_back({k, v.get<std::string>()});
  req.body = f.dump();
  req.timeout = limit;
  req.max_body_bytes = k_max_output;
  kube::HttpResponse resp;
  call.keep_alive_during([&] { resp = kube::make_curl_client({})->send(req); });
  if (resp.failure != kube::TransportFailure::none) {
    out.message = req.method + " " + req.url + " failed: " + resp.failure_detail;
    return out;
  }
  out.log = resp.body;
  out.ok = resp.status >= 200 && resp.status <= 299;
  out.message = req.method + " " + req.url + " answered HTTP " + std::to_string(resp.status);
  if (!out.ok && !trim(resp.body).empty()) out.message += ": " + trim(resp.body).substr(0, 300);
  return out;
}

class EmcoHooks : public lc::OperationHooks {
public:
  std::string name() const override { return "hooks"; }

  std::vector<lc::HookStep> steps(const store::Store& st, const Key& dig, lc::HookPoint point) const override {
    std::vector<lc::HookStep> out;
    for (const auto& r : st.list(resource::kind("emcoHook"), dig)) {
      json s = spec_of(r);
      if (s.value("hookType", "") != lc::hook_point_name(point)) continue;
      out.push_back({"hooks", "custom hook '" + r.key.parts.back().second + "'", r.key.str(), s.value("blocking", true)});
    }
    return out;
  }

  lc::HookOutcome run(const lc::HookCall& call, const lc::HookStep& step) const override {
    auto r = call.st.get(Key::parse(step.ref));
    if (!r) return {false, step.name + " no longer exists", ""};
    json s = spec_of(*r);
    json f = facts(call);
    milliseconds limit = std::min(timeout_of(s), std::max(milliseconds(1000),
                                                          duration_cast<milliseconds>(call.deadline - steady_clock::now())));
    return s.contains("exec") ? run_command(s["exec"], f, limit, call.keepalive) : run_http(s["http"], f, limit, call);
  }
};

// One of exec and http, a command that names something, a timeout Go reads.
void check(const store::Store&, const store::Resource& r) {
  json s = spec_of(r);
  if (s.contains("exec") == s.contains("http"))
    fail(ErrorKind::invalid, "an emco hook runs either a command (spec.exec) or an HTTP call (spec.http)",
         "e.g. exec: {command: [./smoke-test.sh]} or http: {url: https://ci.example.com/gate}");
  if (s.contains("exec") && s["exec"].value("command", json::array()).empty())
    fail(ErrorKind::invalid, "spec.exec.command is empty", "give the program and its arguments: command: [sh, -c, 'make smoke']");
  if (s.contains("http") && !starts_with(s["http"].value("url", ""), "http://") &&
      !starts_with(s["http"].value("url", ""), "https://"))
    fail(ErrorKind::invalid, "spec.http.url must be an http:// or https:// URL");
  std::int64_t ns = 0;
  if (s.contains("timeout") && (!parse_go_duration(s.value("timeout", ""), ns) || ns <= 0))
    fail(ErrorKind::invalid, "spec.timeout '" + s.value("timeout", "") + "' is not a positive Go duration", "e.g. 90s, 5m");
}

}  // namespace

void install(lifecycle::Runtime& runtime) {
  using namespace emco::resource;
  runtime.kinds.push_back(
      {.id = "emcoHook",
       .parent = "deploymentIntentGroup",
       .elements = {"emcoHook"},
       .collection = "emco-hooks",
       .service = "emco",
       .display = "custom hook",
       .spec = obj({req("hookType", one_of({"pre-install", "post-install", "pre-update", "post-update", "pre-termination",
                                            "post-termination"})),
                    opt("blocking", boolean()), opt("timeout", str()),
                    opt("exec", obj({req("command", array(str())), opt("dir", str()), opt("env", map_of(str()))})),
                    opt("http", obj({req("url", str()), opt("method", one_of({"POST", "PUT", "GET"})),
                                     opt("headers", map_of(str()))}))})});
  runtime.checks["emcoHook"] = {.put = check};
  runtime.hooks.push_back(std::make_unique<EmcoHooks>());
  runtime.plugins.push_back({.name = "hooks",
                             .summary = "emco hooks: a local command or an HTTP call around DIG instantiate, update and "
                                        "terminate (an emco extension)",
                             .services = {"emco"},
                             .runs = true});
}

}  // namespace emco::plugins::hooks
