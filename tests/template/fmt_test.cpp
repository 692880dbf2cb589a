// printf and value printing with Go's fmt rules.
#include <catch2/catch.hpp>

#include "helpers.hpp"

using namespace emco::tmpl;
using namespace emco::tmpl::test;

TEST_CASE("fmt: integer and float verbs with widths and flags", "[template][fmt]") {
  CHECK(render("{{ printf \"%5.2f|%-5d|%05d|%x|%X|%o|%b\" 3.14159 42 42 255 255 8 5 }}") == " 3.14|42   |00042|ff|FF|10|101");
  CHECK(render("{{ printf \"%+d|% d|%#x|%#o|%*d|%-*d|\" 5 7 255 8 5 42 4 1 }}") == "+5| 7|0xff|010|   42|1   |");
  CHECK(render("{{ printf \"%6.2f|%+.1e|%g|%g|%G|%e\" -3.14159 12345.0 100000.0 1e21 1e-10 1234.5678 }}") ==
        " -3.14|+1.2e+04|100000|1e+21|1E-10|1.234568e+03");
  CHECK(render("{{ printf \"%c|%U|%q|%08.3f|%x\" 65 128512 65 -3.14159 -255 }}") == "A|U+1F600|'A'|-003.142|-ff");
  CHECK(render("{{ printf \"%t|%5t|%v\" true false true }}") == "true|false|true");
}

TEST_CASE("fmt: strings", "[template][fmt]") {
  CHECK(render("{{ printf \"%8.3s|%-6s|%06s|\" \"abcdef\" \"ab\" \"ab\" }}") == "     abc|ab    |0000ab|");
  CHECK(render("{{ printf \"%x|% x|%X|%#x\" \"hi\" \"hi\" \"hi\" \"hi\" }}") == "6869|68 69|6869|0x6869");
  CHECK(render("{{ printf \"%q\" \"a\\\"b\\n\\u00e9\" }}") == "\"a\\\"b\\n\u00e9\"");
  CHECK(render("{{ printf \"%+q\" \"\\u00e9\" }}") == "\"\\u00e9\"");
  CHECK(render("{{ printf \"%#q\" \"back\" }}") == "`back`");
  CHECK(render("{{ printf \"%s|%v|%T\" \"s\" \"v\" \"t\" }}") == "s|v|string");
}

TEST_CASE("fmt: %v of composite values and nil", "[template][fmt]") {
  CHECK(render("{{ printf \"%v\" (dict \"b\" 2 \"a\" 1) }}") == "map[a:1 b:2]");
  CHECK(render("{{ printf \"%v\" (list (dict \"k\" \"v\") nil 1.5 true) }}") == "[map[k:v] <nil> 1.5 true]");
  CHECK(render("{{ printf \"%s\" (list \"a\" \"b\") }} {{ printf \"%d\" (list 1 2) }}") == "[a b] [1 2]");
  CHECK(render("{{ printf \"%v\" nil }}") == "<nil>");
  CHECK(render("{{ printf \"%+v\" (dict \"a\" 1) }}") == "map[a:1]");
  CHECK(render("{{ printf \"%#v\" (list \"a\" 1) }}") == "[]interface {}{\"a\", 1}");
  CHECK(render("{{ printf \"%T|%T|%T|%T\" (list) (dict) (add 1 1) nil }}") == "[]interface {}|map[string]interface {}|int64|<nil>");
  CHECK(render("{{ list 1 \"a\" (list) }} {{ dict \"x\" (list 1) }}") == "[1 a []] map[x:[1]]");
}

TEST_CASE("fmt: bad verbs, missing and extra arguments are reported inline", "[template][fmt]") {
  CHECK(render("{{ printf \"%d\" \"hi\" }}") == "%!d(string=hi)");
  CHECK(render("{{ printf \"%d %d\" 1 }}") == "1 %!d(MISSING)");
  CHECK(render("{{ printf \"%d\" 1 2 }}") == "1%!(EXTRA int=2)");
  CHECK(render("{{ printf \"%s\" nil }}") == "%!s(<nil>)");
  CHECK(render("{{ printf \"%z\" 1 }}") == "%!z(int=1)");
  CHECK(render("{{ printf \"%f\" 1 }}") == "%!f(int=1)");
  CHECK(render("{{ printf \"%[2]d %[1]d\" 1 2 }}") == "2 1");
  CHECK(render("{{ printf \"100%%\" }}") == "100%");
  CHECK(render("{{ printf \"%\" }}") == "%!(NOVERB)");
}

TEST_CASE("fmt: float64 prints as Go prints it", "[template][fmt]") {
  CHECK(render("{{ 1e6 }} {{ 3.14 }} {{ 1.5e-7 }} {{ 100000.0 }} {{ 123456789.0 }} {{ 0.0001 }} {{ 0.00001 }}") ==
        "1e+06 3.14 1.5e-07 100000 1.23456789e+08 0.0001 1e-05");
  // YAML numbers are float64 in Helm values
  Value v = yaml("big: 1000000\nsmall: 5\nratio: 0.25\n");
  CHECK(render("{{ .big }} {{ .small }} {{ .ratio }}", v) == "1e+06 5 0.25");
  CHECK(render("{{ .big | int }} {{ printf \"%d\" (.big | int64) }}", v) == "1000000 1000000");
}
