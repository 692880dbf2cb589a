#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "plugins/targets/kube/readiness.hpp"

using emco::kube::evaluate_readiness;
using nlohmann::json;

namespace {
bool ready(const char* text) { return evaluate_readiness(json::parse(text)).ready; }
std::string reason(const char* text) { return evaluate_readiness(json::parse(text)).reason; }
}  // namespace

TEST_CASE("readiness: Deployment", "[readiness]") {
  CHECK(reason(R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":4},"status":{"readyReplicas":2}})") ==
        "2/4 replicas ready");
  // 25% maxUnavailable by default: 3 of 4 is enough.
  CHECK(ready(R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":4},"status":{"readyReplicas":3}})"));
  CHECK_FALSE(ready(R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":4,"strategy":{"type":"Recreate"}},"status":{"readyReplicas":3}})"));
  CHECK_FALSE(ready(R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":4,"strategy":{"rollingUpdate":{"maxUnavailable":0}}},"status":{"readyReplicas":3}})"));
  CHECK(ready(R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":4,"strategy":{"rollingUpdate":{"maxUnavailable":"50%"}}},"status":{"readyReplicas":2}})"));
  CHECK(ready(R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{"paused":true}})"));
  CHECK_FALSE(ready(R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{}})"));  // 1 replica, none ready
  CHECK(reason(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"generation":3},"spec":{"replicas":1},"status":{"observedGeneration":2,"readyReplicas":1}})") ==
        "status does not reflect the latest generation yet");
}

TEST_CASE("readiness: StatefulSet, DaemonSet", "[readiness]") {
  CHECK(ready(R"({"apiVersion":"apps/v1","kind":"StatefulSet","spec":{"replicas":2},"status":{"readyReplicas":2,"updatedReplicas":2}})"));
  CHECK(reason(R"({"apiVersion":"apps/v1","kind":"StatefulSet","spec":{"replicas":2},"status":{"readyReplicas":2,"updatedReplicas":1}})") ==
        "1/2 replicas updated");
  CHECK(ready(R"({"apiVersion":"apps/v1","kind":"StatefulSet","spec":{"replicas":3,"updateStrategy":{"rollingUpdate":{"partition":2}}},"status":{"readyReplicas":3,"updatedReplicas":1}})"));
  CHECK(ready(R"({"apiVersion":"apps/v1","kind":"StatefulSet","spec":{"updateStrategy":{"type":"OnDelete"}}})"));
  CHECK(ready(R"({"apiVersion":"apps/v1","kind":"DaemonSet","status":{"desiredNumberScheduled":3,"updatedNumberScheduled":3,"numberReady":2}})"));
  CHECK(reason(R"({"apiVersion":"apps/v1","kind":"DaemonSet","status":{"desiredNumberScheduled":3,"updatedNumberScheduled":3,"numberReady":1}})") ==
        "1/3 pods ready");
  CHECK(reason(R"({"apiVersion":"apps/v1","kind":"DaemonSet","status":{"desiredNumberScheduled":3,"updatedNumberScheduled":2,"numberReady":3}})") ==
        "2/3 pods updated");
}

TEST_CASE("readiness: Job, Pod, Service, others", "[readiness]") {
  CHECK(ready(R"({"apiVersion":"batch/v1","kind":"Job","spec":{"completions":2},"status":{"succeeded":2}})"));
  CHECK(reason(R"({"apiVersion":"batch/v1","kind":"Job","spec":{"completions":2},"status":{"succeeded":1}})") == "1/2 completions");
  CHECK(reason(R"({"apiVersion":"batch/v1","kind":"Job","spec":{"backoffLimit":1},"status":{"failed":2}})") ==
        "job failed 2 times (backoffLimit 1)");
  CHECK(ready(R"({"apiVersion":"batch/v1","kind":"Job","status":{"conditions":[{"type":"Complete","status":"True"}]}})"));
  CHECK(ready(R"({"apiVersion":"v1","kind":"Pod","status":{"conditions":[{"type":"Ready","status":"True"}]}})"));
  CHECK_FALSE(ready(R"({"apiVersion":"v1","kind":"Pod","status":{"conditions":[{"type":"Ready","status":"False"}]}})"));
  CHECK(ready(R"({"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"job-name":"j"}},"status":{"phase":"Succeeded"}})"));
  CHECK(reason(R"({"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"job-name":"j"}},"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}})") ==
        "job pod phase is Running");
  CHECK(ready(R"({"apiVersion":"v1","kind":"Service","spec":{"clusterIP":"10.0.0.1"}})"));
  CHECK_FALSE(ready(R"({"apiVersion":"v1","kind":"Service","spec":{}})"));
  CHECK(ready(R"({"apiVersion":"v1","kind":"Service","spec":{"type":"ExternalName","externalName":"x"}})"));
  CHECK(reason(R"({"apiVersion":"v1","kind":"Service","spec":{"type":"LoadBalancer","clusterIP":"10.0.0.1"}})") ==
        "load balancer has no ingress yet");
  CHECK(ready(R"({"apiVersion":"v1","kind":"Service","spec":{"type":"LoadBalancer","clusterIP":"10.0.0.1"},"status":{"loadBalancer":{"ingress":[{"ip":"1.2.3.4"}]}}})"));
  CHECK(ready(R"({"apiVersion":"v1","kind":"ConfigMap"})"));
  CHECK(ready(R"({"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest"})"));
  CHECK(ready(R"({"apiVersion":"example.com/v1","kind":"Widget"})"));
  CHECK(evaluate_readiness(json()).reason == "not present");
}

// Numbers a broken or hostile server may send (found reading the code while
// writing tests/fuzz/kube_api_fuzz): out-of-range floats, NaN percentages and
// extreme integers were converted and subtracted with undefined behaviour
// (UBSan: float-cast-overflow, signed-integer-overflow). Counts are int32 in
// the API and are clamped to it.
TEST_CASE("readiness: numbers out of any count's range", "[readiness][fuzz]") {
  CHECK(reason(R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":1e300},"status":{"readyReplicas":-1e300}})") ==
        "-2147483648/2147483647 replicas ready");
  CHECK(ready(R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":4,"strategy":{"rollingUpdate":{"maxUnavailable":"1e300%"}}},"status":{}})"));
  CHECK(reason(R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":4,"strategy":{"rollingUpdate":{"maxUnavailable":"nan%"}}},"status":{"readyReplicas":2}})") ==
        "2/4 replicas ready");  // the default 25% then
  CHECK(ready(R"({"apiVersion":"apps/v1","kind":"StatefulSet","spec":{"replicas":-9223372036854775808,"updateStrategy":{"rollingUpdate":{"partition":9223372036854775807}}},"status":{"updatedReplicas":18446744073709551615}})"));
  CHECK(reason(R"({"apiVersion":"apps/v1","kind":"DaemonSet","spec":{"updateStrategy":{"rollingUpdate":{"maxUnavailable":-9223372036854775808}}},"status":{"desiredNumberScheduled":9223372036854775807,"updatedNumberScheduled":9223372036854775807}})") ==
        "0/2147483647 pods ready");
  CHECK(reason(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"generation":1e300},"status":{"observedGeneration":-1e300}})") ==
        "status does not reflect the latest generation yet");
  CHECK(ready(R"({"apiVersion":"batch/v1","kind":"Job","spec":{"completions":-1e300,"backoffLimit":1e300},"status":{"failed":1e300}})"));
}
