// Helm's values pipeline: --set parsing (strvals), -f merging, coalescing, dependencies.
#include <catch2/catch.hpp>

#include "core/helm/values.hpp"
#include "core/util/error.hpp"

using namespace emco::helm;
using emco::tmpl::List;
using emco::tmpl::Map;
using emco::tmpl::Value;

namespace {

Value set(const std::string& s, bool as_string = false) {
  Value v(Map{});
  parse_set(s, v, as_string);
  return v;
}

const Value& at(const Value& v, const std::string& path) {
  const Value* cur = &v;
  size_t start = 0;
  while (start <= path.size()) {
    auto dot = path.find('.', start);
    std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (cur->is_list()) cur = &cur->as_list().at(std::stoul(part));
    else cur = cur->find(part);
    REQUIRE(cur != nullptr);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return *cur;
}

std::string error_of(const std::string& s) {
  try {
    set(s);
  } catch (const emco::Error& e) {
    return e.message();
  }
  return "";
}

Chart chart_with(const std::string& name, Value values) {
  Chart c;
  c.metadata.name = name;
  c.metadata.version = "1.0.0";
  c.metadata.api_version = "v2";
  c.values = std::move(values);
  return c;
}

}  // namespace

TEST_CASE("values: --set keys, nesting and typing follow strvals", "[helm][values]") {
  auto v = set("a.b=c,n=42,z=0,lead=012,t=true,F=FALSE,nil=null,big=99999999999999999999,neg=-3,s=1.5");
  CHECK(at(v, "a.b").as_string() == "c");
  CHECK(at(v, "n").is_int());
  CHECK(at(v, "n").int_type() == emco::tmpl::IntType::int64);
  CHECK(at(v, "n").as_int() == 42);
  CHECK(at(v, "z").as_int() == 0);
  CHECK(at(v, "lead").as_string() == "012");
  CHECK(at(v, "t").as_bool());
  CHECK_FALSE(at(v, "F").as_bool());
  CHECK(at(v, "nil").is_null());
  CHECK(at(v, "big").as_string() == "99999999999999999999");
  CHECK(at(v, "neg").as_int() == -3);
  CHECK(at(v, "s").as_string() == "1.5");
  auto s = set("n=42,t=true", true);
  CHECK(at(s, "n").as_string() == "42");
  CHECK(at(s, "t").as_string() == "true");
}

TEST_CASE("values: --set lists, indexes and escapes", "[helm][values]") {
  auto v = set("list={a,b,3},servers[1].port=80,servers[0].name=x,m[0][1]=y");
  REQUIRE(at(v, "list").as_list().size() == 3);
  CHECK(at(v, "list.2").as_int() == 3);
  CHECK(at(v, "servers.0.name").as_string() == "x");
  CHECK(at(v, "servers.1.port").as_int() == 80);
  CHECK(at(v, "m.0.0").is_null());
  CHECK(at(v, "m.0.1").as_string() == "y");
  auto e = set("a\\.b=c\\,d,eq=x\\=y,empty=");
  CHECK(at(v, "list.0").as_string() == "a");
  CHECK(e.find("a.b")->as_string() == "c,d");
  CHECK(e.find("eq")->as_string() == "x=y");
  CHECK(e.find("empty")->as_string().empty());
  auto merged = set("a.b=1");
  parse_set("a.c=2", merged);
  CHECK(at(merged, "a.b").as_int() == 1);
  CHECK(at(merged, "a.c").as_int() == 2);
}

TEST_CASE("values: --set errors read like Helm's", "[helm][values]") {
  CHECK(error_of("novalue") == "failed parsing --set data: key \"novalue\" has no value");
  CHECK(error_of("a,b=c") == "failed parsing --set data: key \"a\" has no value (cannot end with ,)");
  CHECK(error_of("a={x,y") == "failed parsing --set data: list must terminate with '}'");
  CHECK_THAT(error_of("a[x]=1"), Catch::Contains("error parsing index"));
  CHECK_THAT(error_of("a[-1]=1"), Catch::Contains("negative -1 index not allowed"));
  CHECK_THAT(error_of("a[70000]=1"), Catch::Contains("greater than maximum supported index"));
  CHECK_THAT(error_of("a=1,a.b=2"), Catch::Contains("interface conversion"));
}

TEST_CASE("merge_maps merges -f files recursively", "[helm][values]") {
  Value a(Map{{"x", Value(Map{{"y", 1}, {"z", 2}})}, {"keep", "k"}});
  Value b(Map{{"x", Value(Map{{"y", 10}})}, {"new", Value(List{Value("n")})}});
  Value m = merge_maps(a, b);
  CHECK(at(m, "x.y").as_int() == 10);
  CHECK(at(m, "x.z").as_int() == 2);
  CHECK(at(m, "keep").as_string() == "k");
  CHECK(at(m, "new.0").as_string() == "n");
}

TEST_CASE("coalescing: user values win, null deletes, subcharts and globals", "[helm][values]") {
  Chart sub = chart_with("sub", Value(Map{{"port", 80.0}, {"image", Value(Map{{"tag", "1"}, {"repo", "r"}})}}));
  Chart parent = chart_with(
      "parent", Value(Map{{"replicas", 1.0},
                          {"drop", "x"},
                          {"global", Value(Map{{"registry", "docker.io"}})},
                          {"sub", Value(Map{{"image", Value(Map{{"tag", "2"}})}})}}));
  parent.dependencies.push_back(sub);
  Value user(Map{{"replicas", 3}, {"drop", Value()}, {"sub", Value(Map{{"port", Value()}})}});
  Value v = coalesce_values(parent, user);
  CHECK(at(v, "replicas").as_int() == 3);
  CHECK(v.find("drop") == nullptr);
  CHECK(at(v, "sub.image.tag").as_string() == "2");
  CHECK(at(v, "sub.image.repo").as_string() == "r");
  CHECK(at(v, "sub").find("port") == nullptr);
  CHECK(at(v, "sub.global.registry").as_string() == "docker.io");
  CHECK(at(v, "global.registry").as_string() == "docker.io");
  // The chart's own values are not modified.
  CHECK(parent.values.find("drop") != nullptr);
  // A null in the chart defaults stays null (Helm keeps it).
  Chart nulls = chart_with("n", Value(Map{{"prefix", Value()}}));
  Value nv = coalesce_values(nulls, Value(Map{}));
  REQUIRE(nv.find("prefix") != nullptr);
  CHECK(nv.find("prefix")->is_null());
}

TEST_CASE("dependencies: conditions, tags, aliases and import-values", "[helm][values]") {
  Chart a = chart_with("a", Value(Map{{"exports", Value(Map{{"data", Value(Map{{"fromA", "yes"}})}})},
                                      {"inner", Value(Map{{"v", "1"}})}}));
  Chart b = chart_with("b", Value(Map{}));
  Chart c = chart_with("c", Value(Map{}));
  Chart parent = chart_with("p", Value(Map{{"b", Value(Map{{"enabled", false}})},
                                           {"tags", Value(Map{{"front", false}})}}));
  parent.dependencies = {a, b, c};
  Dependency da;
  da.name = "a";
  da.version = "1.x";
  da.alias = "first";
  da.import_values = Value(List{Value("data"), Value(Map{{"child", "inner"}, {"parent", "imported"}})});
  Dependency db;
  db.name = "b";
  db.version = ">=1.0.0";
  db.condition = "b.enabled";
  Dependency dc;
  dc.name = "c";
  dc.version = "~1.0";
  dc.tags = {"front"};
  parent.metadata.dependencies = {da, db, dc};
  process_dependencies(parent, Value(Map{}));
  REQUIRE(parent.dependencies.size() == 1);
  CHECK(parent.dependencies[0].name() == "first");
  REQUIRE(parent.metadata.dependencies.size() == 1);
  CHECK(parent.metadata.dependencies[0].name == "first");
  CHECK(at(parent.values, "fromA").as_string() == "yes");
  CHECK(at(parent.values, "imported.v").as_string() == "1");
  // A user value can turn the condition back on.
  Chart again = chart_with("p", Value(Map{{"b", Value(Map{{"enabled", false}})}}));
  again.dependencies = {b};
  again.metadata.dependencies = {db};
  process_dependencies(again, Value(Map{{"b", Value(Map{{"enabled", true}})}}));
  CHECK(again.dependencies.size() == 1);
}
