// KubeTarget: manifests, ordering, and delivery to the simulator.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "helpers.hpp"
#include "pki.hpp"
#include "plugins/targets/kube/kube_target.hpp"
#include "plugins/targets/kube/pem.hpp"

using namespace emco;
using namespace emco::kube;
using namespace emco::kube::test;
using json = nlohmann::json;
using namespace std::chrono_literals;

TEST_CASE("target: multi-document manifests and apply order", "[target]") {
  auto objects = parse_manifests(R"(# leading comment
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
data: {replicas: "3", n: 3}
---
---
# only a comment
--- {"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"ws.example.com"}}
---
apiVersion: v1
kind: List
items:
- {apiVersion: example.com/v1, kind: W, metadata: {name: w}}
- {apiVersion: v1, kind: Namespace, metadata: {name: team}}
...
)");
  REQUIRE(objects.size() == 4);
  CHECK(objects[0]["data"]["replicas"] == "3");
  CHECK(objects[0]["data"]["n"] == 3);
  CHECK(objects[1]["kind"] == "CustomResourceDefinition");
  CHECK(objects[2]["kind"] == "W");
  CHECK(apply_order(objects) == std::vector<size_t>{3, 1, 0, 2});
  ObjectRef ref = ref_of(objects[2]);
  CHECK(ref.gvk == Gvk{"example.com", "v1", "W"});
  CHECK(ref.name == "w");
  CHECK(is_crd(ref_of(objects[1]).gvk));
  try {
    parse_manifests("a: 1\n---\nb: [\n");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.message().find("manifest document 2") == 0);
  }
}

