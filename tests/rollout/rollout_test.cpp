// Rollouts in waves (issue 24) through the emco binary on examples/quickstart
// delivered to six simulated clusters: waves by count and by cluster label
// in order, --wait-wave and `emco dig rollout resume` in separate processes,
// a failing cluster (the simulator's expired credentials) pausing the
// rollout, resume and abort with rollback, an update in waves, and kill -9
// in the middle of a wave and between waves. The simulator counts the
// writes each object got: a wave that passed is never applied again.

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/lifecycle/rollout.hpp"
#include "sim/sim.hpp"
#include "tests/example_fleet.hpp"
#include "tests/shell.hpp"
#include "tests/test_store.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using emco::test::Ran;
using emco::test::sh;

const std::string k_dig = "quickstart/hello-app/v1/hello-dig";
const std::string k_strategy_anchor =
    "projects/quickstart/composite-apps/hello-app/v1/deployment-intent-groups/hello-dig/emco-rollout-strategies";

struct Fleet : emco::test::ExampleFleet {
  Fleet() : ExampleFleet("quickstart", "rollout", emco::test::edge_clusters(6)) {
    use_sim_clusters();
    // A PostgreSQL workspace in the pg: run (tests/test_store.hpp).
    init_and_apply({"01-clusters.yaml", "02-project.yaml", "03-app.yaml"}, emco::test::fresh_store());
    REQUIRE(run("dig approve " + k_dig).code == 0);
  }
  void strategy(const std::string& spec) {
    std::ofstream(dir / "strategy.yaml") << "version: emco/v2\nresourceContext:\n  anchor: " << k_strategy_anchor
                                         << "\nmetadata:\n  name: waves\nspec:\n" << spec;
    auto r = run("apply -f strategy.yaml");
    INFO(r.out);
    REQUIRE(r.code == 0);
  }
  json rollout() {
    auto r = run("dig rollout status " + k_dig + " -o json 2>/dev/null");
    INFO(r.out);
    REQUIRE(r.code == 0);
    return json::parse(r.out);
  }
  bool delivered(const std::string& cluster) {
    return sim->get(cluster, "v1", "ConfigMap", "default", "r1-hello").is_object();
  }
  std::vector<std::string> delivered_clusters() {
    std::vector<std::string> out;
    for (const auto& c : sim->cluster_names())
      if (delivered(c)) out.push_back(c);
    return out;
  }
  // Changes the app profile's message (a new revision for the next update).
  void change_message(const std::string& text) {
    std::ofstream(dir / "profiles/hello/override_values.yaml") << "message: " << text << "\n";
    auto r = run("apply -f 03-app.yaml -v values.yaml");
    INFO(r.out);
    REQUIRE(r.code == 0);
  }
  // The data of the app's ConfigMap on `cluster` (which revision it runs).
  std::string message(const std::string& cluster) {
    return sim->get(cluster, "v1", "ConfigMap", "default", "r1-hello")["data"].dump();
  }
  // The writes each cluster served, per object path.
  std::map<std::string, std::map<std::string, uint64_t>> writes() {
    std::map<std::string, std::map<std::string, uint64_t>> out;
    for (const auto& c : sim->cluster_names()) out[c] = sim->writes_served(c);
    return out;
  }
};

std::vector<std::string> names(const json& a) {
  std::vector<std::string> out;
  for (const auto& s : a) out.push_back(s.get<std::string>());
  return out;
}

using V = std::vector<std::string>;

}  // namespace

