// examples/hpa through the emco binary on three simulated clusters whose
// nodes differ: only edge3's node has the label and the room for both
// replicas. Checks the placement, `emco dig explain`'s shortfalls, the
// requests in the deployed pod template (read back with the real kubectl
// when there is one), a node added to edge2 then `emco dig update` bringing
// edge2 in, and an intent no cluster can satisfy failing the update by name.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "sim/sim.hpp"
#include "tests/example_fleet.hpp"
#include "tests/shell.hpp"

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using emco::test::find_kubectl;
using emco::test::Ran;
using emco::test::sh;

const std::string k_dig = "hardware/inference/v1/inference-dig";

emco::sim::SimOptions one_node_clusters() {
  auto o = emco::test::edge_clusters(3);
  o.nodes = 1;
  return o;
}

struct Hardware : emco::test::ExampleFleet {
  Hardware() : ExampleFleet("hpa", "hpa", one_node_clusters()) {
    // The nodes as README.md gives them to the running simulator.
    for (const char* cmd : {"sim node label edge1 edge1-node-1 accelerator=gpu --dir sim",
                            "sim node label edge3 edge3-node-1 accelerator=gpu --dir sim",
                            "sim node set edge3 edge3-node-1 cpu=16 memory=64Gi --dir sim"}) {
      auto r = run(cmd);
      INFO(cmd << ": " << r.out);
      REQUIRE(r.code == 0);
    }
    REQUIRE(node_applied("edge3", "edge3-node-1", "16"));
    REQUIRE(node_applied("edge1", "edge1-node-1", "3800m"));
    use_sim_clusters();
    init_and_apply({"01-clusters.yaml", "02-project.yaml", "03-app.yaml"});
  }
  // Whether `node` of `cluster` shows label accelerator=gpu and `cpu` allocatable within 5 s.
  bool node_applied(const std::string& cluster, const std::string& node, const std::string& cpu) {
    for (int i = 0; i < 100; ++i) {
      json n = sim->get(cluster, "v1", "Node", "", node);
      if (n.is_object() && n["status"]["allocatable"]["cpu"] == cpu &&
          n["metadata"]["labels"].value("accelerator", "") == "gpu")
        return true;
      ::usleep(50 * 1000);
    }
    return false;
  }
  json deployment(const std::string& cluster) { return sim->get(cluster, "apps/v1", "Deployment", "default", "r1-inference"); }
  json explain() {
    auto r = run("dig explain " + k_dig + " -o json");
    INFO(r.out);
    REQUIRE(r.code == 0);
    const json apps = json::parse(r.out);
    REQUIRE(apps.size() == 1);
    json out = json::object();
    for (const auto& c : apps.at(0).at("candidates")) out[c["cluster"].get<std::string>()] = c;
    return out;
  }
};

}  // namespace

TEST_CASE("examples/hpa: placed where the nodes fit, requests in the pod template, a node added brings a cluster in",
          "[hpa][sim][example]") {
  Hardware h;
  json ex = h.explain();
  CHECK(ex["edge+edge3"]["chosen"] == true);
  CHECK(ex["edge+edge1"]["chosen"] == false);
  CHECK(ex["edge+edge1"]["reason"].get<std::string>().find(
            "requirement 'cpu': cpu 4 cores for replica 1 of 2, the most free on a node is 3.8 cores (short 0.2 cores)") !=
        std::string::npos);
  CHECK(ex["edge+edge2"]["reason"].get<std::string>().find("requirement 'gpu-node': no node has label accelerator=gpu") !=
        std::string::npos);

  auto deploy = h.run("apply -f 04-deploy.yaml -v values.yaml");
  INFO(deploy.out);
  REQUIRE(deploy.code == 0);
  CHECK(h.deployment("edge1").is_null());
  CHECK(h.deployment("edge2").is_null());
  json d = h.deployment("edge3");
  REQUIRE(d.is_object());
  json pod = d["spec"]["template"]["spec"];
  CHECK(pod["nodeSelector"] == json{{"accelerator", "gpu"}});
  CHECK(pod["containers"][0]["name"] == "model");
  CHECK(pod["containers"][0]["resources"] ==
        json{{"requests", {{"cpu", "4"}, {"memory", "2048e6"}}}, {"limits", {{"cpu", "4"}}}});
  CHECK_FALSE(pod["containers"][1].contains("resources"));  // only the consumer's container

  const std::string kubectl = find_kubectl();
  if (kubectl.empty()) {
    WARN("SKIPPED the kubectl read-back: no kubectl binary");
  } else {
    auto k = sh(h.dir, "HOME='" + h.dir.string() + "' " + kubectl + " --kubeconfig " + h.sim->kubeconfig_path("edge3") +
                           " get deployment r1-inference -o jsonpath='{.spec.template.spec.containers[0].resources}'");
    INFO(k.out);
    REQUIRE(k.code == 0);
    CHECK(json::parse(k.out) == json{{"requests", {{"cpu", "4"}, {"memory", "2048e6"}}}, {"limits", {{"cpu", "4"}}}});
  }

  // A fitting node on edge2: the update reads edge2's Nodes again.
  for (const char* cmd : {"sim node add edge2 edge2-gpu-1 --dir sim", "sim node label edge2 edge2-gpu-1 accelerator=gpu --dir sim",
                          "sim node set edge2 edge2-gpu-1 cpu=8 memory=32Gi --dir sim"})
    REQUIRE(h.run(cmd).code == 0);
  REQUIRE(h.node_applied("edge2", "edge2-gpu-1", "8"));
  auto update = h.run("dig update " + k_dig);
  INFO(update.out);
  REQUIRE(update.code == 0);
  CHECK(h.deployment("edge2").is_object());
  CHECK(h.deployment("edge3").is_object());
  CHECK(h.deployment("edge1").is_null());

  // More than any node has: the update fails naming the hpa intent.
  auto values = sh(h.dir, "sed -i 's/^Cpus: 4$/Cpus: 20/' values.yaml && " + h.emco + " apply -f 03-app.yaml -v values.yaml");
  INFO(values.out);
  REQUIRE(values.code == 0);
  auto refused = h.run("dig update " + k_dig);
  CHECK(refused.code != 0);
  CHECK(refused.out.find("hpa intent 'projects/hardware/composite-apps/inference/v1/deployment-intent-groups/"
                         "inference-dig/hpa-intents/inference-hpa': no cluster of app 'inference' has the nodes it asks "
                         "for") != std::string::npos);
  CHECK(refused.out.find("edge+edge2: consumer 'inference-hpa/model-server' requirement 'cpu': cpu 20 cores for replica 1 "
                         "of 2, the most free on a node is 8 cores (short 12 cores)") != std::string::npos);
  CHECK(h.deployment("edge3").is_object());  // the running revision stays

  auto gone = h.run("delete -f 04-deploy.yaml -v values.yaml");
  INFO(gone.out);
  CHECK(gone.code == 0);
}
