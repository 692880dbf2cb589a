#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/k8s/patch.hpp"
#include "core/k8s/schema.hpp"
#include "core/util/error.hpp"

using nlohmann::json;
using namespace emco::k8s;

TEST_CASE("json patch: add, remove, replace") {
  json doc = {{"a", 1}, {"b", {{"c", {1, 2}}}}};
  auto out = json_patch(doc, json::parse(R"([
    {"op":"add","path":"/d","value":"x"},
    {"op":"add","path":"/b/c/1","value":9},
    {"op":"add","path":"/b/c/-","value":3},
    {"op":"remove","path":"/a"},
    {"op":"replace","path":"/b/c/0","value":0}])"));
  CHECK(out == json::parse(R"({"b":{"c":[0,9,2,3]},"d":"x"})"));
  CHECK(doc["a"] == 1);  // the input is untouched
}

TEST_CASE("json patch: move, copy and test") {
  json doc = json::parse(R"({"a":{"x":1},"b":[1,2]})");
  auto out = json_patch(doc, json::parse(R"([
    {"op":"test","path":"/a/x","value":1},
    {"op":"copy","from":"/a","path":"/c"},
    {"op":"move","from":"/b/0","path":"/b/-"},
    {"op":"move","from":"/a/x","path":"/y"}])"));
  CHECK(out == json::parse(R"({"a":{},"b":[2,1],"c":{"x":1},"y":1})"));
}

TEST_CASE("json patch: pointer escapes ~0 and ~1") {
  json doc = json::parse(R"({"metadata":{"labels":{"app.kubernetes.io/name":"a","x~y":"b"}}})");
  auto out = json_patch(doc, json::parse(R"([
    {"op":"replace","path":"/metadata/labels/app.kubernetes.io~1name","value":"z"},
    {"op":"remove","path":"/metadata/labels/x~0y"}])"));
  CHECK(out["metadata"]["labels"] == json::parse(R"({"app.kubernetes.io/name":"z"})"));
}

TEST_CASE("json patch: errors name the failing operation") {
  json doc = json::parse(R"({"a":[1]})");
  auto fails_with = [&](const char* patch, const char* text) {
    try {
      json_patch(doc, json::parse(patch));
      FAIL("expected an error for " << patch);
    } catch (const emco::Error& e) {
      CHECK(e.kind() == emco::ErrorKind::invalid);
      CHECK_THAT(e.message(), Catch::Contains(text));
    }
  };
  fails_with(R"([{"op":"remove","path":"/b"}])", "remove operation does not apply: doc is missing path");
  fails_with(R"([{"op":"replace","path":"/b","value":1}])", "replace operation does not apply");
  fails_with(R"([{"op":"add","path":"/a/5","value":1}])", "index out of bounds");
  fails_with(R"([{"op":"add","path":"/x/y","value":1}])", "doc is missing path");
  fails_with(R"([{"op":"test","path":"/a/0","value":2}])", "testing value '/a/0' failed");
  fails_with(R"([{"op":"move","from":"/a","path":"/a/0"}])", "cannot move a value into one of its children");
  fails_with(R"([{"op":"frobnicate","path":"/a"}])", "unexpected json patch operation 'frobnicate'");
  fails_with(R"([{"op":"add","path":"/z"}])", "add operation is missing 'value'");
  fails_with(R"([{"op":"add","path":"a","value":1}])", "must start with '/'");
  fails_with(R"({"op":"add"})", "must be an array");
  fails_with(R"([{"op":"remove","path":"/a/01"}])", "doc is missing path");  // leading zero
}

TEST_CASE("json patch: where evanphx/json-patch differs from nlohmann's patch(), emco does as evanphx") {
  json doc = json::parse(R"({"a":[1],"s":"text"})");
  // evanphx's test treats a missing path and null alike; nlohmann's fails
  CHECK(json_patch(doc, json::parse(R"([{"op":"test","path":"/missing","value":null}])")) == doc);
  CHECK_THROWS_AS(json_patch(doc, json::parse(R"([{"op":"test","path":"/missing","value":1}])")), emco::Error);
  CHECK_THROWS_AS(json_patch(doc, json::parse(R"([{"op":"test","path":"/a/3","value":null}])")), emco::Error);
  CHECK_THROWS_AS(json_patch(doc, json::parse(R"([{"op":"test","path":"/no/such","value":null}])")), emco::Error);
  // a path through a scalar is missing for evanphx; nlohmann's add would silently do nothing
  for (const char* p : {R"([{"op":"add","path":"/s/x","value":1}])", R"([{"op":"add","path":"/a/0/x","value":1}])",
                        R"([{"op":"copy","from":"/a","path":"/s/x"}])"}) {
    INFO(p);
    try {
      json_patch(doc, json::parse(p));
      FAIL("expected an error");
    } catch (const emco::Error& e) {
      CHECK_THAT(e.message(), Catch::Contains("doc is missing path"));
    }
  }
}

