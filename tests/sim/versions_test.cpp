// --kube-version: each release's /version, discovery and served APIs.

#include <catch2/catch.hpp>

#include <set>

#include "core/util/error.hpp"
#include "helpers.hpp"

using nlohmann::json;
using namespace simtest;
using emco::sim::SimOptions;

namespace {

SimOptions release(int minor) {
  SimOptions o;
  o.clusters = 1;
  o.ready_delay_ms = 0;
  o.version_minor = minor;
  return o;
}

// "group/version" of every group version aggregated discovery lists.
std::set<std::string> group_versions(const Http& c) {
  std::set<std::string> out;
  const std::string accept = "Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
  for (const char* root : {"/api", "/apis"}) {
    json list = c.get(root, {accept}).json();
    for (const auto& g : list["items"])
      for (const auto& v : g["versions"])
        out.insert(g["metadata"].value("name", "") + "/" + v["version"].get<std::string>());
  }
  return out;
}

std::string preferred(const Http& c, const std::string& group) {
  json list = c.get("/apis").json();
  for (const auto& g : list["groups"])
    if (g["name"] == group) return g["preferredVersion"]["version"];
  return "";
}

}  // namespace

TEST_CASE("each release serves its own /version and APIs") {
  struct Expect {
    int minor;
    bool psp;             // policy/v1beta1 (PodSecurityPolicy), batch/v1beta1 CronJob
    bool hpa_v2beta2;     // autoscaling/v2beta2
    bool hpa_v2;          // autoscaling/v2
    const char* flowcontrol;  // the preferred flowcontrol version
    bool self_subject_review;
  };
  for (const Expect& e : {Expect{22, true, true, false, "v1beta1", false}, Expect{24, true, true, true, "v1beta2", false},
                          Expect{25, false, true, true, "v1beta2", false}, Expect{26, false, false, true, "v1beta3", false},
                          Expect{29, false, false, true, "v1", true}, Expect{32, false, false, true, "v1", true}}) {
    DYNAMIC_SECTION("1." << e.minor) {
      Fleet f(release(e.minor));
      Http c = f.client("cluster-1");
      json v = c.get("/version").json();
      CHECK(v["minor"] == std::to_string(e.minor));
      CHECK(v["gitVersion"].get<std::string>().rfind("v1." + std::to_string(e.minor) + ".", 0) == 0);
      auto gvs = group_versions(c);
      CHECK(gvs.count("policy/v1beta1") == e.psp);
      CHECK(gvs.count("batch/v1beta1") == e.psp);
      CHECK(gvs.count("policy/v1") == 1);
      CHECK(gvs.count("autoscaling/v2beta2") == e.hpa_v2beta2);
      CHECK(gvs.count("autoscaling/v2") == e.hpa_v2);
      CHECK(gvs.count("autoscaling/v1") == 1);
      CHECK(gvs.count("authentication.k8s.io/v1") == e.self_subject_review);
      CHECK(preferred(c, "flowcontrol.apiserver.k8s.io") == e.flowcontrol);
      CHECK(preferred(c, "autoscaling") == (e.hpa_v2 ? "v2" : "v1"));

      // The legacy per-group-version list and the API itself agree.
      auto psp_list = c.get("/apis/policy/v1beta1");
      json psp = json::parse(R"({"apiVersion":"policy/v1beta1","kind":"PodSecurityPolicy","metadata":{"name":"restricted"},
        "spec":{"seLinux":{"rule":"RunAsAny"},"runAsUser":{"rule":"RunAsAny"},"supplementalGroups":{"rule":"RunAsAny"},
                "fsGroup":{"rule":"RunAsAny"}}})");
      auto applied = c.apply("/apis/policy/v1beta1/podsecuritypolicies/restricted", psp);
      auto index = c.get("/openapi/v3").json();
      if (e.psp) {
        REQUIRE(psp_list.status == 200);
        bool listed = false;
        json resources = psp_list.json()["resources"];
        for (const auto& r : resources)
          if (r["name"] == "podsecuritypolicies") listed = r["kind"] == "PodSecurityPolicy" && r["namespaced"] == false;
        CHECK(listed);
        CHECK(applied.status == 201);
        CHECK(index["paths"].contains("apis/policy/v1beta1"));
        json cron = json::parse(R"({"apiVersion":"batch/v1beta1","kind":"CronJob","metadata":{"name":"c","namespace":"default"},
          "spec":{"schedule":"* * * * *","jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never",
          "containers":[{"name":"c","image":"x"}]}}}}}})");
        CHECK(c.apply("/apis/batch/v1beta1/namespaces/default/cronjobs/c", cron).status == 201);
      } else {
        CHECK(psp_list.status == 404);
        CHECK(applied.status == 404);
        CHECK_FALSE(index["paths"].contains("apis/policy/v1beta1"));
      }
      CHECK(c.get("/openapi/v3").json()["paths"].contains("apis/apps/v1"));
    }
  }
}

TEST_CASE("releases outside 1.22-1.32 are refused") {
  CHECK(emco::sim::parse_kube_version("1.24") == 24);
  CHECK(emco::sim::parse_kube_version("v1.22") == 22);
  CHECK(emco::sim::parse_kube_version("1.32") == 32);
  for (const char* bad : {"1.21", "1.33", "1.2x", "2.24", "24", "", "1.", "1.24.3"}) {
    INFO(bad);
    try {
      emco::sim::parse_kube_version(bad);
      FAIL("accepted");
    } catch (const emco::Error& e) {
      CHECK(e.kind() == emco::ErrorKind::usage);
      CHECK(e.message() == std::string("'--kube-version' must be a Kubernetes release from 1.22 to 1.32, not '") +
                               bad + "'");
    }
  }
  TempDir dir;
  SimOptions o = release(33);
  o.dir = dir.path + "/sim";
  emco::sim::Simulator sim(o);
  CHECK_THROWS_AS(sim.start(), emco::Error);
}
