// Execution semantics of Go's text/template, written from Go's documentation.
#include <catch2/catch.hpp>

#include "core/util/error.hpp"
#include "helpers.hpp"

using namespace emco::tmpl;
using namespace emco::tmpl::test;

TEST_CASE("exec: text, trim markers and comments", "[template][exec]") {
  CHECK(render("plain text") == "plain text");
  CHECK(render("a  {{- 1 -}}  b") == "a1b");
  CHECK(render("a \n\t {{- 2 }} \n b") == "a2 \n b");
  // right delimiters next to braces, numbers and the end of the text (helm 3.17.3's output)
  CHECK(render("{{ 3 -}}\n   x") == "3x");
  CHECK(render("{{-3}}|{{ -3 }}|{{3}}}|{{ 1 }}}}") == "-3|-3|3}|1}}");
  CHECK(render("{{/* c */ -}}   x{{ 1 -}}") == "x1");
  CHECK(render("a {{ 3 -}} \n\n b") == "a 3b");
  CHECK(render("x{{/* a comment */}}y") == "xy");
  CHECK(render("x  {{- /* trimmed comment */ -}}  y") == "xy");
  CHECK(render("{{-3}}") == "-3");  // "{{-3" is a negative number, not a trim marker
}

TEST_CASE("exec: literals and ideal constants", "[template][exec]") {
  CHECK(render("{{ 42 }} {{ -7 }} {{ 0x1F }} {{ 0o17 }} {{ 1_000 }}") == "42 -7 31 15 1000");
  CHECK(render("{{ 1.5 }} {{ 1e3 }} {{ 'a' }} {{ true }} {{ \"q\" }} {{ `raw\\n` }}") == "1.5 1000 97 true q raw\\n");
  CHECK(render("{{ printf \"%T %T %T\" 1 1.0 'x' }}") == "int float64 int");
  // A literal written again is the same constant; the same text quoted otherwise is another.
  CHECK(render("{{ \"a\\tb\" }}|{{ \"a\\tb\" | len }}|{{ `a\\tb` | len }}|{{ `a\\tb` }}") == "a\tb|3|4|a\\tb");
  CHECK(error_of("{{ \"ok\" }}{{ \"ok\" }}{{ \"bad\\q\" }}").find("invalid syntax") != std::string::npos);
  // Literals that share their length and ends, and more distinct literals than the parse keeps
  // track of, are each their own value.
  const std::string pad(20, '-');
  CHECK(render("{{ \"" + pad + "x" + pad + "\" }}|{{ \"" + pad + "y" + pad + "\" }}|{{ \"" + pad + "x" + pad + "\" }}") ==
        pad + "x" + pad + "|" + pad + "y" + pad + "|" + pad + "x" + pad);
  std::string many, expected;
  for (int i = 0; i < 3000; ++i) {
    many += "{{ \"v" + std::to_string(i) + "\" }}{{ \"v" + std::to_string(i % 7) + "\" }},";
    expected += "v" + std::to_string(i) + "v" + std::to_string(i % 7) + ",";
  }
  CHECK(render(many) == expected);
}