TEST_CASE("json patch: a failing test leaves nothing applied") {
  json doc = {{"a", 1}};
  CHECK_THROWS_AS(json_patch(doc, json::parse(R"([{"op":"add","path":"/b","value":2},
                                                  {"op":"test","path":"/a","value":5}])")),
                  emco::Error);
  CHECK(doc == json{{"a", 1}});
}

TEST_CASE("merge patch follows RFC 7386") {
  // The RFC's appendix A examples.
  auto mp = [](const char* d, const char* p) { return merge_patch(json::parse(d), json::parse(p)); };
  CHECK(mp(R"({"a":"b"})", R"({"a":"c"})") == json::parse(R"({"a":"c"})"));
  CHECK(mp(R"({"a":"b"})", R"({"b":"c"})") == json::parse(R"({"a":"b","b":"c"})"));
  CHECK(mp(R"({"a":"b"})", R"({"a":null})") == json::parse(R"({})"));
  CHECK(mp(R"({"a":"b","b":"c"})", R"({"a":null})") == json::parse(R"({"b":"c"})"));
  CHECK(mp(R"({"a":["b"]})", R"({"a":"c"})") == json::parse(R"({"a":"c"})"));
  CHECK(mp(R"({"a":"c"})", R"({"a":["b"]})") == json::parse(R"({"a":["b"]})"));
  CHECK(mp(R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})") == json::parse(R"({"a":{"b":"d"}})"));
  CHECK(mp(R"({"a":[{"b":"c"}]})", R"({"a":[1]})") == json::parse(R"({"a":[1]})"));
  CHECK(mp(R"(["a","b"])", R"(["c","d"])") == json::parse(R"(["c","d"])"));
  CHECK(mp(R"({"a":"b"})", R"(["c"])") == json::parse(R"(["c"])"));
  CHECK(mp(R"({"e":null})", R"({"a":1})") == json::parse(R"({"e":null,"a":1})"));
  CHECK(mp(R"([1,2])", R"({"a":"b","c":null})") == json::parse(R"({"a":"b"})"));
  CHECK(mp(R"({})", R"({"a":{"bb":{"ccc":null}}})") == json::parse(R"({"a":{"bb":{}}})"));
}

namespace {
const Schema& deployment() { return Schema::for_kind("apps", "Deployment"); }
json containers(const json& d) { return d["spec"]["template"]["spec"]["containers"]; }
const char* k_deploy = R"({"spec":{"template":{"spec":{
  "containers":[{"name":"a","image":"a:1","env":[{"name":"X","value":"1"}]},{"name":"b","image":"b:1"}],
  "volumes":[{"name":"v","emptyDir":{}}],
  "tolerations":[{"key":"k1"}]}}},
  "metadata":{"finalizers":["f1"]}})";
}  // namespace

TEST_CASE("strategic merge: containers merge by name") {
  json doc = json::parse(k_deploy);
  auto out = strategic_merge_patch(doc, json::parse(R"({"spec":{"template":{"spec":{"containers":[
      {"name":"b","image":"b:2"},{"name":"c","image":"c:1"}]}}}})"), deployment());
  auto c = containers(out);
  REQUIRE(c.size() == 3);
  CHECK(c[0]["image"] == "a:1");
  CHECK(c[0]["env"][0]["value"] == "1");
  CHECK(c[1] == json::parse(R"({"name":"b","image":"b:2"})"));
  CHECK(c[2]["name"] == "c");
}

TEST_CASE("strategic merge: nested env merges by name, lists without a strategy are replaced") {
  json doc = json::parse(k_deploy);
  auto out = strategic_merge_patch(doc, json::parse(R"({"spec":{"template":{"spec":{
      "containers":[{"name":"a","env":[{"name":"Y","value":"2"}]}],
      "tolerations":[{"key":"k2"}]}}}})"), deployment());
  CHECK(containers(out)[0]["env"] == json::parse(R"([{"name":"X","value":"1"},{"name":"Y","value":"2"}])"));
  CHECK(out["spec"]["template"]["spec"]["tolerations"] == json::parse(R"([{"key":"k2"}])"));
}