TEST_CASE("waves by count: --wait-wave delivers one wave per process, resume goes on, a passed wave is not applied "
          "again",
          "[rollout][sim]") {
  Fleet f;
  f.strategy("  waves: 3\n");
  auto first = f.run("dig instantiate " + k_dig + " --wait-wave");
  INFO(first.out);
  REQUIRE(first.code == 0);
  CHECK(first.out.find("rollout waiting at wave 2 of 3") != std::string::npos);
  CHECK(f.delivered_clusters() == V{"edge1", "edge2"});
  json r = f.rollout();
  CHECK(r["state"] == "waiting");
  CHECK(r["wave"] == 2);
  CHECK(names(r["waves"][0]["clusters"]) == V{"edge+edge1", "edge+edge2"});
  CHECK(r["waves"][0]["state"] == "passed");
  CHECK(r["waves"][1]["state"] == "pending");  // it starts (its deadline runs) with resume
  CHECK(r["waves"][2]["state"] == "pending");
  const auto after_first = f.writes();

  // Nothing else continues a waiting rollout: emco sync leaves it.
  CHECK(f.run("sync").code == 0);
  CHECK(f.delivered_clusters() == V{"edge1", "edge2"});
  auto st = f.run("dig status " + k_dig);
  CHECK(st.out.find("rollout waves: waiting at wave 2 of 3") != std::string::npos);

  auto second = f.run("dig rollout resume " + k_dig + " --wait-wave");
  INFO(second.out);
  REQUIRE(second.code == 0);
  CHECK(f.delivered_clusters() == V{"edge1", "edge2", "edge3", "edge4"});
  CHECK(f.rollout()["wave"] == 3);

  auto last = f.run("dig rollout resume " + k_dig);
  INFO(last.out);
  REQUIRE(last.code == 0);
  CHECK(f.delivered_clusters().size() == 6);
  r = f.rollout();
  CHECK(r["state"] == "done");
  for (const auto& w : r["waves"]) CHECK(w["state"] == "passed");
  auto status = f.run("dig status " + k_dig + " -o json");
  CHECK(json::parse(status.out)["deployedStatus"] == "Instantiated");
  const auto end = f.writes();
  for (const char* c : {"edge1", "edge2"}) CHECK(end.at(c) == after_first.at(c));
  CHECK(f.run("dig rollout resume " + k_dig).code == 5);  // nothing left to resume
}

TEST_CASE("groups by cluster label go in the listed order, the unlabelled clusters last, and maxConcurrency splits a group",
          "[rollout][sim]") {
  Fleet f;
  REQUIRE(f.run("cluster label add edge/edge5/canary").code == 0);
  for (const char* c : {"edge1", "edge2", "edge3"}) REQUIRE(f.run(std::string("cluster label add edge/") + c + "/eu").code == 0);
  f.strategy("  groups: [canary, eu]\n  maxConcurrency: 2\n");
  auto first = f.run("dig instantiate " + k_dig + " --wait-wave");
  INFO(first.out);
  REQUIRE(first.code == 0);
  CHECK(f.delivered_clusters() == V{"edge5"});
  json r = f.rollout();
  REQUIRE(r["waves"].size() == 4);
  CHECK(r["waves"][0]["name"] == "group canary");
  CHECK(r["waves"][1]["name"] == "group eu (1/2)");
  CHECK(names(r["waves"][1]["clusters"]) == V{"edge+edge1", "edge+edge2"});
  CHECK(names(r["waves"][2]["clusters"]) == V{"edge+edge3"});
  CHECK(r["waves"][3]["name"] == "the other clusters");
  CHECK(names(r["waves"][3]["clusters"]) == V{"edge+edge4", "edge+edge6"});
  REQUIRE(f.run("dig rollout resume " + k_dig + " --wait-wave").code == 0);
  CHECK(f.delivered_clusters() == V{"edge1", "edge2", "edge5"});
  REQUIRE(f.run("dig rollout resume " + k_dig).code == 0);
  CHECK(f.delivered_clusters().size() == 6);
}