TEST_CASE("exec: fields, maps and missing keys", "[template][exec]") {
  Value dot = yaml("a:\n  b:\n    c: deep\nnothing: ~\nlist: [x, y]\n");
  CHECK(render("{{ .a.b.c }}", dot) == "deep");
  CHECK(render("{{ .missing }}", dot) == "<no value>");
  CHECK(render("{{ .nothing }}", dot) == "<no value>");
  CHECK(render_helm("[{{ .missing }}]", dot) == "[]");
  // default mode: a missing key yields an invalid value that chains silently
  CHECK(render("{{ .missing.x.y }}", dot) == "<no value>");
  // Helm (missingkey=zero): the zero interface value cannot be dereferenced
  CHECK(error_of("{{ .missing.x }}", dot, [] {
          Options o;
          o.missingkey_zero = true;
          return o;
        }()) == "template: t:1:11: executing \"t\" at <.missing.x>: nil pointer evaluating interface {}.x");
  CHECK(error_of("{{ .nothing.x }}", dot) ==
        "template: t:1:11: executing \"t\" at <.nothing.x>: nil pointer evaluating interface {}.x");
  // a variable holding "no value" chains silently, as in Go
  CHECK(render_helm("{{ $v := .missing }}[{{ $v.x }}]", dot) == "[]");
  CHECK(error_of("{{ $s := \"str\" }}{{ $s.foo }}") ==
        "template: t:1:22: executing \"t\" at <$s.foo>: can't evaluate field foo in type string");
  CHECK(error_of("{{ range .list }}{{ .foo }}{{ end }}", dot) ==
        "template: t:1:20: executing \"t\" at <.foo>: can't evaluate field foo in type interface {}");
  CHECK(error_of("{{ .a 1 }}", dot) == "template: t:1:3: executing \"t\" at <.a>: a is not a method but has arguments");
  CHECK(render("{{ (index .a \"b\").c }}", dot) == "deep");
  // a chain through maps, then into a list or past a missing key (go 1.19 text/template)
  CHECK(error_of("{{ .a.b.c.d }}", dot) ==
        "template: t:1:5: executing \"t\" at <.a.b.c.d>: can't evaluate field d in type interface {}");
  CHECK(error_of("{{ .list.x }}", dot) ==
        "template: t:1:8: executing \"t\" at <.list.x>: can't evaluate field x in type interface {}");
  CHECK(render("{{ .a.missing.c }}|{{ .a.b.missing }}", dot) == "<no value>|<no value>");
}

TEST_CASE("exec: variables and scoping", "[template][exec]") {
  CHECK(render("{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}") == "2");
  CHECK(render("{{ $x := 1 }}{{ if true }}{{ $x := 3 }}{{ $x }}{{ end }}{{ $x }}") == "31");
  Value dot = yaml("name: top\nitems: [a, b]\n");
  CHECK(render("{{ range .items }}{{ . }}-{{ $.name }};{{ end }}", dot) == "a-top;b-top;");
  CHECK(render("{{ with .name }}{{ . }}/{{ $.items }}{{ end }}", dot) == "top/[a b]");
  // $ inside a template call is that call's dot
  CHECK(render("{{ define \"d\" }}{{ $ }}{{ end }}{{ template \"d\" .name }}", dot) == "top");
  // a called template's variables are its own: the caller's of the same name keep their values
  CHECK(render("{{ define \"d\" }}{{ $x := 2 }}{{ $x = 3 }}{{ $x }}{{ end }}{{ $x := 1 }}{{ template \"d\" }}{{ $x }}") ==
        "31");
  CHECK(render_helm("{{ define \"d\" }}{{ $x := . }}{{ $x }}{{ end }}"
                    "{{ range $x := list 1 2 }}{{ include \"d\" (add $x 10) }}{{ $x }};{{ end }}") == "111;122;");
}

TEST_CASE("exec: spaces between operands, pipes and declarations", "[template][exec]") {
  // go 1.19's text/template (helm 3.17.3 agrees where checked)
  Value dot = yaml("a: {b: B}\nb: 2\nc: 3\nl: [x, z]\n");
  CHECK(render("{{ print 1 2| print }}|{{ print 1 2 |print }}") == "1 2|1 2");
  CHECK(render("{{ range $i , $x := .l }}{{ $i }}{{ $x }}{{ end }}", dot) == "0x1z");
  CHECK(render("{{ range $i,$x := .l }}{{ $x }}{{ end }}", dot) == "xz");
  CHECK(render("{{ range $i ,$x := .l }}{{ $x }}{{ end }}", dot) == "xz");
  CHECK(error_of("{{ .a.b .c }}", dot) == "template: t:1:5: executing \"t\" at <.a.b>: b is not a method but has arguments");
  CHECK(error_of("{{ (.a).b .c }}", dot) == "template: t:1:4: executing \"t\" at <.a>: b is not a method but has arguments");
  CHECK(error_of("{{ (.a) .b }}", dot) == "template: t:1:3: executing \"t\" at <(.a) .b>: can't give argument to non-function .a");
  CHECK(error_of("{{ .a\n\n\"b\" }}", dot) == "template: t:1:3: executing \"t\" at <.a>: a is not a method but has arguments");
  CHECK(error_of("{{ $x :=\n 1 2 }}") == "template: t:2:1: executing \"t\" at <1>: can't give argument to non-function 1");
}

