// The kinds registry, anchors, schemas and reference discovery.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/resource/kinds.hpp"
#include "core/resource/references.hpp"
#include "core/resource/schema.hpp"
#include "core/util/error.hpp"

using namespace emco;
using namespace emco::resource;
using nlohmann::json;

namespace {

// Kinds of the shapes plugins add (core itself defines none of them): a
// lifecycle kind whose operations have two segments, and a reference whose
// key elements come from the spec up to a common key (sfc client intents).
void install_plugin_shaped_kinds() {
  static const bool installed = [] {
    install_kinds({
        {.id = "testCert", .parent = "clusterProvider", .elements = {"testCert"}, .collection = "test-certs",
         .service = "test", .display = "test certificate", .spec = obj({}), .lifecycle = true,
         .operations = {"enrollment/instantiate", "distribution/terminate"}},
        {.id = "testChain", .parent = "deploymentIntentGroup", .elements = {"testChain"}, .collection = "test-chains",
         .service = "test", .display = "test chain", .spec = obj({})},
        {.id = "testChainClient", .parent = "deploymentIntentGroup", .elements = {"testChainClient"},
         .collection = "test-chain-clients", .service = "test", .display = "test chain client",
         .spec = obj({req("testChain", name_str()), req("compositeApp", name_str()), req("compositeAppVersion", name_str()),
                      req("deploymentIntentGroup", name_str()), req("app", name_str())}),
         .references = {plain_ref("testChain"), Reference{"app", RefType::plain, "", {}, {}, "compositeAppVersion", {}, {}}}},
    });
    return true;
  }();
  (void)installed;
}

}  // namespace

TEST_CASE("anchors map to kinds and keys") {
  auto a = parse_anchor("projects/p1/composite-apps/ca/v1/apps");
  CHECK(a.target == AnchorTarget::collection);
  CHECK(a.kind->id == "app");
  CHECK(a.key.str() == "project=p1/compositeApp=ca/compositeAppVersion=v1");

  auto r = parse_anchor("cluster-providers/p/clusters/c/labels/edge");
  CHECK(r.target == AnchorTarget::resource);
  CHECK(r.kind->id == "clusterLabel");
  CHECK(r.key.key_id() == "{cluster,clusterLabel,clusterProvider,}");

  auto op = parse_anchor("projects/p/composite-apps/ca/v1/deployment-intent-groups/d/approve");
  CHECK(op.target == AnchorTarget::operation);
  CHECK(op.operation == "approve");
  CHECK(op.kind->id == "deploymentIntentGroup");

  auto st = parse_anchor("projects/p/composite-apps/ca/v1/deployment-intent-groups/d/status?status=deployed");
  CHECK(st.target == AnchorTarget::status);
  CHECK(st.query == "status=deployed");

  install_plugin_shaped_kinds();
  auto ca = parse_anchor("cluster-providers/p/test-certs/c/enrollment/instantiate");
  CHECK(ca.target == AnchorTarget::operation);
  CHECK(ca.operation == "enrollment/instantiate");

  auto ctl = parse_anchor("controllers/gac");
  CHECK(ctl.key.str() == "controllerGroup=orchestrator/controller=gac");
  CHECK(parse_anchor("dtc-controllers/nps").key.str() == "controllerGroup=dtc/controller=nps");
}

TEST_CASE("kinds installed twice or before their parent are refused") {
  install_plugin_shaped_kinds();
  CHECK_THROWS_WITH(install_kinds({{.id = "testCert", .parent = "clusterProvider", .elements = {"testCert"}}}),
                    "resource kind 'testCert' is defined twice");
  CHECK_THROWS_WITH(install_kinds({{.id = "orphan", .parent = "noSuchKind", .elements = {"orphan"}}}),
                    "resource kind 'orphan' names parent 'noSuchKind', which is not defined before it");
  CHECK(find_kind("orphan") == nullptr);
  CHECK_THROWS_WITH(install_kinds({{.id = "testRoot", .elements = {"testRoot"}, .collection = "test-roots"}}),
                    "resource kind 'testRoot' has no parent: the roots of the resource tree are core's");
  CHECK(find_root("test-roots") == nullptr);
  CHECK(find_root("projects") == &kind("project"));
}

TEST_CASE("bad anchors say what would fit") {
  try {
    parse_anchor("projects/p1/composite-apps/ca/v1/aps");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid);
    CHECK(e.message() == "unknown anchor segment 'aps' after 'projects/p1/composite-apps/ca/v1'");
    CHECK(e.hint() == "did you mean 'apps'?");
  }
  CHECK_THROWS_AS(parse_anchor("nothing/here"), Error);
  CHECK_THROWS_AS(parse_anchor(""), Error);
  CHECK_THROWS_AS(parse_anchor("projects//x"), Error);
}