TEST_CASE("a failing cluster pauses the rollout after maxFailures, status tells where, and resume runs the failed "
          "wave again",
          "[rollout][sim]") {
  Fleet f;
  f.strategy("  waves: 3\n  maxFailures: 0\n  progressDeadline: 20s\n");
  emco::sim::Fault refused;
  refused.expired_credentials = true;
  f.sim->set_fault("edge3", refused);
  auto inst = f.run("dig instantiate " + k_dig);
  INFO(inst.out);
  CHECK(inst.code == 1);
  CHECK(inst.out.find("rollout stopped at wave 2 (2 of 3): 1 cluster(s) failed, 0 tolerated (edge+edge3)") !=
        std::string::npos);
  CHECK(inst.out.find("emco dig rollout resume") != std::string::npos);
  json r = f.rollout();
  CHECK(r["state"] == "paused");
  CHECK(r["wave"] == 2);
  CHECK(names(r["waves"][1]["failed"]) == V{"edge+edge3"});
  CHECK(r["waves"][2]["state"] == "pending");
  CHECK(f.delivered_clusters() == V{"edge1", "edge2", "edge4"});
  auto text = f.run("dig rollout status " + k_dig);
  CHECK(text.out.find("paused at wave 2 of 3; 1 failed cluster(s), 0 tolerated") != std::string::npos);

  // A paused rollout is not continued by other commands.
  CHECK(f.run("sync").code == 0);
  CHECK(f.delivered_clusters() == V{"edge1", "edge2", "edge4"});

  f.sim->set_fault("edge3", {});
  auto resumed = f.run("dig rollout resume " + k_dig);
  INFO(resumed.out);
  CHECK(resumed.code == 0);
  CHECK(f.delivered_clusters().size() == 6);
  CHECK(f.rollout()["state"] == "done");
  CHECK(f.rollout()["failures"] == 0);
}

TEST_CASE("abort with rollback deletes what the waves that started delivered and never touches the rest",
          "[rollout][sim]") {
  Fleet f;
  f.strategy("  waves: 3\n");
  REQUIRE(f.run("dig instantiate " + k_dig + " --wait-wave").code == 0);
  REQUIRE(f.run("dig rollout resume " + k_dig + " --wait-wave").code == 0);
  CHECK(f.delivered_clusters().size() == 4);
  const auto before = f.writes();
  auto abort = f.run("dig rollout abort " + k_dig + " --rollback");
  INFO(abort.out);
  CHECK(abort.code == 0);
  CHECK(abort.out.find("rolled back") != std::string::npos);
  CHECK(f.delivered_clusters().empty());
  // The third wave's clusters got no request to write or delete anything.
  for (const char* c : {"edge5", "edge6"}) CHECK(f.writes().at(c) == before.at(c));
  CHECK(f.rollout()["state"] == "aborted");
  auto history = f.run("dig history " + k_dig + " -o json");
  CHECK(json::parse(history.out)["actions"].back()["state"] == "Terminated");
  CHECK(f.run("dig rollout abort " + k_dig).code == 5);
}

TEST_CASE("an update goes in waves too, and abort with rollback gives the clusters that got it the previous revision",
          "[rollout][sim]") {
  Fleet f;
  REQUIRE(f.run("dig instantiate " + k_dig).code == 0);  // no strategy yet: all at once
  CHECK(f.delivered_clusters().size() == 6);
  f.strategy("  waves: 3\n");
  f.change_message("hello from revision 2");
  const std::string old_message = f.message("edge1");
  auto up = f.run("dig update " + k_dig + " --wait-wave");
  INFO(up.out);
  REQUIRE(up.code == 0);
  CHECK(f.message("edge1").find("revision 2") != std::string::npos);
  CHECK(f.message("edge2").find("revision 2") != std::string::npos);
  CHECK(f.message("edge3") == old_message);
  CHECK(f.rollout()["operation"] == "update");
  const auto before = f.writes();
  auto abort = f.run("dig rollout abort " + k_dig + " --rollback");
  INFO(abort.out);
  CHECK(abort.code == 0);
  for (const char* c : {"edge1", "edge2", "edge3", "edge4", "edge5", "edge6"}) CHECK(f.message(c) == old_message);
  for (const char* c : {"edge3", "edge4", "edge5", "edge6"}) CHECK(f.writes().at(c) == before.at(c));
  auto history = json::parse(f.run("dig history " + k_dig + " -o json").out);
  CHECK(history["actions"].back()["state"] == "Instantiated");
  CHECK(history["actions"].back()["revision"] == 3);
}