TEST_CASE("strategic merge: $patch delete removes a list item, $patch replace a whole list or map") {
  json doc = json::parse(k_deploy);
  auto out = strategic_merge_patch(doc, json::parse(R"({"spec":{"template":{"spec":{"containers":[
      {"name":"a","$patch":"delete"}]}}}})"), deployment());
  REQUIRE(containers(out).size() == 1);
  CHECK(containers(out)[0]["name"] == "b");

  out = strategic_merge_patch(doc, json::parse(R"({"spec":{"template":{"spec":{"containers":[
      {"name":"z","image":"z:1"},{"$patch":"replace"}]}}}})"), deployment());
  CHECK(containers(out) == json::parse(R"([{"name":"z","image":"z:1"}])"));

  out = strategic_merge_patch(doc, json::parse(R"({"spec":{"template":{"spec":{"$patch":"replace",
      "containers":[{"name":"only"}]}}}})"), deployment());
  CHECK(out["spec"]["template"]["spec"] == json::parse(R"({"containers":[{"name":"only"}]})"));

  out = strategic_merge_patch(doc, json::parse(R"({"spec":{"template":{"$patch":"delete"}}})"), deployment());
  CHECK_FALSE(out["spec"].contains("template"));
}

TEST_CASE("strategic merge: $retainKeys, $deleteFromPrimitiveList, primitive merge lists, null deletes") {
  json doc = json::parse(k_deploy);
  auto out = strategic_merge_patch(doc, json::parse(R"({"spec":{"template":{"spec":{"volumes":[
      {"name":"v","$retainKeys":["name","configMap"],"configMap":{"name":"cm"}}]}}}})"), deployment());
  CHECK(out["spec"]["template"]["spec"]["volumes"] == json::parse(R"([{"name":"v","configMap":{"name":"cm"}}])"));

  out = strategic_merge_patch(doc, json::parse(R"({"metadata":{"finalizers":["f2","f1"]}})"), deployment());
  CHECK(out["metadata"]["finalizers"] == json::parse(R"(["f1","f2"])"));

  out = strategic_merge_patch(doc, json::parse(R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["f1"]}})"),
                              deployment());
  CHECK(out["metadata"]["finalizers"] == json::array());

  out = strategic_merge_patch(doc, json::parse(R"({"spec":{"template":{"spec":{"tolerations":null}}}})"), deployment());
  CHECK_FALSE(out["spec"]["template"]["spec"].contains("tolerations"));
}

TEST_CASE("strategic merge: $setElementOrder orders merged items") {
  json doc = json::parse(k_deploy);
  auto out = strategic_merge_patch(doc, json::parse(R"({"spec":{"template":{"spec":{
      "$setElementOrder/containers":[{"name":"b"},{"name":"a"}],
      "containers":[{"name":"a","image":"a:2"}]}}}})"), deployment());
  CHECK(containers(out)[0]["name"] == "b");
  CHECK(containers(out)[1]["image"] == "a:2");
}

TEST_CASE("strategic merge: a keyed item without its merge key is an error, unknown $patch too") {
  json doc = json::parse(k_deploy);
  CHECK_THROWS_WITH(strategic_merge_patch(doc, json::parse(R"({"spec":{"template":{"spec":{"containers":[
      {"image":"x"}]}}}})"), deployment()),
                    Catch::Contains("does not contain declared merge key: name"));
  CHECK_THROWS_AS(strategic_merge_patch(doc, json::parse(R"({"spec":{"$patch":"explode"}})"), deployment()),
                  emco::Error);
}

TEST_CASE("strategic merge: service ports merge by port, custom resources have no strategy") {
  const Schema& svc = Schema::for_kind("", "Service");
  json doc = json::parse(R"({"spec":{"ports":[{"port":80,"name":"http"},{"port":443,"name":"https"}]}})");
  auto out = strategic_merge_patch(doc, json::parse(R"({"spec":{"ports":[{"port":443,"targetPort":8443}]}})"), svc);
  CHECK(out["spec"]["ports"][1] == json::parse(R"({"port":443,"name":"https","targetPort":8443})"));
  CHECK(svc.supports_strategic_merge());
  CHECK_FALSE(Schema::untyped().supports_strategic_merge());
}

TEST_CASE("prune_nulls: null members and list items go at every depth, other values stay") {
  json v = json::parse(R"({"a":null,"b":{"c":null,"d":0,"e":[null,{"f":null,"g":""},false]},"h":[]})");
  prune_nulls(v);
  CHECK(v == json::parse(R"({"b":{"d":0,"e":[{"g":""},false]},"h":[]})"));
  json top = nullptr;
  prune_nulls(top);
  CHECK(top.is_null());
}
