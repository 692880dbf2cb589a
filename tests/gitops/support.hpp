#pragma once
// Test helpers for the gitops suite: temp dirs, running the git CLI, and
// real git servers (git daemon, lighttpd + git http-backend, sshd) started
// on free loopback ports and stopped when the helper goes out of scope.

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "plugins/targets/gitops/git_delivery.hpp"

namespace gitops_test {

namespace fs = std::filesystem;

class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return m_path; }

private:
  fs::path m_path;
};

struct RunResult {
  int status = -1;       // exit code, or 128 + signal
  std::string out;       // stdout
  std::string err;       // stderr
};

// A commit of `changes` by the suite's test author.
emco::gitops::CommitRequest commit_request(emco::gitops::ChangeSet changes, std::string message = "emco: test");

// Runs argv (argv[0] searched in PATH) in `cwd` with extra environment
// variables, without a shell.
RunResult run(const std::vector<std::string>& argv, const fs::path& cwd = {},
              const std::map<std::string, std::string>& env = {});

// `git -C dir args...` with a fixed identity; fails the test on a non-zero exit.
std::string git(const fs::path& dir, const std::vector<std::string>& args,
                const std::map<std::string, std::string>& env = {});

// The spec of the local repository `repo` as a file:// remote.
emco::gitops::GitRemoteSpec file_remote(const fs::path& repo, std::string branch = "main");

// A bare repository at `path` with `git init --bare -b main`; when `seed`
// is true it gets one commit with README on main.
void make_bare_repo(const fs::path& path, bool seed);

// Clones `url` (branch) into `dest` with the git CLI and returns `dest`.
fs::path clone(const std::string& url, const std::string& branch, const fs::path& dest,
               const std::map<std::string, std::string>& env = {});

// File content at `rev:path` in `repo` (a clone or bare repo), via git show.
std::string show(const fs::path& repo, const std::string& rev, const std::string& path);

// Number of commits reachable from `rev`.
int commit_count(const fs::path& repo, const std::string& rev);

int free_port();

bool have_program(const std::string& path);

// A child process killed (SIGTERM, then SIGKILL) on destruction.
class Process {
public:
  Process(const std::vector<std::string>& argv, const fs::path& log);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  pid_t pid() const { return m_pid; }

private:
  pid_t m_pid = -1;
};

// Polls 127.0.0.1:port until it accepts a connection; false after `ms`.
bool wait_for_port(int port, int ms = 5000);

class GitDaemon {
public:
  explicit GitDaemon(const fs::path& root);
  std::string url(const std::string& repo) const;
  int port() const { return m_port; }

private:
  int m_port;
  std::unique_ptr<Process> m_process;
};

// lighttpd serving `root` through git http-backend at /git/, with HTTP
// basic auth for `user`:`password`.
class HttpServer {
public:
  HttpServer(const fs::path& root, const fs::path& workdir, const std::string& user, const std::string& password);
  std::string url(const std::string& repo) const;

private:
  int m_port;
  std::unique_ptr<Process> m_process;
};

// sshd on loopback accepting `client_pubkey`; known_hosts() holds the line
// for its host key.
class SshServer {
public:
  SshServer(const fs::path& workdir, const std::string& client_pubkey);
  std::string url(const fs::path& repo) const;
  const std::string& known_hosts() const { return m_known_hosts; }
  int port() const { return m_port; }

private:
  int m_port;
  std::string m_known_hosts;
  std::unique_ptr<Process> m_process;
};

std::string read_file(const fs::path& path);
void write_file(const fs::path& path, const std::string& text, int mode = 0644);

}  // namespace gitops_test
