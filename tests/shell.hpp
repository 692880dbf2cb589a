#pragma once
// Helpers for suites that drive the emco binary or the real kubectl: a shell
// command line with its output and exit code, one started in the background
// (to be killed and reaped by the test), and the kubectl binary to run.
// Header-only.

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace emco::test {

struct Ran {
  int code = -1;
  std::string out;  // stdout and stderr
};

// Runs `line` with sh in `cwd` and waits for it.
inline Ran sh(const std::filesystem::path& cwd, const std::string& line) {
  std::string cmd = "cd '" + cwd.string() + "' && " + line + " 2>&1";
  Ran r;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Starts `line` in `cwd` as a child of this process (so that it can be
// killed and reaped), output to `log`.
inline pid_t spawn(const std::filesystem::path& cwd, const std::string& line, const std::filesystem::path& log) {
  std::string cmd = "cd '" + cwd.string() + "' && exec " + line + " > '" + log.string() + "' 2>&1";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

// The kubectl binary the tests run: $EMCO_KUBECTL, a fixed 1.32 release, the
// checkout's .tools/bin/kubectl, the one `make helm-client` fetched
// (~/.cache/emco-tools/bin) or /usr/bin/kubectl; "" when there is none, and
// then the tests that need it pass with a warning -- unless
// EMCO_REQUIRE_KUBECTL is set (CI, after `make helm-client`): then a missing
// kubectl fails them.
inline std::string find_kubectl() {
  if (const char* given = std::getenv("EMCO_KUBECTL"); given && *given) return given;
  std::string cache;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) cache = std::string(xdg) + "/emco-tools/bin/kubectl";
  else if (const char* home = std::getenv("HOME"); home && *home) cache = std::string(home) + "/.cache/emco-tools/bin/kubectl";
  for (std::string p : {std::string("/usr/lib/google-cloud-sdk/bin/kubectl.1.32"),
                        std::string(EMCO_SOURCE_DIR) + "/.tools/bin/kubectl", cache, std::string("/usr/bin/kubectl")})
    if (!p.empty() && ::access(p.c_str(), X_OK) == 0) return p;
  if (std::getenv("EMCO_REQUIRE_KUBECTL"))
    throw std::runtime_error("EMCO_REQUIRE_KUBECTL is set and no kubectl binary was found (set EMCO_KUBECTL)");
  return {};
}

}  // namespace emco::test
