#include <catch2/catch.hpp>

#include "helpers.hpp"

using namespace emco::tmpl;
using namespace emco::tmpl::test;

TEST_CASE("smoke: text, fields and pipelines render", "[template]") {
  Value dot = yaml("name: web\nreplicas: 3\nlabels:\n  app: x\n");
  CHECK(render("hello {{ .name }}", dot) == "hello web");
  CHECK(render("{{ .replicas }}", dot) == "3");
  CHECK(render("{{ .labels.app | upper | quote }}", dot) == "\"X\"");
  CHECK(render("{{ toYaml .labels }}", dot) == "app: x");
}