TEST_CASE("exec: arguments that are calls of their own, nested", "[template][exec]") {
  CHECK(render("{{ printf \"%s-%s-%d\" (upper (lower \"A\")) (printf \"%s%s\" \"b\" (trim \" c \")) (len (list 1 2 3)) }}") ==
        "A-bc-3");
  CHECK(render("{{ range $i := 3 }}{{ add $i (len (list $i $i)) }}{{ end }}") == "234");
}

TEST_CASE("exec: if, else if, with, else with", "[template][exec]") {
  Value dot = yaml("zero: 0\nempty: \"\"\nlist: []\nmap: {}\nok: true\nval: v\n");
  CHECK(render("{{ if .zero }}t{{ else }}f{{ end }}", dot) == "f");
  CHECK(render("{{ if .empty }}t{{ else if .list }}l{{ else if .val }}v{{ end }}", dot) == "v");
  CHECK(render("{{ if .map }}t{{ else }}f{{ end }}{{ if .ok }}T{{ end }}", dot) == "fT");
  CHECK(render("{{ with .val }}<{{ . }}>{{ end }}", dot) == "<v>");
  CHECK(render("{{ with .zero }}z{{ else with .val }}{{ . }}{{ else }}none{{ end }}", dot) == "v");
  CHECK(render("{{ with .missing }}x{{ else }}none{{ end }}", dot) == "none");
}

TEST_CASE("exec: range over lists, maps, integers, with else, break and continue", "[template][exec]") {
  Value dot = yaml("l: [a, b, c]\nm: {z: 1, a: 2, m: 3}\nempty: []\n");
  CHECK(render("{{ range $i, $e := .l }}{{ $i }}={{ $e }} {{ end }}", dot) == "0=a 1=b 2=c ");
  CHECK(render("{{ range $k, $v := .m }}{{ $k }}:{{ $v }},{{ end }}", dot) == "a:2,m:3,z:1,");
  CHECK(render("{{ range $v := .m }}{{ $v }}{{ end }}", dot) == "231");
  // keys in Go's order: bytes as unsigned values, a prefix first
  CHECK(render("{{ range $k, $v := . }}[{{ $k }}]{{ end }}", yaml("b: 1\nab: 2\na: 3\n\"\": 4\nZ: 5\né: 6\n\"~\": 7\n")) ==
        "[][Z][a][ab][b][~][é]");
  CHECK(render("{{ range .empty }}x{{ else }}empty{{ end }}", dot) == "empty");
  CHECK(render("{{ range .missing }}x{{ else }}none{{ end }}", dot) == "none");
  CHECK(render("{{ range 4 }}{{ . }}{{ end }}") == "0123");
  CHECK(render("{{ range $i := 3 }}{{ $i }}{{ end }}") == "012");
  CHECK(render("{{ range 0 }}x{{ else }}zero{{ end }}") == "zero");
  CHECK(render("{{ range .l }}{{ if eq . \"b\" }}{{ continue }}{{ end }}{{ . }}{{ end }}", dot) == "ac");
  CHECK(render("{{ range .l }}{{ if eq . \"b\" }}{{ break }}{{ end }}{{ . }}{{ end }}", dot) == "a");
  CHECK(error_of("{{ range $i, $v := 3 }}{{ end }}") ==
        "template: t:1:19: executing \"t\" at <3>: can't use 3 to iterate over more than one variable");
  CHECK(error_of("{{ range 1.5 }}{{ end }}") == "template: t:1:9: executing \"t\" at <1.5>: range can't iterate over 1.5");
  // an unsigned literal beyond Go's int parses, and fails where it is used (idealConstant)
  CHECK(error_of("a: {{ 18446744073709551615 }}") ==
        "template: t:1:6: executing \"t\" at <18446744073709551615>: 18446744073709551615 overflows int");
  // Go 1.22+: assignment form reuses outer variables
  CHECK(render("{{ $i := 9 }}{{ range $i = .l }}{{ end }}{{ $i }}", dot) == "c");
}

