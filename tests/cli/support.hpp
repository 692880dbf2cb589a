#pragma once
// Helpers for end-to-end tests: run the built emco binary in a scratch
// directory, write files there, and dump the workspace database so a test can
// prove a failed command left it unchanged.

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace emco::test {

namespace fs = std::filesystem;

struct Run {
  int code = -1;
  std::string out;
  std::string err;
};

struct RunOptions {
  fs::path cwd;                              // default: the sandbox root
  std::map<std::string, std::string> env;    // extra environment (empty value = unset)
  std::string stdin_file;                    // file fed to stdin (default /dev/null)
  std::string program;                       // default: the emco binary
};

// The emco binary of this build tree, and the emcoctl symlink next to it.
fs::path emco_binary();
fs::path emcoctl_binary();

// Runs a shell command line; stdout/stderr captured through files.
Run shell(const std::string& command_line);
std::string quote(const std::string& word);  // single-quoted for /bin/sh

// A scratch directory, removed when the object goes away.
class Sandbox {
public:
  Sandbox();
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  const fs::path& root() const { return m_root; }
  fs::path path(const std::string& rel) const { return m_root / rel; }
  void write(const std::string& rel, const std::string& text) const;
  std::string read(const std::string& rel) const;

  Run emco(const std::vector<std::string>& args, const RunOptions& opts = {}) const;
  // `emco init` in the root; REQUIREs success.
  void init() const;
  // A deterministic text dump of the workspace database at root()/.emco
  // (sqlite3 .dump), for before/after comparisons.
  std::string dump() const;
  // Copies another sandbox's files (workspace included) into this one.
  void copy_from(const Sandbox& other) const;

private:
  fs::path m_root;
};

// A minimal Helm chart package `<dir>/<app>.tgz` whose top-level directory is
// `top` (default: the app name), and a profile package `<dir>/<name>`.
void make_chart(const fs::path& dir, const std::string& app, const std::string& top = "");
void make_profile(const fs::path& dir, const std::string& name);

// Lines of `text` (without the newlines).
std::vector<std::string> lines(const std::string& text);

}  // namespace emco::test
