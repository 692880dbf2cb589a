// Start-up loads only what a command needs (issue 22): the libraries behind
// delivery, GitOps, PostgreSQL workspaces, chart packages, the simulator and
// OpenSSL are loaded on first use (cmake/EmcoLazy.cmake), so `emco
// --version`, a `get` and a `dig status` map none of them. The dynamic
// loader names every file it loads under LD_DEBUG=files.

#include <catch2/catch.hpp>

#include "tests/cli/fixture.hpp"

namespace emco::test {
namespace {

TEST_CASE("short commands load none of the libraries kept for first use", "[startup][sqlite]") {
#ifndef EMCO_LAZY_LIBS_ON
  WARN("EMCO_LAZY_LIBS is off: every library loads at start-up");
  return;
#endif
  Sandbox s;
  s.copy_from(base_sandbox());
  const std::vector<std::vector<std::string>> commands = {
      {"--version"}, {"get", "projects/proj1"}, {"dig", "status", "proj1/ca/v1/dig1"}};
  for (const auto& args : commands) {
    Run r = s.emco(args, {.env = {{"LD_DEBUG", "files"}}});
    INFO("emco " << args[0] << (args.size() > 1 ? " " + args[1] : "") << "\nstderr:\n" << r.err);
    REQUIRE(r.code == 0);
    REQUIRE(r.err.find("libc.so") != std::string::npos);  // the loader did report its files
    for (const char* lib : {"libcurl", "libgit2", "libpq", "libarchive", "libevent", "libssl", "libcrypto"}) {
      INFO(lib);
      CHECK(r.err.find(lib) == std::string::npos);
    }
  }
  // A command that needs one loads it then: a chart package is read with libarchive.
  Run t = s.emco({"template", "collectd.tgz"}, {.env = {{"LD_DEBUG", "files"}}});
  INFO("emco template collectd.tgz\nstderr:\n" << t.err);
  CHECK(t.code == 0);
  CHECK(t.err.find("libarchive") != std::string::npos);
}

TEST_CASE("templating a chart directory loads none of them, checksum annotations included", "[startup]") {
#ifndef EMCO_LAZY_LIBS_ON
  WARN("EMCO_LAZY_LIBS is off: every library loads at start-up");
  return;
#endif
  // sha256sum is Nettle's, linked in (core/util/sha256.cpp): no libcrypto for a checksum.
  Sandbox s;
  s.write("chart/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n");
  s.write("chart/templates/cm.yaml",
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
          "  annotations:\n    checksum/config: {{ \"hello\" | sha256sum }}\n");
  Run r = s.emco({"template", "chart"}, {.env = {{"LD_DEBUG", "files"}}});
  INFO("stderr:\n" << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("checksum/config: 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824\n") !=
        std::string::npos);
  REQUIRE(r.err.find("libc.so") != std::string::npos);
  for (const char* lib : {"libcurl", "libgit2", "libpq", "libarchive", "libevent", "libssl", "libcrypto"}) {
    INFO(lib);
    CHECK(r.err.find(lib) == std::string::npos);
  }
}

TEST_CASE("a command that wrote closes the workspace: its -wal file is checkpointed empty", "[startup][sqlite]") {
  // A command that only read leaves its connection to the exit instead
  // (store::Store::leave_open_at_exit); one that wrote must close it.
  Sandbox s;
  s.copy_from(base_sandbox());
  const fs::path wal = s.path(".emco/emco.db-wal");
  REQUIRE(s.emco({"project", "create", "p9"}).code == 0);
  CHECK(fs::file_size(wal) == 0);
  Run r = s.emco({"get", "projects/p9"});
  CHECK(r.code == 0);
  CHECK(r.out.find("p9") != std::string::npos);
  CHECK(fs::file_size(wal) == 0);
  REQUIRE(s.emco({"project", "delete", "p9"}).code == 0);
  CHECK(fs::file_size(wal) == 0);
  CHECK(s.emco({"get", "projects/p9"}).code != 0);
}

}  // namespace
}  // namespace emco::test