TEST_CASE("exec: define, template and block", "[template][exec]") {
  CHECK(render("{{ define \"x\" }}X{{ . }}{{ end }}{{ template \"x\" 1 }}{{ template \"x\" }}") == "X1X<no value>");
  CHECK(render("{{ block \"b\" \"arg\" }}default {{ . }}{{ end }}") == "default arg");
  Engine e;
  e.add("base", "[{{ block \"content\" . }}base{{ end }}]");
  e.add("override", "{{ define \"content\" }}override{{ end }}");
  CHECK(e.execute("base", Value()) == "[override]");
  CHECK(error_of("{{ template \"nope\" }}") ==
        "template: t:1:12: executing \"t\" at <{{template \"nope\"}}>: template \"nope\" not defined");
}

TEST_CASE("exec: and, or short-circuit and return the deciding value", "[template][exec]") {
  CHECK(render("{{ or 0 \"\" \"x\" \"y\" }}") == "x");
  CHECK(render("{{ or 0 \"\" }}") == "");
  CHECK(render("{{ and 1 \"a\" 2 }}") == "2");
  CHECK(render("{{ and 1 0 2 }}") == "0");
  // the failing call is never evaluated
  CHECK(render("{{ and 0 (fail \"boom\") }}") == "0");
  CHECK(render("{{ or 1 (fail \"boom\") }}") == "1");
  CHECK(render("{{ not 0 }} {{ not \"a\" }}") == "true false");
  CHECK(render("{{ \"x\" | and 1 }}") == "x");
}

TEST_CASE("exec: comparisons follow Go's basic-kind rules", "[template][exec]") {
  CHECK(render("{{ eq 3 1 2 3 }} {{ eq \"a\" \"b\" }} {{ ne 1 2 }}") == "true false true");
  CHECK(render("{{ lt 1 2 }} {{ le 2 2 }} {{ gt \"b\" \"a\" }} {{ ge 1.5 2.5 }}") == "true true true false");
  CHECK(render("{{ eq .missing \"x\" }} {{ eq .missing nil }}") == "false true");
  CHECK(error_of("{{ lt 1 1.5 }}") == "template: t:1:3: executing \"t\" at <lt 1 1.5>: error calling lt: incompatible types for comparison");
  // YAML numbers in Helm values are float64: comparing with an int literal fails as in Helm
  CHECK(error_of("{{ eq .num 1 }}", yaml("num: 1")) ==
        "template: t:1:3: executing \"t\" at <eq .num 1>: error calling eq: incompatible types for comparison");
  CHECK(render("{{ eq .num 1.0 }} {{ eq (int .num) 1 }}", yaml("num: 1")) == "true true");
  CHECK(error_of("{{ lt true false }}") == "template: t:1:3: executing \"t\" at <lt true false>: error calling lt: invalid type for comparison");
  CHECK(error_of("{{ eq (list 1) (list 1) }}").find("non-comparable type") != std::string::npos);
  CHECK(render("{{ eq (add 1 1) 2 }}") == "true");  // int64 and int compare as integers
}

TEST_CASE("exec: len, index, slice", "[template][exec]") {
  Value dot = yaml("l: [a, b, c]\nm: {k: v}\ns: hello\n");
  CHECK(render("{{ len .l }} {{ len .m }} {{ len .s }} {{ len \"héllo\" }}", dot) == "3 1 5 6");
  CHECK(render("{{ index .l 1 }} {{ index .m \"k\" }} {{ index .s 1 }}", dot) == "b v 101");
  CHECK(render("{{ index .m \"nope\" }}", dot) == "<no value>");
  CHECK(render("{{ slice .l 1 }} {{ slice .l 1 2 }} {{ slice .s 1 3 }}", dot) == "[b c] [b] el");
  CHECK(error_of("{{ index .l 5 }}", dot) ==
        "template: t:1:3: executing \"t\" at <index .l 5>: error calling index: index out of range: 5");
  CHECK(error_of("{{ len 3 }}") == "template: t:1:3: executing \"t\" at <len 3>: error calling len: len of type int");
  CHECK(error_of("{{ index .m 1 }}", dot).ends_with("error calling index: value has type int; should be string"));
  CHECK(error_of("{{ slice .l 2 1 }}", dot).ends_with("error calling slice: invalid slice index: 2 > 1"));
}

