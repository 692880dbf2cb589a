#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/k8s/managed_fields.hpp"

using nlohmann::json;
using namespace emco::k8s;

namespace {

const Schema& deployment() { return Schema::for_kind("apps", "Deployment"); }

json intent(int replicas, const char* image) {
  json d = json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"web","namespace":"ns","labels":{"app":"web"}},
    "spec":{"selector":{"matchLabels":{"app":"web"}},
      "template":{"metadata":{"labels":{"app":"web"}},
        "spec":{"containers":[{"name":"web","ports":[{"containerPort":80}]}]}}}})");
  d["spec"]["replicas"] = replicas;
  d["spec"]["template"]["spec"]["containers"][0]["image"] = image;
  default_list_keys(d, deployment());
  return d;
}

Manager mgr(const char* name, const char* time = "2026-01-01T00:00:00Z") {
  return {name, "apps/v1", time, Scope::main};
}

json entry(const json& obj, const std::string& manager, const std::string& op = "Apply") {
  for (const auto& e : obj["metadata"]["managedFields"])
    if (e["manager"] == manager && e["operation"] == op) return e;
  return nullptr;
}

}  // namespace

TEST_CASE("fieldsV1 of an applied deployment has kubectl's shape") {
  auto set = object_fields(intent(2, "nginx"), deployment());
  json v1 = fields_to_v1(set);
  CHECK(v1 == json::parse(R"({
    "f:metadata":{"f:labels":{"f:app":{}}},
    "f:spec":{"f:replicas":{},"f:selector":{},
      "f:template":{"f:metadata":{"f:labels":{"f:app":{}}},
        "f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{},
          "f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}}}}}}}})"));
  CHECK(fields_from_v1(v1) == set);
}

TEST_CASE("field set operations and path strings") {
  auto a = object_fields(intent(2, "x"), deployment());
  auto b = fields_from_v1(json::parse(R"({"f:spec":{"f:replicas":{},"f:paused":{}}})"));
  auto common = set_intersection(a, b);
  CHECK(common.paths() == std::vector<std::string>{".spec.replicas"});
  auto rest = set_difference(b, a);
  CHECK(rest.paths() == std::vector<std::string>{".spec.paused"});
  CHECK(set_union(a, b).paths().size() == a.paths().size() + 1);
  auto paths = a.paths();
  CHECK(std::find(paths.begin(), paths.end(), ".spec.template.spec.containers[name=\"web\"].image") != paths.end());
  CHECK(std::find(paths.begin(), paths.end(),
                  ".spec.template.spec.containers[name=\"web\"].ports[containerPort=80,protocol=\"TCP\"]") !=
        paths.end());
}

TEST_CASE("apply creates an object owned by its manager") {
  json live;
  auto conflicts = apply(live, intent(2, "nginx:1"), deployment(), mgr("kubectl"), false);
  CHECK(conflicts.empty());
  CHECK(live["spec"]["replicas"] == 2);
  CHECK(live["metadata"]["name"] == "web");
  REQUIRE(live["metadata"]["managedFields"].size() == 1);
  auto e = live["metadata"]["managedFields"][0];
  CHECK(e["manager"] == "kubectl");
  CHECK(e["operation"] == "Apply");
  CHECK(e["fieldsType"] == "FieldsV1");
  CHECK(e["apiVersion"] == "apps/v1");
}

TEST_CASE("a second manager conflicts on a different value, shares a same value, force takes over") {
  json live;
  apply(live, intent(2, "nginx:1"), deployment(), mgr("helm"), false);
  json before = live;

  json other = json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"ns"},
                               "spec":{"replicas":3}})");
  auto conflicts = apply(live, other, deployment(), mgr("emco"), false);
  REQUIRE(conflicts.size() == 1);
  CHECK(conflicts[0].manager == "\"helm\"");
  CHECK(conflicts[0].path == ".spec.replicas");
  CHECK(live == before);  // nothing merged
  CHECK(conflict_message(conflicts) == "Apply failed with 1 conflict: conflict with \"helm\": .spec.replicas");

  other["spec"]["replicas"] = 2;  // the same value: shared, no conflict
  CHECK(apply(live, other, deployment(), mgr("emco"), false).empty());
  CHECK(fields_from_v1(entry(live, "helm")["fieldsV1"]).paths().size() ==
        fields_from_v1(before["metadata"]["managedFields"][0]["fieldsV1"]).paths().size());

  other["spec"]["replicas"] = 5;
  auto forced = apply(live, other, deployment(), mgr("emco"), true);
  CHECK(forced.size() == 1);  // reported, but applied
  CHECK(live["spec"]["replicas"] == 5);
  auto helm = fields_from_v1(entry(live, "helm")["fieldsV1"]).paths();
  CHECK(std::find(helm.begin(), helm.end(), ".spec.replicas") == helm.end());
}

