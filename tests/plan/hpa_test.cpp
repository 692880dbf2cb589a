// hpa placement and action on a synthetic workspace whose clusters' Nodes
// come from a fake live target (what Target::list would read from them).
#include <catch2/catch.hpp>

#include <map>

#include <nlohmann/json.hpp>

#include "core/plan/object.hpp"
#include "core/plan/plan.hpp"
#include "core/util/error.hpp"
#include "tests/plan/world.hpp"

using namespace emco;
using nlohmann::json;
using test::ClusterSpec;

namespace {

const std::string k_dig = "projects/p/composite-apps/ca/v1/deployment-intent-groups/dig";
const std::string k_hi = k_dig + "/hpa-intents";

std::string doc(const std::string& anchor, const std::string& body) {
  return "---\nversion: emco/v2\nresourceContext:\n  anchor: " + anchor + "\n" + body;
}

json node(const std::string& name, const std::string& cpu, const std::string& memory,
          const std::map<std::string, std::string>& labels = {}) {
  json n = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}, {"labels", json::object()}}}};
  for (const auto& [k, v] : labels) n["metadata"]["labels"][k] = v;
  n["status"]["allocatable"] = {{"cpu", cpu}, {"memory", memory}, {"pods", "110"}};
  n["status"]["capacity"] = n["status"]["allocatable"];
  return n;
}

// Serves Node lists per cluster and counts the reads.
struct Nodes {
  std::map<std::string, json> by_cluster;  // "p1+c1" -> array; absent: unreachable
  std::map<std::string, int> reads;

  struct Target : sync::Target {
    Nodes* nodes;
    std::string cluster;
    void probe() override {}
    void apply(std::string_view, bool) override {}
    bool remove(std::string_view) override { return false; }
    sync::ObjectState state(std::string_view) override { return {}; }
    std::string read(std::string_view) override { return ""; }
    std::string list(std::string_view api_version, std::string_view kind, std::string_view) override {
      REQUIRE(api_version == "v1");
      REQUIRE(kind == "Node");
      ++nodes->reads[cluster];
      auto it = nodes->by_cluster.find(cluster);
      if (it == nodes->by_cluster.end()) throw sync::TargetError(true, true, "connection refused");
      return it->second.dump();
    }
  };
  sync::TargetFactory factory() {
    return [this](const std::string& cluster, const std::string&) {
      auto t = std::make_shared<Target>();
      t->nodes = this;
      t->cluster = cluster;
      return std::shared_ptr<sync::Target>(t);
    };
  }
};

const std::string k_qat = "feature.node.kubernetes.io/intel_qat";

// Three clusters: c1 without the QAT label, c2 with two labelled nodes (8 and
// 2 cores), c3 with one labelled 4-core node. App web on all three (allOf),
// hpa placement and action registered as upstream registers them.
void world(test::Workspace& ws, const std::string& consumer_spec, const std::vector<std::string>& requirements) {
  ws.write("kubeconfig", "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n");
  test::write_chart(ws, "web");
  test::write_profile(ws, "profile");
  std::string y = doc("controllers", "metadata:\n  name: hpa-placement-controller-1\nspec:\n  host: hpaplc\n"
                                     "  port: 9091\n  type: placement\n");
  y += doc("controllers", "metadata:\n  name: hpa-action-controller-1\nspec:\n  host: hpaac\n  port: 9042\n"
                          "  type: action\n  priority: 1\n");
  y += test::world_yaml({{"p1", "c1", {}}, {"p1", "c2", {}}, {"p1", "c3", {}}},
                        {{"web", "    allOf:\n    - clusterProvider: p1\n      cluster: c1\n"
                                 "    - clusterProvider: p1\n      cluster: c2\n"
                                 "    - clusterProvider: p1\n      cluster: c3\n"}},
                        "    hpa-placement-controller-1: hpa-intent-1\n    hpa-action-controller-1: hpa-intent-1\n");
  y += doc(k_hi, "metadata:\n  name: hpa-intent-1\nspec:\n  app: web\n");
  y += doc(k_hi + "/hpa-intent-1/hpa-resource-consumers", "metadata:\n  name: consumer-1\nspec:\n" + consumer_spec);
  int i = 0;
  for (const auto& r : requirements)
    y += doc(k_hi + "/hpa-intent-1/hpa-resource-consumers/consumer-1/resource-requirements",
             "metadata:\n  name: req-" + std::to_string(++i) + "\nspec:\n" + r);
  ws.apply_text(y);
}

const std::string k_consumer = "  apiVersion: apps/v1\n  kind: Deployment\n  replicas: 2\n  name: r1-web\n  container: web\n";
const std::string k_label = "  allocatable: false\n  mandatory: true\n  weight: 1\n"
                            "  resource: {key: " + k_qat + ", value: \"true\"}\n";