TEST_CASE("exec: print, println, html, js, urlquery", "[template][exec]") {
  CHECK(render("{{ print 1 2 \"a\" 3 \"b\" \"c\" }}") == "1 2a3bc");
  CHECK(render("{{ println 1 \"a\" }}") == "1 a\n");
  CHECK(render("{{ html \"<a href='x'>&\\\"\" }}") == "&lt;a href=&#39;x&#39;&gt;&amp;&#34;");
  CHECK(render("{{ js \"a'b\\\"c<d>=\" }}") == "a\\'b\\\"c\\u003Cd\\u003E\\u003D");
  CHECK(render("{{ urlquery \"a b&c=d/\\u00e9\" }}") == "a+b%26c%3Dd%2F%C3%A9");
  CHECK(render("{{ \"a\" | printf \"%s-%s\" \"b\" }}") == "b-a");
}

TEST_CASE("exec: errors name the template, position and node", "[template][exec]") {
  CHECK(error_of("{{ nil }}") == "template: t:1:3: executing \"t\" at <nil>: nil is not a command");
  CHECK(error_of("{{ 1 2 }}") == "template: t:1:3: executing \"t\" at <1>: can't give argument to non-function 1");
  CHECK(error_of("{{ upper }}") == "template: t:1:3: executing \"t\" at <upper>: wrong number of args for upper: want 1 got 0");
  CHECK(error_of("{{ upper 5 }}") == "template: t:1:9: executing \"t\" at <5>: expected string; found 5");
  CHECK(error_of("{{ .num | upper }}", yaml("num: 1")) ==
        "template: t:1:10: executing \"t\" at <upper>: wrong type for value; expected string; got float64");
  CHECK(error_of("{{ upper .num }}", yaml("num: 1")) ==
        "template: t:1:9: executing \"t\" at <.num>: wrong type for value; expected string; got float64");
  CHECK(error_of("{{ .missing | upper }}") ==
        "template: t:1:14: executing \"t\" at <upper>: invalid value; expected string");
  CHECK(error_of("\n\n  {{ fail \"stop here\" }}") ==
        "template: t:3:5: executing \"t\" at <fail \"stop here\">: error calling fail: stop here");
  // the executing template is the define; the location is the file
  CHECK(error_of("{{ define \"inner\" }}\n{{ fail \"x\" }}{{ end }}{{ template \"inner\" }}") ==
        "template: t:2:3: executing \"inner\" at <fail \"x\">: error calling fail: x");
}

TEST_CASE("exec: hostile templates stop with clear errors", "[template][exec][hostile]") {
  Options small;
  small.max_include_depth = 50;
  CHECK(error_of("{{ define \"r\" }}{{ template \"r\" . }}{{ end }}{{ template \"r\" . }}", Value(), small)
            .ends_with("exceeded maximum template depth (50)"));
  CHECK(error_of("{{ define \"r\" }}{{ include \"r\" . }}{{ end }}{{ include \"r\" . }}")
            .find("rendering template has a nested reference name: r: unable to execute template") != std::string::npos);
  Value dot = yaml("t: '{{ tpl .t . }}'");
  CHECK(error_of("{{ tpl .t . }}", dot).find("nested reference name") != std::string::npos);
  Options limited;
  limited.max_output_bytes = 1 << 20;
  CHECK(error_of("{{ range 100000000 }}xxxxxxxxxx{{ end }}", Value(), limited).ends_with("output exceeds the limit of 1048576 bytes"));
  CHECK(error_of("{{ range 100000000 }}{{ include \"x\" . }}{{ end }}{{ define \"x\" }}{{ . }}{{ end }}", Value(), limited)
            .ends_with("output exceeds the limit of 1048576 bytes"));
  // Each printf "%q" doubles the backslashes of its input: 40 of them would
  // need terabytes before writing anything (found by template_fuzz).
  std::string chain = "{{ \"\\\\\"";
  for (int i = 0; i < 40; ++i) chain += " | printf \"%q\"";
  chain += " }}";
  CHECK(error_of(chain, Value(), limited).find("its result exceeds the output limit of 1048576 bytes") != std::string::npos);
}