TEST_CASE("an update aborted without rollback leaves the waves as they are, and dig rollback returns every cluster",
          "[rollout][sim]") {
  Fleet f;
  REQUIRE(f.run("dig instantiate " + k_dig).code == 0);
  f.strategy("  waves: 3\n");
  f.change_message("hello from revision 2");
  const std::string old_message = f.message("edge1");
  REQUIRE(f.run("dig update " + k_dig + " --wait-wave").code == 0);
  auto abort = f.run("dig rollout abort " + k_dig);
  INFO(abort.out);
  REQUIRE(abort.code == 0);
  CHECK(f.rollout()["state"] == "aborted");
  // The first wave keeps revision 2, the others never got it.
  for (const char* c : {"edge1", "edge2"}) CHECK(f.message(c).find("revision 2") != std::string::npos);
  for (const char* c : {"edge3", "edge4", "edge5", "edge6"}) CHECK(f.message(c) == old_message);
  auto history = json::parse(f.run("dig history " + k_dig + " -o json").out);
  CHECK(history["actions"].back()["revision"] == 2);
  // An update, or a rollback to another revision, would deliver a difference from revision 2,
  // which four clusters never got: refused, naming the way out.
  for (const std::string& op : {"dig update " + k_dig, "dig rollback " + k_dig + " --revision 2"}) {
    auto refused = f.run(op);
    INFO(op << ": " << refused.out);
    CHECK(refused.code == 5);
  }
  auto refused = f.run("dig update " + k_dig);
  CHECK(refused.out.find("2 of 6 clusters run its revision") != std::string::npos);
  CHECK(refused.out.find("--revision 1") != std::string::npos);
  // A rollback to revision 1 brings every cluster to it, those the update never reached too.
  auto back = f.run("dig rollback " + k_dig + " --revision 1");
  INFO(back.out);
  CHECK(back.code == 0);
  for (const char* c : {"edge1", "edge2", "edge3", "edge4", "edge5", "edge6"}) CHECK(f.message(c) == old_message);
  history = json::parse(f.run("dig history " + k_dig + " -o json").out);
  CHECK(history["actions"].back()["state"] == "Instantiated");
  CHECK(history["actions"].back()["revision"] == 3);
  // From there an update goes on as usual: every cluster gets the intents' revision 2 message.
  auto again = f.run("dig update " + k_dig);
  INFO(again.out);
  CHECK(again.code == 0);
  for (const char* c : {"edge1", "edge2", "edge3", "edge4", "edge5", "edge6"})
    CHECK(f.message(c).find("revision 2") != std::string::npos);
}

TEST_CASE("kill -9 in the middle of a wave and between waves: resume goes on without applying a passed wave again",
          "[rollout][sim]") {
  Fleet f;
  f.strategy("  waves: 3\n  minSuccessTime: 1s\n");
  // Slow writes on the second wave's clusters: the kill finds it applying.
  emco::sim::Fault slow;
  slow.latency_ms = 300;
  for (const char* c : {"edge3", "edge4"}) f.sim->set_fault(c, slow);
  const fs::path log = f.dir / "instantiate.log";
  auto kill_when = [&](const std::function<bool(const json&)>& ready) {
    pid_t pid = emco::test::spawn(f.dir, "env " + f.emco + " dig instantiate " + k_dig, log);
    bool seen = false;
    std::string last;
    for (int i = 0; i < 600 && !seen; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      auto r = f.run("dig rollout status " + k_dig + " -o json 2>/dev/null");
      last = r.out;
      if (r.code == 0) seen = ready(json::parse(r.out));
    }
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    INFO("last status read: " << last);
    CHECK(seen);
    return seen;
  };
  // Mid-wave: the second wave is being applied.
  REQUIRE(kill_when([](const json& r) { return r["wave"] == 2 && r["waves"][1]["state"] == "applying"; }));
  const auto first_wave = f.writes();
  CHECK(f.rollout()["waves"][0]["state"] == "passed");
  for (const char* c : {"edge1", "edge2"}) CHECK(f.delivered(c));
  CHECK(!f.delivered("edge5"));

  auto resumed = f.run("dig rollout resume " + k_dig);
  INFO(resumed.out);
  REQUIRE(resumed.code == 0);
  CHECK(f.rollout()["state"] == "done");
  CHECK(f.delivered_clusters().size() == 6);
  for (const char* c : {"edge1", "edge2"}) CHECK(f.writes().at(c) == first_wave.at(c));

  // Between waves: terminate, instantiate again and kill once the third wave opened.
  REQUIRE(f.run("dig terminate " + k_dig).code == 0);
  REQUIRE(f.run("dig approve " + k_dig).code == 0);
  for (const char* c : {"edge3", "edge4"}) f.sim->set_fault(c, {});
  emco::sim::Fault slower;
  slower.latency_ms = 300;
  for (const char* c : {"edge5", "edge6"}) f.sim->set_fault(c, slower);
  const auto before = f.writes();
  REQUIRE(kill_when([](const json& r) { return r["wave"] == 3; }));
  const auto two_waves = f.writes();
  for (const char* c : {"edge1", "edge2", "edge3", "edge4"}) CHECK(two_waves.at(c) != before.at(c));
  REQUIRE(f.run("dig rollout resume " + k_dig).code == 0);
  CHECK(f.rollout()["state"] == "done");
  CHECK(f.delivered_clusters().size() == 6);
  for (const char* c : {"edge1", "edge2", "edge3", "edge4"}) CHECK(f.writes().at(c) == two_waves.at(c));
}

