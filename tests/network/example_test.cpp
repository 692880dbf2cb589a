// examples/network through the emco binary on two simulated clusters with the
// ovn4nfv CRDs preinstalled: every cluster's networks applied (Network CRs and
// Multus NetworkAttachmentDefinitions), the firewall DIG instantiated (the
// annotated pod templates, the NetworkChaining, the link label), the
// cluster's state rules (networks frozen, no delete while applied), network
// terminate, and a kill -9 during a network apply finished by `emco sync`.

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <signal.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "sim/sim.hpp"
#include "tests/example_fleet.hpp"
#include "tests/shell.hpp"

using namespace emco;
using nlohmann::json;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

struct Network : test::ExampleFleet {
  static sim::SimOptions options() {
    auto o = test::edge_clusters(2);
    o.preinstall = {"ovn4nfv"};
    return o;
  }

  Network() : ExampleFleet("network", "network", options()) {
    use_sim_clusters();
    init_and_apply({"01-clusters.yaml", "03-project.yaml", "04-app.yaml"});
  }
  json network_status(const std::string& cluster) {
    auto r = run("cluster network status edge/" + cluster + " -o json");
    INFO(r.out);
    REQUIRE(r.code == 0);
    return json::parse(r.out);
  }
  json get(const std::string& cluster, const std::string& api, const std::string& kind, const std::string& name) {
    return sim->get(cluster, api, kind, "default", name);
  }
};

const std::string k_nodus = "k8s.plugin.opnfv.org/v1alpha1";
const std::string k_nad = "k8s.cni.cncf.io/v1";

}  // namespace

