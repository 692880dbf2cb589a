// `emco sim start` / `emco sim stop` as processes: pid file, sim.json,
// SIGTERM handling.

#include <catch2/catch.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "core/util/error.hpp"
#include "helpers.hpp"

using nlohmann::json;
using namespace simtest;

TEST_CASE("run_sim_start serves until run_sim_stop sends SIGTERM") {
  TempDir tmp;
  std::string dir = tmp.path + "/fleet";
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    emco::sim::SimStartArgs args;
    args.options.dir = dir;
    args.options.clusters = 3;
    int rc = 1;
    try {
      rc = emco::sim::run_sim_start(args);
    } catch (...) {
    }
    _exit(rc);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!std::filesystem::exists(dir + "/sim.pid") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(std::filesystem::exists(dir + "/sim.pid"));
  json info = json::parse(read_file(dir + "/sim.json"));
  CHECK(info["pid"] == child);
  CHECK(info["clusters"] == 3);
  int port = info["port"];
  std::string kc = dir + "/kubeconfigs/cluster-2.yaml";
  Http c("https://127.0.0.1:" + std::to_string(port) + "/clusters/cluster-2", dir + "/ca.crt",
         {kubeconfig_field(kc, "token"), "", ""});
  CHECK(c.get("/api/v1/namespaces/default").status == 200);

  CHECK(emco::sim::run_sim_stop(dir) == 0);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_FALSE(std::filesystem::exists(dir + "/sim.pid"));
  CHECK_THROWS_AS(emco::sim::run_sim_stop(dir), emco::Error);
}
