#include "support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace gitops_test {

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "emco-gitops-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  m_path = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(m_path, ec);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_file(const fs::path& path, const std::string& text, int mode) {
  fs::create_directories(path.parent_path());
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  ::chmod(path.c_str(), static_cast<mode_t>(mode));
}

namespace {

std::string drain(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

// Environment for every child: this process's, with no user or system git
// config, a fixed identity and `env` on top, as "NAME=VALUE" strings.
std::vector<std::string> child_env(const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e; ++e) {
    std::string entry = *e;
    auto eq = entry.find('=');
    if (eq != std::string::npos) vars[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  vars["GIT_CONFIG_NOSYSTEM"] = "1";
  vars["GIT_CONFIG_GLOBAL"] = "/dev/null";
  vars["GIT_AUTHOR_NAME"] = "tester";
  vars["GIT_AUTHOR_EMAIL"] = "tester@example.invalid";
  vars["GIT_COMMITTER_NAME"] = "tester";
  vars["GIT_COMMITTER_EMAIL"] = "tester@example.invalid";
  vars["GIT_TERMINAL_PROMPT"] = "0";
  for (const auto& [k, v] : env) vars[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : vars) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& a : strings) out.push_back(a.data());
  out.push_back(nullptr);
  return out;
}

// `program` found on PATH as execvp would ("" when it is not there), or as
// given when it names a path.
std::string resolve_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace

RunResult run(const std::vector<std::string>& argv_in, const fs::path& cwd,
              const std::map<std::string, std::string>& env) {
  int out_pipe[2], err_pipe[2];
  if (::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
  // Everything the child needs is made before fork: another thread (a
  // simulator, a drain) may hold the allocator's lock at that moment, and a
  // child that allocates before exec then waits for it forever.
  std::vector<std::string> argv = argv_in;
  std::vector<std::string> envv = child_env(env);
  const std::string program = resolve_program(argv.at(0));
  auto args = c_strings(argv);
  auto envp = c_strings(envv);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
    if (!program.empty()) ::execve(program.c_str(), args.data(), envp.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  RunResult result;
  // stderr is drained on a thread so a chatty child cannot block on a full pipe.
  std::thread err_reader([&] { result.err = drain(err_pipe[0]); });
  result.out = drain(out_pipe[0]);
  err_reader.join();
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string git(const fs::path& dir, const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv{"git", "-C", dir.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  RunResult r = run(argv, {}, env);
  INFO("git " << Catch::Detail::stringify(args) << " failed: " << r.err);
  REQUIRE(r.status == 0);
  return r.out;
}

void make_bare_repo(const fs::path& path, bool seed) {
  fs::create_directories(path.parent_path());
  RunResult r = run({"git", "init", "-q", "--bare", "-b", "main", path.string()});
  REQUIRE(r.status == 0);
  if (!seed) return;
  TempDir work;
  git(work.path(), {"init", "-q", "-b", "main"});
  write_file(work.path() / "README", "seed\n");
  git(work.path(), {"add", "README"});
  git(work.path(), {"commit", "-q", "-m", "seed"});
  git(work.path(), {"push", "-q", path.string(), "main"});
}

fs::path clone(const std::string& url, const std::string& branch, const fs::path& dest,
               const std::map<std::string, std::string>& env) {
  RunResult r = run({"git", "clone", "-q", "-b", branch, url, dest.string()}, {}, env);
  INFO("git clone " << url << " failed: " << r.err);
  REQUIRE(r.status == 0);
  return dest;
}

emco::gitops::CommitRequest commit_request(emco::gitops::ChangeSet changes, std::string message) {
  emco::gitops::CommitRequest r;
  r.changes = std::move(changes);
  r.message = std::move(message);
  r.author = {"emco test", "emco@example.invalid"};
  return r;
}

std::string show(const fs::path& repo, const std::string& rev, const std::string& path) {
  return git(repo, {"show", rev + ":" + path});
}

int commit_count(const fs::path& repo, const std::string& rev) {
  return std::stoi(git(repo, {"rev-list", "--count", rev}));
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

bool have_program(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

Process::Process(const std::vector<std::string>& argv_in, const fs::path& log) {
  // Made before fork, as in run().
  std::vector<std::string> argv = argv_in;
  std::vector<std::string> envv = child_env({});
  auto args = c_strings(argv);
  auto envp = c_strings(envv);
  m_pid = ::fork();
  if (m_pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
}

Process::~Process() {
  if (m_pid <= 0) return;
  ::kill(m_pid, SIGTERM);
  for (int i = 0; i < 200; ++i) {
    int status;
    if (::waitpid(m_pid, &status, WNOHANG) == m_pid) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(m_pid, SIGKILL);
  int status;
  ::waitpid(m_pid, &status, 0);
}

bool wait_for_port(int port, int ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < deadline) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    if (ok) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

GitDaemon::GitDaemon(const fs::path& root) {
  const std::string daemon = "/usr/lib/git-core/git-daemon";
  if (!have_program(daemon)) FAIL("git daemon is not installed (" << daemon << "): install the git package");
  m_port = free_port();
  m_process = std::make_unique<Process>(
      std::vector<std::string>{daemon, "--reuseaddr", "--listen=127.0.0.1", "--port=" + std::to_string(m_port),
                               "--base-path=" + root.string(), "--export-all", "--enable=receive-pack",
                               "--informative-errors", root.string()},
      root.parent_path() / "git-daemon.log");
  REQUIRE(wait_for_port(m_port));
}

std::string GitDaemon::url(const std::string& repo) const {
  return "git://127.0.0.1:" + std::to_string(m_port) + "/" + repo;
}

HttpServer::HttpServer(const fs::path& root, const fs::path& workdir, const std::string& user,
                       const std::string& password) {
  const std::string lighttpd = "/usr/sbin/lighttpd";
  if (!have_program(lighttpd)) FAIL("lighttpd is not installed (" << lighttpd << "): apt-get install lighttpd");
  m_port = free_port();
  fs::create_directories(workdir / "docroot");
  write_file(workdir / "users", user + ":" + password + "\n", 0600);
  std::ostringstream conf;
  conf << "server.bind = \"127.0.0.1\"\n"
       << "server.port = " << m_port << "\n"
       << "server.document-root = \"" << (workdir / "docroot").string() << "\"\n"
       << "server.errorlog = \"" << (workdir / "error.log").string() << "\"\n"
       << "server.modules = (\"mod_alias\", \"mod_setenv\", \"mod_auth\", \"mod_authn_file\", \"mod_cgi\")\n"
       << "auth.backend = \"plain\"\n"
       << "auth.backend.plain.userfile = \"" << (workdir / "users").string() << "\"\n"
       << "alias.url = (\"/git/\" => \"/usr/lib/git-core/git-http-backend/\")\n"
       << "$HTTP[\"url\"] =~ \"^/git/\" {\n"
       << "  cgi.assign = (\"\" => \"\")\n"
       << "  setenv.set-environment = (\"GIT_PROJECT_ROOT\" => \"" << root.string()
       << "\", \"GIT_HTTP_EXPORT_ALL\" => \"1\")\n"
       << "  auth.require = (\"\" => (\"method\" => \"basic\", \"realm\" => \"git\", \"require\" => \"valid-user\"))\n"
       << "}\n";
  write_file(workdir / "lighttpd.conf", conf.str());
  m_process = std::make_unique<Process>(
      std::vector<std::string>{lighttpd, "-D", "-f", (workdir / "lighttpd.conf").string()}, workdir / "lighttpd.log");
  INFO("lighttpd log: " << read_file(workdir / "lighttpd.log") << read_file(workdir / "error.log"));
  REQUIRE(wait_for_port(m_port));
}

std::string HttpServer::url(const std::string& repo) const {
  return "http://127.0.0.1:" + std::to_string(m_port) + "/git/" + repo;
}

SshServer::SshServer(const fs::path& workdir, const std::string& client_pubkey) {
  const std::string sshd = "/usr/sbin/sshd";
  if (!have_program(sshd)) FAIL("sshd is not installed (" << sshd << "): apt-get install openssh-server");
  fs::create_directories("/run/sshd");
  m_port = free_port();
  REQUIRE(run({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", (workdir / "hostkey").string()}).status == 0);
  write_file(workdir / "authorized_keys", client_pubkey, 0600);
  std::ostringstream conf;
  conf << "ListenAddress 127.0.0.1\n"
       << "Port " << m_port << "\n"
       << "HostKey " << (workdir / "hostkey").string() << "\n"
       << "PidFile " << (workdir / "sshd.pid").string() << "\n"
       << "AuthorizedKeysFile " << (workdir / "authorized_keys").string() << "\n"
       << "PermitRootLogin prohibit-password\n"
       << "PasswordAuthentication no\n"
       << "KbdInteractiveAuthentication no\n"
       << "UsePAM no\n"
       << "StrictModes no\n";
  write_file(workdir / "sshd_config", conf.str());
  m_process = std::make_unique<Process>(
      std::vector<std::string>{sshd, "-D", "-f", (workdir / "sshd_config").string(), "-E",
                               (workdir / "sshd.log").string()},
      workdir / "sshd.out");
  INFO("sshd log: " << read_file(workdir / "sshd.log"));
  REQUIRE(wait_for_port(m_port));
  std::string pub = read_file(workdir / "hostkey.pub");
  auto sp = pub.find(' ');
  auto sp2 = pub.find(' ', sp + 1);
  m_known_hosts = "[127.0.0.1]:" + std::to_string(m_port) + " " + pub.substr(0, sp2 == std::string::npos ? pub.size() : sp2) + "\n";
}

std::string SshServer::url(const fs::path& repo) const {
  const passwd* me = ::getpwuid(::getuid());
  return "ssh://" + std::string(me ? me->pw_name : "root") + "@127.0.0.1:" + std::to_string(m_port) + repo.string();
}

emco::gitops::GitRemoteSpec file_remote(const fs::path& repo, std::string branch) {
  emco::gitops::GitRemoteSpec spec;
  spec.url = "file://" + repo.string();
  spec.branch = std::move(branch);
  return spec;
}

}  // namespace gitops_test

// LeakSanitizer hook: leaks inside the system's libgit2 1.5.1 and the
// libraries it drives (pcre2 match data from its config/regexp code,
// libssh2's known_hosts state, OpenSSL's per-thread state) are not emco's and
// cannot be freed from outside. emco's own allocations stay checked.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libgit2.so\nleak:libpcre2-8.so\nleak:libssh2.so\nleak:libcrypto.so\n";
}