TEST_CASE("resource anchors round-trip for every kind") {
  for (const auto& k : all_kinds()) {
    Key key;
    int i = 0;
    for (const Kind* c : lineage(k.id)) {
      for (const auto& f : c->fixed) key.parts.push_back(f);
      for (const auto& e : c->elements) key.parts.emplace_back(e, "n" + std::to_string(i++));
    }
    auto text = resource_anchor(k, key);
    auto a = parse_anchor(text);
    INFO(text);
    CHECK(a.target == AnchorTarget::resource);
    CHECK(a.kind == &k);
    CHECK(a.key == key);
    // Core's kinds are made on first need: a lookup finds the one listed.
    CHECK(find_kind(k.id) == &k);
  }
}

TEST_CASE("schemas canonicalise case-insensitive field names and reject unknown ones") {
  json spec = {{"clusterProvider", "p"}, {"cluster", "c"}, {"loadbalancerIp", "0.0.0.0"}};
  auto v = validate_and_canonicalise(spec, kind("clusterReference").spec, "spec");
  REQUIRE(v.empty());
  CHECK(spec.contains("loadBalancerIP"));

  json bad = {{"clusterProvider", "p"}, {"clustr", "c"}};
  v = validate_and_canonicalise(bad, kind("clusterReference").spec, "spec");
  REQUIRE(v.size() == 1);
  CHECK(v[0].path == "spec.clustr");
  CHECK(v[0].hint == "did you mean 'cluster'?");

  json typed = {{"app", "a"}, {"opStatus", "Ready"}, {"wait", "ten"}};
  v = validate_and_canonicalise(typed, kind("appDependency").spec, "spec");
  REQUIRE(v.size() == 1);
  CHECK(v[0].message == "'spec.wait' must be an integer, not a string");

  json e = {{"app", "a"}, {"opStatus", "Sometime"}};
  v = validate_and_canonicalise(e, kind("appDependency").spec, "spec");
  REQUIRE(v.size() == 1);
  CHECK(v[0].message.find("must be one of Ready, Deployed") != std::string::npos);

  json ignored = {{"logicalCloud", "lc"}};
  CHECK(validate_and_canonicalise(ignored, kind("genericPlacementIntent").spec, "spec").empty());
  CHECK(ignored.empty());
}

TEST_CASE("names follow EMCO's rule") {
  CHECK(is_valid_name("a"));
  CHECK(is_valid_name("edge_01.x-y"));
  CHECK_FALSE(is_valid_name("-a"));
  CHECK_FALSE(is_valid_name("a-"));
  CHECK_FALSE(is_valid_name("a b"));
  CHECK_FALSE(is_valid_name(std::string(64, 'a')));
  CHECK(is_valid_name(std::string(63, 'a')));
}

TEST_CASE("references follow the referential schema") {
  Key dig = parse_anchor("projects/p/composite-apps/ca/v1/deployment-intent-groups/d").key;
  auto refs = compute_references(kind("deploymentIntentGroup"), dig,
                                 {{"logicalCloud", "lc"}, {"compositeProfile", "cp"}, {"version", "r1"}});
  REQUIRE(refs.size() == 2);
  CHECK(refs[0].key.str() == "project=p/logicalCloud=lc");
  CHECK(refs[1].key.str() == "project=p/compositeApp=ca/compositeAppVersion=v1/compositeProfile=cp");

  // Group intent: map type, fixedKv, filterKeys.
  Key gi = dig;
  gi.parts.emplace_back("groupIntent", "i");
  refs = compute_references(kind("groupIntent"), gi, {{"intent", {{"genericPlacementIntent", "gpi"}, {"gac", "g1"}}}});
  REQUIRE(refs.size() == 1);
  CHECK(refs[0].key.str() == "controllerGroup=orchestrator/controller=gac");

  // App placement intent: app (plain), cluster (many), label (label set).
  Key ai = dig;
  ai.parts.emplace_back("genericPlacementIntent", "g");
  ai.parts.emplace_back("genericAppPlacementIntent", "x");
  refs = compute_references(kind("genericAppPlacementIntent"), ai,
                            {{"app", "web"},
                             {"intent",
                              {{"allOf", {{{"clusterProvider", "p1"}, {"cluster", "c1"}}, {{"clusterProvider", "p1"}, {"clusterLabel", "edge"}}}}}}});
  REQUIRE(refs.size() == 3);
  CHECK(refs[0].key.str() == "project=p/compositeApp=ca/compositeAppVersion=v1/app=web");
  CHECK(refs[1].key.str() == "clusterProvider=p1/cluster=c1");
  CHECK(refs[2].label_set);
  CHECK(refs[2].label == "edge");

  // A plugin's kind (sfc client intents): commonKey copies key elements up
  // to compositeAppVersion.
  install_plugin_shaped_kinds();
  Key sc = dig;
  sc.parts.emplace_back("testChainClient", "s");
  refs = compute_references(kind("testChainClient"), sc,
                            {{"testChain", "chain"}, {"compositeApp", "other"}, {"compositeAppVersion", "v2"},
                             {"deploymentIntentGroup", "d2"}, {"app", "client"}});
  REQUIRE(refs.size() == 2);
  CHECK(refs[0].key.str() == "project=p/compositeApp=other/compositeAppVersion=v2/deploymentIntentGroup=d2/testChain=chain");
  CHECK(refs[1].key.str() == "project=p/compositeApp=other/compositeAppVersion=v2/app=client");
}
