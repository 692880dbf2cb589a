#include "plugins/targets/kube/credentials.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/k8s/fields.hpp"
#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "plugins/targets/kube/pem.hpp"

extern char** environ;

namespace emco::kube {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr size_t k_max_output = 1 << 20;

struct Fd {
  int fd = -1;
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

struct Pipe {
  Fd read, write;
  void open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) fail(ErrorKind::failed, std::string("cannot create a pipe: ") + std::strerror(errno));
    read.fd = fds[0];
    write.fd = fds[1];
  }
};

std::string exec_info(const ExecConfig& exec, const std::string& server, const std::string& ca_pem) {
  json info = {{"apiVersion", exec.api_version.empty() ? "client.authentication.k8s.io/v1" : exec.api_version},
               {"kind", "ExecCredential"},
               {"spec", {{"interactive", false}}}};
  if (exec.provide_cluster_info) {
    json cluster = {{"server", server}};
    if (!ca_pem.empty()) cluster["certificate-authority-data"] = base64_encode(ca_pem);
    info["spec"]["cluster"] = cluster;
  }
  return info.dump();
}

std::string last_line(const std::string& text) {
  std::string t = trim(text);
  auto pos = t.rfind('\n');
  std::string line = pos == std::string::npos ? t : t.substr(pos + 1);
  if (line.size() > 200) line = line.substr(0, 200) + "...";
  return line;
}

}  // namespace

Credentials run_exec_plugin(const ExecConfig& exec, const std::string& cluster_label, const std::string& server,
                            const std::string& ca_pem, std::chrono::milliseconds time_limit) {
  const std::string who = "cluster '" + cluster_label + "': exec credential plugin '" + exec.command + "'";
  auto problem = [&](const std::string& msg, std::string hint = {}) {
    if (hint.empty()) hint = exec.install_hint;
    fail(ErrorKind::unreachable, who + " " + msg, hint);
  };
  if (exec.command.empty()) fail(ErrorKind::invalid, "cluster '" + cluster_label + "': exec plugin names no command");

  // argv and envp, owned here for the lifetime of the spawn call.
  std::vector<std::string> argv_s{exec.command};
  argv_s.insert(argv_s.end(), exec.args.begin(), exec.args.end());
  std::vector<std::string> env_s;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto name = kv.substr(0, kv.find('='));
    bool overridden = name == "KUBERNETES_EXEC_INFO";
    for (const auto& [k, v] : exec.env) overridden = overridden || name == k;
    if (!overridden) env_s.emplace_back(kv);
  }
  for (const auto& [k, v] : exec.env) env_s.push_back(k + "=" + v);
  env_s.push_back("KUBERNETES_EXEC_INFO=" + exec_info(exec, server, ca_pem));
  std::vector<char*> argv, envp;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  for (auto& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);

  Pipe out, err;
  out.open();
  err.open();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write.fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err.write.fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Own process group, so a time-out kills the plugin and whatever it started.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, exec.command.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  out.write.reset();
  err.write.reset();
  if (rc != 0) {
    problem(std::string("cannot be started: ") + std::strerror(rc),
            exec.install_hint.empty() ? "check that the command exists and is executable" : exec.install_hint);
  }

  std::string stdout_text, stderr_text;
  auto deadline = Clock::now() + time_limit;
  bool timed_out = false;
  while (out.read.fd >= 0 || err.read.fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2];
    int n = 0;
    if (out.read.fd >= 0) fds[n++] = {out.read.fd, POLLIN, 0};
    if (err.read.fd >= 0) fds[n++] = {err.read.fd, POLLIN, 0};
    int ready = ::poll(fds, static_cast<nfds_t>(n), static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    for (int i = 0; i < n; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      bool is_out = fds[i].fd == out.read.fd;
      if (got <= 0) {
        (is_out ? out.read : err.read).reset();
        continue;
      }
      std::string& sink = is_out ? stdout_text : stderr_text;
      if (sink.size() < k_max_output) sink.append(buf, static_cast<size_t>(got));
    }
  }
  int status = 0;
  if (timed_out) {
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    problem(fmt::format("did not finish within {:g} s and was stopped", static_cast<double>(time_limit.count()) / 1000.0),
            "check that the plugin does not wait for input; emco runs it non-interactively");
  }
  // Pipes closed: the plugin is exiting; reap it (bounded by the same deadline).
  while (true) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) break;
    if (Clock::now() > deadline) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      problem("did not exit within the time limit and was stopped");
    }
    ::usleep(2000);
  }
  if (WIFSIGNALED(status)) problem("was killed by signal " + std::to_string(WTERMSIG(status)));
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    std::string why = last_line(stderr_text);
    problem("failed with exit code " + std::to_string(WEXITSTATUS(status)) + (why.empty() ? "" : ": " + why));
  }

  return parse_exec_credential(stdout_text, who, exec.install_hint);
}