TEST_CASE("exec: objects expose fields and methods", "[template][exec]") {
  struct Caps : Object {
    std::string type_name() const override { return "*chartutil.Capabilities"; }
    std::optional<Value> field(std::string_view n) const override {
      if (n == "Version") return Value("v1.32.0");
      return std::nullopt;
    }
    bool has_method(std::string_view n) const override { return n == "Has"; }
    Value call_method(std::string_view, const std::vector<Value>& a) const override {
      return Value(a.size() == 1 && a[0].is_string() && a[0].as_string() == "apps/v1");
    }
  };
  Map m;
  m["Caps"] = Value(std::shared_ptr<const Object>(std::make_shared<Caps>()));
  Value dot(std::move(m));
  CHECK(render("{{ .Caps.Version }} {{ .Caps.Has \"apps/v1\" }} {{ .Caps.Has \"x/v1\" }}", dot) == "v1.32.0 true false");
  CHECK(error_of("{{ .Caps.Nope }}", dot) ==
        "template: t:1:8: executing \"t\" at <.Caps.Nope>: can't evaluate field Nope in type *chartutil.Capabilities");
  // a method whose arguments remove its object from the map it was found in
  Map outer;
  outer["m"] = dot.deep_copy();
  Value holder(std::move(outer));
  CHECK(render("{{ .m.Caps.Has (unset .m \"Caps\" | len | print \"apps/v\") }}|{{ len .m }}", holder) == "false|0");
  CHECK(render("{{ $c := .m }}{{ $_ := set $c \"Caps\" (dict) }}{{ .m.Caps }}", holder) == "map[]");
}

TEST_CASE("exec: execute is repeatable and engines are independent", "[template][exec]") {
  Engine e;
  e.add("t", "{{ .x }}");
  CHECK(e.execute("t", yaml("x: 1")) == "1");
  CHECK(e.execute("t", yaml("x: two")) == "two");
  CHECK_THROWS_WITH(e.execute("nope", Value()), "template: no template \"nope\" associated with template \"gotpl\"");
  CHECK(e.names() == std::vector<std::string>{"t"});
}

TEST_CASE("exec: a string literal set into the data outlives its engine", "[template][exec]") {
  // The literal's Value shares the parse's store of literal texts, which lives on with it.
  Value dot = yaml("m: {}\n");
  {
    Engine e;
    e.add("t", "{{ $_ := set .m \"k\" \"a literal longer than fifteen bytes\" }}{{ $_ := set .m \"s\" \"short\" }}");
    CHECK(e.execute("t", dot).empty());
  }
  CHECK(dot.find("m")->find("k")->as_string() == "a literal longer than fifteen bytes");
  CHECK(dot.find("m")->find("s")->as_string() == "short");
}

TEST_CASE("exec: files with the same text are templates of their own names", "[template][exec]") {
  // Go parses every file anew (template.New(name).Parse(text)); emco shares the nodes of a
  // text it has parsed before (a subchart's copy of a library chart), so what a second file of
  // the same text shows must be what its own parse would show: its own name as a template, its
  // own name in execution errors (Go's ErrorContext is the file's ParseName), and the later
  // file's define replacing the earlier one's (AddParseTree).
  const std::string text = "{{ define \"lib.x\" }}x={{ .v.w }}{{ end }}file {{ template \"lib.x\" . }}";
  Engine e;
  e.add("a/_lib.tpl", text);
  e.add("b/_lib.tpl", text);
  CHECK(e.execute("a/_lib.tpl", yaml("v: {w: 1}")) == "file x=1");
  CHECK(e.execute("b/_lib.tpl", yaml("v: {w: 2}")) == "file x=2");
  try {
    e.execute("lib.x", yaml("v: 3"));
    FAIL("no error");
  } catch (const emco::Error& err) {
    CHECK(err.message() == "template: b/_lib.tpl:1:27: executing \"lib.x\" at <.v.w>: can't evaluate field w in type interface {}");
  }
  // a file named like a define in its own text: Go's parse of it fails (the file's tree and
  // the define are two non-empty templates of one name), so sharing must not hide that
  try {
    e.add("lib.x", text);
    FAIL("no error");
  } catch (const emco::Error& err) {
    CHECK(err.message() == "template: lib.x:1: template: multiple definition of template \"lib.x\"");
  }
}