const std::string k_cpu4 = "  allocatable: true\n  mandatory: true\n  weight: 1\n"
                           "  resource: {name: cpu, requests: 4, limits: 4}\n";
const std::string k_mem = "  allocatable: true\n  resource: {name: memory, requests: 512}\n";

Nodes three_clusters() {
  Nodes n;
  n.by_cluster["p1+c1"] = json::array({node("c1-a", "3800m", "15868928Ki")});
  n.by_cluster["p1+c2"] = json::array({node("c2-a", "8", "32Gi", {{k_qat, "true"}}), node("c2-b", "2", "8Gi", {{k_qat, "true"}})});
  n.by_cluster["p1+c3"] = json::array({node("c3-a", "4", "16Gi", {{k_qat, "true"}})});
  return n;
}

plan::Options options(Nodes& n) {
  plan::Options o = test::plan_options();
  o.context_id = "9";
  o.live = n.factory();
  return o;
}

std::string reason(const plan::Plan& p, const std::string& cluster) {
  for (const auto& ex : p.explanation)
    for (const auto& c : ex.candidates)
      if (c.cluster == cluster) return c.reason;
  return "";
}

std::string plan_error(test::Workspace& ws, const plan::Options& o) {
  try {
    plan::make(ws.store(), test::world_dig(), o);
  } catch (const Error& e) {
    return e.message() + " | " + e.hint();
  }
  FAIL("the plan was made");
  return "";
}

}  // namespace

TEST_CASE("hpa placement keeps the clusters whose nodes hold every replica, reading each cluster's Nodes once") {
  test::Workspace ws;
  world(ws, k_consumer, {k_label, k_cpu4, k_mem});
  Nodes n = three_clusters();
  plan::Plan p = plan::make(ws.store(), test::world_dig(), options(n));
  const auto* web = p.context.find_app("web");
  REQUIRE(web->clusters.size() == 1);
  CHECK(web->clusters[0].name == "p1+c2");  // replica 1 on c2-a (8 → 4 cores), replica 2 on c2-a again
  CHECK(reason(p, "p1+c1") == "allOf: cluster named; removed by placement controller 'hpa-placement-controller-1': consumer "
                              "'hpa-intent-1/consumer-1' requirement 'req-1': no node has label " + k_qat + "=true");
  CHECK(reason(p, "p1+c3") == "allOf: cluster named; removed by placement controller 'hpa-placement-controller-1': consumer "
                              "'hpa-intent-1/consumer-1' requirement 'req-2': cpu 4 cores for replica 2 of 2, the most "
                              "free on a node is 0 cores (short 4 cores)");
  CHECK(n.reads == std::map<std::string, int>{{"p1+c1", 1}, {"p1+c2", 1}, {"p1+c3", 1}});

  // A node added to c3 is seen by the next plan: nothing outlives a plan.
  n.by_cluster["p1+c3"].push_back(node("c3-b", "4", "16Gi", {{k_qat, "true"}}));
  plan::Plan again = plan::make(ws.store(), test::world_dig(), options(n));
  REQUIRE(again.context.find_app("web")->clusters.size() == 2);
  CHECK(again.context.find_app("web")->clusters[1].name == "p1+c3");
  CHECK(n.reads["p1+c3"] == 2);
}

TEST_CASE("hpa placement: memory is asked in MB, and a cluster whose Nodes cannot be read does not qualify") {
  test::Workspace ws;
  world(ws, k_consumer, {"  allocatable: true\n  resource: {name: memory, requests: 8200}\n"});
  Nodes n = three_clusters();
  n.by_cluster.erase("p1+c2");  // unreachable
  plan::Plan p = plan::make(ws.store(), test::world_dig(), options(n));
  const auto* web = p.context.find_app("web");
  REQUIRE(web->clusters.size() == 1);
  CHECK(web->clusters[0].name == "p1+c3");  // 16Gi = 17179.869 MB holds two replicas of 8200 MB
  CHECK(reason(p, "p1+c2").find("its Nodes cannot be read: connection refused") != std::string::npos);
  // 15868928Ki = 16249.782 MB: one replica fits, the second is 150.218 MB short.
  CHECK(reason(p, "p1+c1").find("memory 8200 MB for replica 2 of 2, the most free on a node is 8049.782 MB (short "
                                "150.218 MB)") != std::string::npos);
}

