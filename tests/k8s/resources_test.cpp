#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "core/k8s/resources.hpp"
#include "core/k8s/yaml.hpp"
#include "core/util/error.hpp"

using nlohmann::json;
using namespace emco::k8s;

TEST_CASE("built-in kinds map to resources, scopes and short names") {
  const auto* d = find_builtin_kind("apps", "v1", "Deployment");
  REQUIRE(d);
  CHECK(d->resource == "deployments");
  CHECK(d->namespaced);
  CHECK(d->short_names == std::vector<std::string>{"deploy"});
  CHECK(d->group_resource() == "deployments.apps");
  CHECK(d->api_version() == "apps/v1");
  CHECK(d->has_subresource("status"));
  const auto* ns = find_builtin_kind("", "v1", "Namespace");
  REQUIRE(ns);
  CHECK_FALSE(ns->namespaced);
  CHECK(ns->group_resource() == "namespaces");
  CHECK(find_builtin_resource("rbac.authorization.k8s.io", "v1", "clusterroles")->kind == "ClusterRole");
  CHECK(find_builtin_kind("apps", "v1beta1", "Deployment") == nullptr);
  CHECK(find_builtin_kind("authorization.k8s.io", "v1", "SelfSubjectAccessReview")->verbs ==
        std::vector<std::string>{"create"});
}

TEST_CASE("object paths") {
  const auto* d = find_builtin_kind("apps", "v1", "Deployment");
  CHECK(object_path(*d, "ns", "web") == "/apis/apps/v1/namespaces/ns/deployments/web");
  CHECK(object_path(*d, "", "") == "/apis/apps/v1/deployments");
  const auto* ns = find_builtin_kind("", "v1", "Namespace");
  CHECK(object_path(*ns, "ignored", "x") == "/api/v1/namespaces/x");
  auto gv = parse_api_version("apps/v1");
  CHECK(gv.group == "apps");
  CHECK(parse_api_version("v1").group.empty());
}

TEST_CASE("objects parse from JSON or YAML with YAML scalar typing") {
  CHECK(parse_json_or_yaml(R"({"a":1})") == json{{"a", 1}});
  json y = parse_json_or_yaml("a: 1\nb: \"1\"\nc: true\nd: ~\ne: 1.5\nf: hello\ng: [x, 2]\n");
  CHECK(y == json::parse(R"({"a":1,"b":"1","c":true,"d":null,"e":1.5,"f":"hello","g":["x",2]})"));
  CHECK_THROWS_AS(parse_json_or_yaml("a: [1\n"), emco::Error);
  CHECK_THROWS_WITH(parse_json_or_yaml("a: 1\n---\nb: 2\n"), Catch::Contains("expected one YAML document"));
}