Credentials parse_exec_credential(std::string_view output, const std::string& who, const std::string& hint) {
  auto problem = [&](const std::string& msg) { fail(ErrorKind::unreachable, who + " " + msg, hint); };
  // Every field is read by its type (k8s::str_field): a value of another
  // JSON type than the API's is the plugin's error, not an exception from
  // the JSON library.
  using k8s::str_field;
  const json doc = json::parse(output, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) problem("printed something that is not an ExecCredential JSON object");
  if (str_field(doc, "kind") != "ExecCredential") problem("printed an object whose kind is not 'ExecCredential'");
  const json& status = k8s::field(doc, "status");
  if (!status.is_object()) problem("printed an ExecCredential without a status");
  Credentials creds;
  creds.token = str_field(status, "token");
  creds.client_cert_pem = str_field(status, "clientCertificateData");
  creds.client_key_pem = str_field(status, "clientKeyData");
  if (creds.token.empty() && (creds.client_cert_pem.empty() || creds.client_key_pem.empty()))
    problem("returned neither a token nor a client certificate and key");
  if (creds.client_cert_pem.empty() != creds.client_key_pem.empty())
    problem("returned a client certificate without its key, or a key without its certificate");
  if (!creds.client_cert_pem.empty()) {
    // Checked here so that a bad pair is named as the plugin's, not found
    // later as a TLS handshake failure with the server.
    try {
      inspect_certificates(creds.client_cert_pem, "its clientCertificateData");
      check_private_key(creds.client_key_pem, "its clientKeyData");
      check_key_matches(creds.client_cert_pem, creds.client_key_pem, "its client certificate");
    } catch (const Error& e) {
      problem("returned a client certificate emco cannot use: " + e.message());
    }
  }
  if (std::string ts = str_field(status, "expirationTimestamp"); !ts.empty()) {
    auto when = parse_rfc3339(ts);
    if (!when) problem("returned an expirationTimestamp that is not RFC 3339");
    creds.expiry = when;
  }
  return creds;
}

CredentialSource::CredentialSource(const ClusterAccess& access, std::chrono::milliseconds exec_time_limit)
    : m_access(access), m_time_limit(exec_time_limit) {}

Credentials CredentialSource::get() {
  if (!m_access.exec) {
    Credentials c;
    c.token = m_access.token;
    c.username = m_access.username;
    c.password = m_access.password;
    c.client_cert_pem = m_access.client_cert_pem;
    c.client_key_pem = m_access.client_key_pem;
    return c;
  }
  std::lock_guard lock(m_mutex);
  auto now = std::chrono::system_clock::now();
  if (m_cached && (!m_cached->expiry || *m_cached->expiry > now + std::chrono::seconds(10))) return *m_cached;
  m_cached.reset();
  Credentials c = run_exec_plugin(*m_access.exec, m_access.label, m_access.server, m_access.ca_pem, m_time_limit);
  // Client-go keeps the kubeconfig's static client certificate when the plugin
  // only returns a token.
  if (c.client_cert_pem.empty()) {
    c.client_cert_pem = m_access.client_cert_pem;
    c.client_key_pem = m_access.client_key_pem;
  }
  m_cached = c;
  return c;
}

bool CredentialSource::invalidate() {
  if (!m_access.exec) return false;
  std::lock_guard lock(m_mutex);
  bool had = m_cached.has_value();
  m_cached.reset();
  return had;
}

}  // namespace emco::kube