TEST_CASE("a bad strategy is refused when stored, naming the field", "[rollout]") {
  Fleet f;
  std::ofstream(f.dir / "bad.yaml") << "version: emco/v2\nresourceContext:\n  anchor: " << k_strategy_anchor
                                    << "\nmetadata:\n  name: bad\nspec:\n  waves: 3\n  maxFailures: 150%\n";
  auto r = f.run("apply -f bad.yaml");
  INFO(r.out);
  CHECK(r.code == 3);
  CHECK(r.out.find("bad.yaml:") != std::string::npos);
  CHECK(r.out.find("spec.maxFailures \"150%\" is not a count of clusters or a percentage") != std::string::npos);
  std::ofstream(f.dir / "bad.yaml") << "version: emco/v2\nresourceContext:\n  anchor: " << k_strategy_anchor
                                    << "\nmetadata:\n  name: bad\nspec:\n  waves: 3\n  groups: [eu]\n";
  r = f.run("apply -f bad.yaml");
  CHECK(r.code == 3);
  CHECK(r.out.find("splits the clusters one way") != std::string::npos);
}

TEST_CASE("a terminate ends a paused rollout: every cluster is cleaned and the rollout shows it ended", "[rollout][sim]") {
  Fleet f;
  f.strategy("  waves: 3\n");
  emco::sim::Fault refused;
  refused.expired_credentials = true;
  f.sim->set_fault("edge3", refused);
  REQUIRE(f.run("dig instantiate " + k_dig).code == 1);
  CHECK(f.rollout()["state"] == "paused");
  auto update = f.run("dig update " + k_dig);
  CHECK(update.code == 5);  // the rollout must be resumed or aborted first
  CHECK(update.out.find("its rollout is paused at wave 2 (2 of 3)") != std::string::npos);
  f.sim->set_fault("edge3", {});
  auto term = f.run("dig terminate " + k_dig);
  INFO(term.out);
  CHECK(term.code == 0);
  CHECK(f.delivered_clusters().empty());
  CHECK(f.rollout()["state"] == "ended");
}

TEST_CASE("waves by count, by size and by label order, capped, put every cluster in exactly one wave", "[rollout]") {
  namespace ro = emco::lifecycle::rollout;
  std::vector<std::string> ten;
  for (int i = 0; i < 10; ++i) ten.push_back("p+c" + std::to_string(i));
  auto sizes = [](const std::vector<ro::Wave>& waves) {
    std::vector<size_t> out;
    for (const auto& w : waves) out.push_back(w.clusters.size());
    return out;
  };
  auto no_labels = [](const std::string&) { return std::vector<std::string>{}; };
  ro::Strategy s;
  CHECK(sizes(ro::plan_waves(s, ten, no_labels)) == std::vector<size_t>{10});  // none: all at once
  s.waves = 3;
  CHECK(sizes(ro::plan_waves(s, ten, no_labels)) == std::vector<size_t>{4, 4, 2});
  s.waves = 20;  // more waves than clusters: one each
  CHECK(sizes(ro::plan_waves(s, ten, no_labels)).size() == 10);
  s.waves = 0;
  s.wave_size = ro::Amount{30, true};  // 30% of 10, rounded up
  CHECK(sizes(ro::plan_waves(s, ten, no_labels)) == std::vector<size_t>{3, 3, 3, 1});
  s.wave_size = ro::Amount{4, false};
  s.max_unavailable = ro::Amount{3, false};  // caps every wave
  auto capped = ro::plan_waves(s, ten, no_labels);
  CHECK(sizes(capped) == std::vector<size_t>{3, 1, 3, 1, 2});
  CHECK(capped[0].name == "wave 1");
  s = {};
  s.groups = {"b", "a"};
  auto labels = [](const std::string& c) {
    if (c == "p+c1" || c == "p+c7") return std::vector<std::string>{"a", "b"};  // the first listed group wins
    if (c == "p+c2") return std::vector<std::string>{"a"};
    return std::vector<std::string>{};
  };
  auto groups = ro::plan_waves(s, ten, labels);
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].name == "group b");
  CHECK(groups[0].clusters == std::vector<std::string>{"p+c1", "p+c7"});
  CHECK(groups[1].clusters == std::vector<std::string>{"p+c2"});
  CHECK(groups[2].name == "the other clusters");
  CHECK(groups[2].clusters.size() == 7);
  CHECK(ro::plan_waves(s, {}, labels).empty());
}