TEST_CASE("examples/network: networks applied, the firewall chain deployed, state rules, terminate",
          "[network][sim][example]") {
  Network t;
  auto applied = t.run("apply -f 02-networks.yaml -v values.yaml");
  INFO(applied.out);
  REQUIRE(applied.code == 0);
  for (const char* c : {"edge1", "edge2"}) {
    json net = t.get(c, k_nodus, "Network", "protected-net");
    REQUIRE(net.is_object());
    CHECK(net["metadata"]["labels"]["net"] == "protected-net");
    CHECK(net["spec"]["ipv4Subnets"][0]["subnet"] == "192.168.20.0/24");
    CHECK(t.get(c, k_nodus, "Network", "unprotected-net")["spec"]["ipv4Subnets"][0]["excludeIps"] ==
          "192.168.10.2..192.168.10.9");
    json nad = t.get(c, k_nad, "NetworkAttachmentDefinition", "protected-net");
    REQUIRE(nad.is_object());
    CHECK(nad["spec"]["config"] == R"({"cniVersion":"0.3.1","type":"ovn4nfvk8s-cni","nfn-network":"protected-net"})");
  }
  json s = t.network_status("edge1");
  CHECK(s["name"] == "edge+edge1");
  CHECK(s["deployedStatus"] == "Instantiated");
  CHECK(s["states"]["actions"].back()["state"] == "Applied");
  CHECK(s["deployedCounts"]["Applied"] == 4);
  // Applying again changes nothing.
  auto again = t.run("cluster network apply edge/edge1");
  CHECK(again.code == 0);
  CHECK(again.out.find("applied (unchanged)") != std::string::npos);

  // While applied: networks frozen, the cluster not deletable.
  std::ofstream(t.dir / "extra.yaml") << "version: emco/v2\nresourceContext:\n  anchor: cluster-providers/edge/clusters/"
                                         "edge1/networks\nmetadata:\n  name: extra\nspec:\n  cniType: ovn4nfv\n";
  auto frozen = t.run("apply -f extra.yaml");
  CHECK(frozen.code != 0);
  CHECK(frozen.out.find("extra.yaml:1: the network intents of cluster 'edge/edge1' are Applied") != std::string::npos);
  auto del = t.run("cluster delete edge/edge1");
  CHECK(del.code != 0);
  CHECK(del.out.find("cannot delete cluster 'edge/edge1'") != std::string::npos);

  // The DIG: annotations, the chain, the link label, visible in render too.
  auto render = t.run("dig render network/firewall/v1/firewall-dig");
  INFO(render.out);
  CHECK(render.code == 0);
  CHECK(render.out.find("kind: NetworkChaining") != std::string::npos);
  auto deploy = t.run("apply -f 05-deploy.yaml -v values.yaml");
  INFO(deploy.out);
  REQUIRE(deploy.code == 0);
  for (const char* c : {"edge1", "edge2"}) {
    json fw = t.get(c, "apps/v1", "Deployment", "r1-firewall");
    REQUIRE(fw.is_object());
    const json& meta = fw["spec"]["template"]["metadata"];
    CHECK(meta["labels"]["sfc"] == "firewall");
    CHECK(meta["annotations"]["k8s.v1.cni.cncf.io/networks"] == R"([{"name":"ovn-networkobj","namespace":"default"}])");
    json nfn = json::parse(meta["annotations"]["k8s.plugin.opnfv.org/nfn-network"].get<std::string>());
    CHECK(nfn["type"] == "ovn4nfv");
    REQUIRE(nfn["interface"].size() == 2);
    CHECK(nfn["interface"][1] ==
          json({{"interface", "eth2"}, {"name", "protected-net"}, {"defaultGateway", "false"}, {"ipAddress", "192.168.20.2"}}));
    json chain = t.get(c, k_nodus, "NetworkChaining", "firewall-chain");
    REQUIRE(chain.is_object());
    CHECK(chain["spec"]["routingSpec"]["networkChain"] == "net=unprotected-net,sfc=firewall,net=protected-net");
    CHECK(chain["spec"]["routingSpec"]["left"][0]["podSelector"]["matchLabels"]["app"] == "packetgen");
  }
  auto kubectl = test::sh(t.dir, "kubectl --kubeconfig " + t.sim->kubeconfig_path("edge2") +
                                     " get networkchainings,networks.k8s.plugin.opnfv.org,network-attachment-definitions");
  INFO(kubectl.out);
  if (kubectl.code != 127) {  // kubectl installed
    CHECK(kubectl.out.find("firewall-chain") != std::string::npos);
    CHECK(kubectl.out.find("protected-net") != std::string::npos);
  }

  // Terminate the DIG, then the networks; then the cluster may go.
  REQUIRE(t.run("delete -f 05-deploy.yaml -v values.yaml").code == 0);
  auto term = t.run("delete -f 02-networks.yaml -v values.yaml");
  INFO(term.out);
  REQUIRE(term.code == 0);
  CHECK(t.get("edge1", k_nodus, "Network", "protected-net").is_null());
  CHECK(t.get("edge2", k_nad, "NetworkAttachmentDefinition", "unprotected-net").is_null());
  CHECK(t.network_status("edge1")["states"]["actions"].back()["state"] == "Terminated");
  auto unfrozen = t.run("apply -f extra.yaml");
  INFO(unfrozen.out);
  CHECK(unfrozen.code == 0);
}

TEST_CASE("examples/network: kill -9 during a network apply, then emco sync", "[network][sim][example]") {
  Network t;
  // edge2 refuses connections: its network apply keeps retrying.
  sim::Fault refuse;
  refuse.refuse = true;
  t.sim->set_fault("edge2", refuse);
  pid_t pid = test::spawn(t.dir, "env " + t.emco + " cluster network apply edge/edge2", t.dir / "apply.log");
  REQUIRE(pid > 0);
  auto deadline = std::chrono::steady_clock::now() + 30s;
  for (;;) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    json s = t.network_status("edge2");
    auto actions = s["states"].value("actions", json::array());
    if (!actions.empty() && actions.back()["state"] == "Applied") break;
    std::this_thread::sleep_for(50ms);
  }
  std::this_thread::sleep_for(500ms);
  REQUIRE(::kill(pid, SIGKILL) == 0);
  int wstatus = 0;
  REQUIRE(::waitpid(pid, &wstatus, 0) == pid);
  CHECK(WIFSIGNALED(wstatus));
  CHECK(t.network_status("edge2")["deployedStatus"] != "Instantiated");

  t.sim->set_fault("edge2", sim::Fault{});
  auto sync = t.run("sync");
  INFO(sync.out);
  CHECK(sync.code == 0);
  CHECK(t.network_status("edge2")["deployedStatus"] == "Instantiated");
  CHECK(t.get("edge2", k_nodus, "Network", "protected-net").is_object());
  CHECK(t.get("edge2", k_nad, "NetworkAttachmentDefinition", "unprotected-net").is_object());
}