TEST_CASE("a field a manager stops applying is removed unless another manager owns it") {
  json live;
  apply(live, intent(2, "nginx:1"), deployment(), mgr("kubectl"), false);
  json less = intent(2, "nginx:1");
  less["metadata"].erase("labels");
  less["spec"].erase("replicas");
  CHECK(apply(live, less, deployment(), mgr("kubectl"), false).empty());
  CHECK_FALSE(live["metadata"].contains("labels"));
  CHECK_FALSE(live["spec"].contains("replicas"));

  // Now with a co-owner: ownership is dropped but the value stays.
  json live2;
  apply(live2, intent(2, "nginx:1"), deployment(), mgr("kubectl"), false);
  json shared = json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
                                "spec":{"replicas":2}})");
  apply(live2, shared, deployment(), mgr("other"), false);
  apply(live2, less, deployment(), mgr("kubectl"), false);
  CHECK(live2["spec"]["replicas"] == 2);
}

TEST_CASE("apply merges keyed lists item by item") {
  json live;
  apply(live, intent(1, "a:1"), deployment(), mgr("one"), false);
  json sidecar = json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
      "spec":{"template":{"spec":{"containers":[{"name":"side","image":"s:1"}]}}}})");
  CHECK(apply(live, sidecar, deployment(), mgr("two"), false).empty());
  auto c = live["spec"]["template"]["spec"]["containers"];
  REQUIRE(c.size() == 2);
  CHECK(c[0]["name"] == "web");
  CHECK(c[1]["name"] == "side");
  // "two" stops applying its container: only that item goes.
  json nothing = json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"}})");
  apply(live, nothing, deployment(), mgr("two"), false);
  CHECK(live["spec"]["template"]["spec"]["containers"].size() == 1);
  CHECK(entry(live, "two").is_null());  // an empty entry is dropped
}

TEST_CASE("several conflicts are grouped by manager, update managers show apiVersion and time") {
  json live;
  apply(live, intent(2, "nginx:1"), deployment(), mgr("helm"), false);
  json changed = live;
  changed["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2";
  record_update(live, changed, deployment(), mgr("kubectl-edit", "2026-02-02T00:00:00Z"));
  live = changed;
  CHECK(entry(live, "kubectl-edit", "Update")["fieldsV1"] ==
        json::parse(R"({"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{"f:image":{}}}}}}})"));

  json mine = intent(7, "nginx:3");
  auto conflicts = apply(live, mine, deployment(), mgr("emco"), false);
  REQUIRE(conflicts.size() == 2);
  CHECK(conflict_message(conflicts) ==
        "Apply failed with 2 conflicts: conflicts with \"helm\":\n- .spec.replicas\n"
        "conflicts with \"kubectl-edit\" using apps/v1 at 2026-02-02T00:00:00Z:\n"
        "- .spec.template.spec.containers[name=\"web\"].image");
}

TEST_CASE("record_update gives a writer the fields it changed and drops removed fields") {
  json live;
  apply(live, intent(2, "nginx:1"), deployment(), mgr("kubectl"), false);
  json next = live;
  next["spec"]["replicas"] = 4;
  next["metadata"]["labels"].erase("app");
  record_update(live, next, deployment(), mgr("scaler"));
  auto scaler = fields_from_v1(entry(next, "scaler", "Update")["fieldsV1"]).paths();
  CHECK(scaler == std::vector<std::string>{".spec.replicas"});
  auto kubectl = fields_from_v1(entry(next, "kubectl")["fieldsV1"]).paths();
  CHECK(std::find(kubectl.begin(), kubectl.end(), ".spec.replicas") == kubectl.end());
  CHECK(std::find(kubectl.begin(), kubectl.end(), ".metadata.labels.app") == kubectl.end());

  json created = intent(1, "x");
  record_update(json(), created, deployment(), mgr("kubectl-create"));
  CHECK(entry(created, "kubectl-create", "Update")["fieldsV1"].contains("f:spec"));
}

TEST_CASE("status scope owns only status, main scope ignores it") {
  json obj = intent(1, "x");
  obj["status"] = {{"replicas", 1}};
  auto main_paths = object_fields(obj, deployment()).paths();
  for (const auto& p : main_paths) CHECK(p.rfind(".status", 0) != 0);
  auto status_paths = object_fields(obj, deployment(), Scope::status).paths();
  CHECK(status_paths == std::vector<std::string>{".status.replicas"});
}

TEST_CASE("atomic maps and sets from a CRD's OpenAPI schema") {
  Schema s = Schema::from_openapi(json::parse(R"({"type":"object","properties":{"spec":{"type":"object",
    "properties":{"tags":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}},
                  "ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["port"],
                           "items":{"type":"object"}},
                  "sel":{"type":"object","x-kubernetes-map-type":"atomic"}}}}})"));
  json obj = json::parse(R"({"spec":{"tags":["a","b"],"ports":[{"port":1,"x":2}],"sel":{"a":"b"},"list":[1]}})");
  auto v1 = fields_to_v1(object_fields(obj, s));
  CHECK(v1 == json::parse(R"({"f:spec":{"f:tags":{"v:\"a\"":{},"v:\"b\"":{}},
     "f:ports":{"k:{\"port\":1}":{".":{},"f:port":{},"f:x":{}}},"f:sel":{},"f:list":{}}})"));
}