TEST_CASE("emco dig stop ends a rollout waiting in a gate", "[rollout][sim]") {
  Fleet f;
  f.strategy("  waves: 3\n  minSuccessTime: 10m\n");
  const fs::path log = f.dir / "instantiate.log";
  pid_t pid = emco::test::spawn(f.dir, "env " + f.emco + " dig instantiate " + k_dig + " --timeout 20m", log);
  bool gating = false;
  for (int i = 0; i < 600 && !gating; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    auto r = f.run("dig rollout status " + k_dig + " -o json 2>/dev/null");
    gating = r.code == 0 && json::parse(r.out)["waves"][0]["state"] == "gating";
  }
  REQUIRE(gating);
  auto stop = f.run("dig stop " + k_dig);
  INFO(stop.out);
  CHECK(stop.code == 0);
  // The process ends long before the gate's 10 minutes (waited for up to a minute).
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 600 && done == 0; ++i) {
    done = ::waitpid(pid, &status, WNOHANG);
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  CHECK(done == pid);
  CHECK(f.rollout()["state"] == "ended");
  CHECK(f.delivered_clusters() == V{"edge1", "edge2"});
}

TEST_CASE("rollbackOnFailure: too many failures abort the rollout and undo the waves that started", "[rollout][sim]") {
  Fleet f;
  auto made = f.run("dig rollout-strategy create " + k_dig + "/waves --waves 3 --rollback-on-failure");
  INFO(made.out);
  REQUIRE(made.code == 0);
  emco::sim::Fault refused;
  refused.expired_credentials = true;
  f.sim->set_fault("edge4", refused);
  auto inst = f.run("dig instantiate " + k_dig);
  INFO(inst.out);
  CHECK(inst.code == 1);
  CHECK(inst.out.find("rolled back: its objects are deleted from the 4 clusters of the waves that started") !=
        std::string::npos);
  CHECK(f.delivered_clusters().empty());
  json r = f.rollout();
  CHECK(r["state"] == "aborted");
  CHECK(names(r["waves"][1]["failed"]) == V{"edge+edge4"});
  auto history = json::parse(f.run("dig history " + k_dig + " -o json").out);
  CHECK(history["actions"].back()["state"] == "Terminated");
}

TEST_CASE("an unreachable cluster fails its wave at the progress deadline and the rollout pauses there",
          "[rollout][sim]") {
  Fleet f;
  f.strategy("  waves: 3\n  progressDeadline: 3s\n");
  emco::sim::Fault down;
  down.refuse = true;
  f.sim->set_fault("edge2", down);
  auto inst = f.run("dig instantiate " + k_dig);
  INFO(inst.out);
  CHECK(inst.code == 1);
  json r = f.rollout();
  CHECK(r["state"] == "paused");
  CHECK(r["wave"] == 1);
  CHECK(names(r["waves"][0]["failed"]) == V{"edge+edge2"});
  CHECK(f.delivered_clusters() == V{"edge1"});
  f.sim->set_fault("edge2", {});
  auto resumed = f.run("dig rollout resume " + k_dig);
  INFO(resumed.out);
  CHECK(resumed.code == 0);
  CHECK(f.delivered_clusters().size() == 6);
}