TEST_CASE("hpa placement: no cluster left fails naming the intent, dig explain shows every shortfall instead") {
  test::Workspace ws;
  world(ws, k_consumer, {"  allocatable: true\n  resource: {name: cpu, requests: 9}\n"});
  Nodes n = three_clusters();
  std::string e = plan_error(ws, options(n));
  CHECK(e.find("hpa intent '" + k_hi + "/hpa-intent-1': no cluster of app 'web' has the nodes it asks for (p1+c1: "
               "consumer 'hpa-intent-1/consumer-1' requirement 'req-1': cpu 9 cores for replica 1 of 2, the most free "
               "on a node is 3.8 cores (short 5.2 cores); p1+c2: ") != std::string::npos);
  CHECK(e.find("'emco dig explain' shows each cluster's shortfall") != std::string::npos);

  plan::Options o = options(n);
  o.explain_only = true;
  plan::Plan p = plan::make(ws.store(), test::world_dig(), o);
  CHECK(p.context.find_app("web")->clusters.empty());
  CHECK(reason(p, "p1+c2").find("short 1 cores") != std::string::npos);

  // Without live access (no factory) every cluster is unreadable.
  plan::Options offline = test::plan_options();
  CHECK(plan_error(ws, offline).find("its Nodes cannot be read: this plan reads no cluster") != std::string::npos);
}

TEST_CASE("hpa action writes node selectors, requests, limits and replicas into the consumer's workload") {
  test::Workspace ws;
  world(ws, k_consumer, {k_label, k_cpu4, k_mem});
  Nodes n = three_clusters();
  n.by_cluster["p1+c3"].push_back(node("c3-b", "4", "16Gi", {{k_qat, "true"}}));
  auto ctx = plan::build(ws.store(), test::world_dig(), options(n));
  test::check_golden("hpa-action.txt", test::dump(ctx));
  const auto* web = ctx.find_app("web");
  REQUIRE(web->clusters.size() == 2);
  json d = controllers::parse_object(web->clusters[0].find("r1-web+Deployment")->text(), "deployment");
  CHECK(d["spec"]["replicas"] == 2);
  CHECK(d["spec"]["template"]["spec"]["nodeSelector"] == json{{k_qat, "true"}});
  json want = {{"requests", {{"cpu", "4"}, {"memory", "512e6"}}}, {"limits", {{"cpu", "4"}}}};
  CHECK(d["spec"]["template"]["spec"]["containers"][0]["resources"] == want);
  CHECK(web->clusters[1].find("r1-web+Deployment")->hash() == web->clusters[0].find("r1-web+Deployment")->hash());
}

TEST_CASE("bad hpa intents fail at plan time naming the document") {
  Nodes n = three_clusters();
  auto error_of = [&](const std::string& consumer, const std::vector<std::string>& reqs) {
    test::Workspace ws;
    world(ws, consumer, reqs);
    return plan_error(ws, options(n));
  };
  const std::string req1 = "hpa resource requirement '" + k_hi + "/hpa-intent-1/hpa-resource-consumers/consumer-1/"
                           "resource-requirements/req-1'";
  const std::string consumer1 = "hpa consumer '" + k_hi + "/hpa-intent-1/hpa-resource-consumers/consumer-1'";
  CHECK(error_of(k_consumer, {"  allocatable: true\n  resource: {name: gpu, requests: 1}\n"}) ==
        "deployment intent group 'projects/p/composite-apps/ca/v1/deployment-intent-groups/dig': placement controller "
        "'hpa-placement-controller-1': " + req1 + ": hpa does not know resource 'gpu' | allocatable resources are cpu "
        "(cores), memory (MB), ephemeral-storage, pods, hugepages-SIZE or an extended resource DOMAIN/NAME such as "
        "nvidia.com/gpu");
  CHECK(error_of("  name: r1-web\n", {k_cpu4}).find(req1 + ": an allocatable requirement needs its consumer "
                                                    "'consumer-1' to name a container") != std::string::npos);
  CHECK(error_of(k_consumer, {"  allocatable: false\n  resource: {value: x}\n"}).find(req1 + ": a non-allocatable "
                                                                                     "requirement needs resource.key") !=
        std::string::npos);
  CHECK(error_of(k_consumer, {"  allocatable: true\n  resource: {name: cpu}\n"}).find(
            req1 + ": allocatable resource 'cpu' needs requests of at least 1") != std::string::npos);
  // Qualifying clusters exist; the action controller finds no such workload / container.
  std::string e = error_of("  name: r1-api\n  container: web\n", {k_label});
  CHECK(e.find("action controller 'hpa-action-controller-1': " + consumer1 + ": app 'web' has no Deployment 'r1-api' | "
               "spec.name names the workload's metadata.name: r1-web") != std::string::npos);
  e = error_of("  name: r1-web\n  container: sidecar\n", {"  allocatable: true\n  resource: {name: cpu, requests: 1}\n"});
  CHECK(e.find(consumer1 + ": workload 'r1-web+Deployment' has no container 'sidecar' | its containers: web") !=
        std::string::npos);
}
