// The YAML loader's typing rules and toYaml's byte-exact output (goyaml.v2 emitter).
#include <catch2/catch.hpp>

#include "core/util/error.hpp"
#include "helpers.hpp"

using namespace emco::tmpl;
using namespace emco::tmpl::test;

TEST_CASE("yaml: helm mode types values as sigs.k8s.io/yaml does", "[template][yaml]") {
  Value v = yaml("i: 1\nf: 1.5\nb1: yes\nb2: on\nb3: False\ns: 'yes'\nhex: 0x10\noct: 010\nund: 1_000\n"
                 "date: 2024-01-15\nnil1: ~\nnil2:\nstr: hello world\n1: one\ntrue: t\n");
  CHECK(v.find("i")->is_float());
  CHECK(v.find("i")->as_float() == 1.0);
  CHECK(v.find("f")->as_float() == 1.5);
  CHECK(v.find("b1")->as_bool());
  CHECK(v.find("b2")->as_bool());
  CHECK_FALSE(v.find("b3")->as_bool());
  CHECK(v.find("s")->as_string() == "yes");
  CHECK(v.find("hex")->as_float() == 16.0);
  CHECK(v.find("oct")->as_float() == 8.0);
  CHECK(v.find("und")->as_float() == 1000.0);
  CHECK(v.find("date")->as_string() == "2024-01-15");
  CHECK(v.find("nil1")->is_null());
  CHECK(v.find("nil2")->is_null());
  CHECK(v.find("str")->as_string() == "hello world");
  CHECK(v.find("1")->as_string() == "one");
  CHECK(v.find("true")->as_string() == "t");
  // every word YAML 1.1 reads as other than a string, by its first character, and words of the
  // same lengths that stay strings
  const Value w = yaml("a: [~, null, Null, NULL, y, Y, yes, Yes, YES, on, On, ON, true, True, TRUE]\n"
                       "b: [n, N, no, No, NO, off, Off, OFF, false, False, FALSE]\n"
                       "c: [.5, +1, -1, 7, 1e3, 0x1F]\n"
                       "d: [x, nil, yep, one, tru, fals, NUL, Nul, ~~, _1, a1, 'null']\n");
  for (const auto& e : w.find("a")->as_list()) CHECK((e.is_null() || (e.is_bool() && e.as_bool())));
  for (const auto& e : w.find("b")->as_list()) CHECK((e.is_bool() && !e.as_bool()));
  for (const auto& e : w.find("c")->as_list()) CHECK(e.is_float());
  for (const auto& e : w.find("d")->as_list()) CHECK(e.is_string());
}

TEST_CASE("yaml: go_yaml mode keeps ints and YAML 1.2 booleans", "[template][yaml]") {
  Value v = parse_yaml("i: 1\nf: 1.5\nb: yes\nt: true\n", YamlMode::go_yaml, "v.yaml");
  CHECK(v.find("i")->is_int());
  CHECK(v.find("i")->go_type() == "int");
  CHECK(v.find("f")->is_float());
  CHECK(v.find("b")->as_string() == "yes");
  CHECK(v.find("t")->as_bool());
}

TEST_CASE("yaml: anchors, aliases, merge keys and documents", "[template][yaml]") {
  Value v = yaml("base: &b {p: 1, q: 1}\nd:\n  <<: *b\n  q: 2\nref: *b\n");
  CHECK(render("{{ .d.p }} {{ .d.q }} {{ .ref.q }}", v) == "1 2 1");
  // YAML 1.1: y/n/yes/no/on/off are booleans, also as keys (which become "true"/"false")
  CHECK(render("{{ .true }} {{ index .list 1 }}", yaml("y: key\nlist: [x, n]\n")) == "key false");
  auto docs = parse_yaml_documents("a: 1\n---\nb: 2\n", YamlMode::helm, "m.yaml");
  REQUIRE(docs.size() == 2);
  CHECK(docs[1].find("b") != nullptr);
  CHECK(yaml("").is_null());
}

TEST_CASE("yaml: syntax errors carry source:line:col", "[template][yaml]") {
  try {
    yaml("a: 1\nb: [1, 2\n");
    FAIL("no error");
  } catch (const emco::Error& e) {
    CHECK(e.kind() == emco::ErrorKind::invalid);
    CHECK(e.message().rfind("test.yaml:", 0) == 0);
  }
  CHECK_THROWS_AS(yaml("a: b: c"), emco::Error);
}

// Helm (sigs.k8s.io/yaml) refuses more than syntax; fromYaml hands the words back in .Error. The
// texts below are what helm 3.17.3 prints for `fromYaml` of the same documents.
TEST_CASE("yaml: helm mode refuses what sigs.k8s.io/yaml refuses, in its words", "[template][yaml]") {
  const std::string conv = "error converting YAML to JSON: ";
  CHECK_THROWS_WITH(yaml("[a]: x\n"), conv + "yaml: invalid map key: []interface {}{\"a\"}");
  CHECK_THROWS_WITH(yaml("x: {<<: 1}\n"), conv + "yaml: map merge requires map or sequence of maps as the value");
  CHECK_THROWS_WITH(yaml("x: !!int abc\n"), conv + "yaml: cannot decode !!str `abc` as a !!int");
  CHECK_THROWS_WITH(yaml("~: x\n"), conv + "unsupported map key of type: %!s(<nil>), key: <nil>, value: \"x\"");
  CHECK_THROWS_WITH(yaml("x: .inf\n"), conv + "json: unsupported value: +Inf");
  CHECK(render("{{ (fromYaml \"x: .nan\").Error }}", Value()) == conv + "json: unsupported value: NaN");
  // explicit tags that fit are applied; !!binary is decoded
  Value v = yaml("a: !!float 1\nb: !!str 12\nc: !!binary YWI=\nd: !!int \"12\"\n");
  CHECK(v.find("a")->as_float() == 1.0);
  CHECK(v.find("b")->as_string() == "12");
  CHECK(v.find("c")->as_string() == "ab");
  CHECK(v.find("d")->as_float() == 12.0);
  // bytes that are not UTF-8 come back from sigs.k8s.io/yaml's JSON as U+FFFD (helm prints "\uFFFD")
  CHECK(yaml("e: !!binary /w==\n").find("e")->as_string() == "\xEF\xBF\xBD");
}

TEST_CASE("toYaml: key order, nesting and collections", "[template][yaml]") {
  CHECK(to_yaml(yaml("b: 1\na: x\n")) == "a: x\nb: 1\n");
  CHECK(to_yaml(yaml("k: [1, 2]\n")) == "k:\n- 1\n- 2\n");
  CHECK(to_yaml(yaml("- {a: 1, b: 2}\n- [x, z]\n- []\n- {}\n")) == "- a: 1\n  b: 2\n- - x\n  - z\n- []\n- {}\n");
  CHECK(to_yaml(yaml("a: {}\nb: []\nc: ~\nd: {e: {f: g}}\n")) == "a: {}\nb: []\nc: null\nd:\n  e:\n    f: g\n");
  CHECK(to_yaml(Value(Map{})) == "{}\n");
  // a byte that starts no UTF-8 sequence comes back from the JSON step as U+FFFD; ASCII and valid
  // UTF-8 as they are (helm 3.17.3: {{ "a\xffb" | toYaml }}, {{ "é\xff" | toYaml }})
  CHECK(to_yaml(Value("a\xff" "b")) == "a\xEF\xBF\xBD" "b\n");
  CHECK(to_yaml(Value("\xC3\xA9\xff")) == "\xC3\xA9\xEF\xBF\xBD\n");
  CHECK(to_yaml(Value("plain ascii: x")) == "'plain ascii: x'\n");
  CHECK(to_yaml(Value("abc")) == "abc\n");
  CHECK(to_yaml(Value("a\nb")) == "|-\n  a\n  b\n");
  // goyaml.v2 orders keys "naturally": non-letters first, digit runs by value
  CHECK(to_yaml(yaml("a10: 1\na9: 1\nB: 1\n_x: 1\na: 1\n")) == "_x: 1\nB: 1\na: 1\na9: 1\na10: 1\n");
  // ASCII keys are compared byte by byte, others rune by rune: the same order either way
  CHECK(to_yaml(yaml("é: 1\nz: 1\ne: 1\né010: 1\né9: 1\n")) == "e: 1\nz: 1\né: 1\né9: 1\né010: 1\n");
}

TEST_CASE("toYaml: words and long plain strings as helm 3.17.3 writes them", "[template][yaml]") {
  // Words of letters, digits and . _ - / are analysed by a shortcut; those that resolve to
  // another type are still quoted, and "..." / a trailing '-' take the full analysis.
  CHECK(to_yaml(yaml("w1: registry.example.com/team/image-name_v1.2.3\nw2: _under\nw3: /abs/path-x\n"
                     "w4: \"1.0\"\nw5: \"1e3\"\nw6: \"0x1F\"\nw7: \"yes\"\nw8: \"...\"\nw9: a-\n")) ==
        "w1: registry.example.com/team/image-name_v1.2.3\nw2: _under\nw3: /abs/path-x\nw4: \"1.0\"\n"
        "w5: \"1e3\"\nw6: \"0x1F\"\nw7: \"yes\"\nw8: '...'\nw9: a-\n");
  // Runs of plain characters are written at once: the column still decides where a long
  // plain string folds (after column 80, at a single space only).
  const std::string a(78, 'a'), b(12, 'b'), c(90, 'c'), z(106, 'z');
  CHECK(to_yaml(yaml("long: \"" + a + " " + b + " " + c + " dd\"\nlong2: \"x y " + z + "  w\"\n")) ==
        "long: " + a + "\n  " + b + " " + c + "\n  dd\nlong2: x y " + z + "  w\n");
}

TEST_CASE("toYaml: numbers go through JSON first", "[template][yaml]") {
  Map m;
  m["a"] = Value(1e6);
  m["b"] = Value(1.5);
  m["c"] = Value(1e21);
  m["d"] = Value(123456789.5);
  m["e"] = Value(1e-7);
  m["f"] = Value(5);
  m["g"] = Value(true);
  CHECK(to_yaml(Value(m)) == "a: 1000000\nb: 1.5\nc: 1e+21\nd: 1.234567895e+08\ne: 1e-07\nf: 5\ng: true\n");
}

TEST_CASE("toYaml: strings are quoted when YAML 1.1 would read them as something else", "[template][yaml]") {
  auto one = [](const std::string& s) {
    Map m;
    m["k"] = Value(s);
    return to_yaml(Value(m));
  };
  CHECK(one("abc") == "k: abc\n");
  CHECK(one("true") == "k: \"true\"\n");
  CHECK(one("yes") == "k: \"yes\"\n");
  CHECK(one("1.5") == "k: \"1.5\"\n");
  CHECK(one("012") == "k: \"012\"\n");
  CHECK(one("08") == "k: \"08\"\n");
  CHECK(one("0x1F") == "k: \"0x1F\"\n");
  CHECK(one("null") == "k: \"null\"\n");
  CHECK(one("~") == "k: \"~\"\n");
  CHECK(one("") == "k: \"\"\n");
  CHECK(one("1:20") == "k: \"1:20\"\n");
  CHECK(one("2024-01-15") == "k: \"2024-01-15\"\n");
  CHECK(one(".5") == "k: \".5\"\n");
  CHECK(one("-") == "k: '-'\n");
  CHECK(one("a: b") == "k: 'a: b'\n");
  CHECK(one("a #b") == "k: 'a #b'\n");
  CHECK(one("*x") == "k: '*x'\n");
  CHECK(one(" lead") == "k: ' lead'\n");
  CHECK(one("trail ") == "k: 'trail '\n");
  CHECK(one("it's") == "k: it's\n");
  CHECK(one("'q") == "k: '''q'\n");
  CHECK(one("with\ttab") == "k: \"with\\ttab\"\n");
  CHECK(one("caf\u00e9") == "k: caf\u00e9\n");
  // a non-ASCII byte at any offset of an eight-byte word takes the string through JSON's UTF-8
  // (an invalid byte becomes U+FFFD, as json.Marshal writes it)
  for (std::size_t n = 0; n < 20; ++n) {
    CAPTURE(n);
    CHECK(one(std::string(n, 'a') + "\u00e9" + std::string(n, 'b')) ==
          "k: " + std::string(n, 'a') + "\u00e9" + std::string(n, 'b') + "\n");
    CHECK(one(std::string(n, 'a') + "\xff" + std::string(n, 'b')) ==
          "k: " + std::string(n, 'a') + "\uFFFD" + std::string(n, 'b') + "\n");
  }
  CHECK(one("a:b") == "k: a:b\n");
}

TEST_CASE("toYaml: multi-line strings use block scalars", "[template][yaml]") {
  auto one = [](const std::string& s) {
    Map m;
    m["k"] = Value(s);
    return to_yaml(Value(m));
  };
  CHECK(one("a\nb") == "k: |-\n  a\n  b\n");
  CHECK(one("a\nb\n") == "k: |\n  a\n  b\n");
  CHECK(one("a\n\n") == "k: |+\n  a\n\n");
  CHECK(one(" lead\nx") == "k: |2-\n   lead\n  x\n");
  CHECK(one("a\n\nb") == "k: |-\n  a\n\n  b\n");
  CHECK(one("a \nb") == "k: \"a \\nb\"\n");
  CHECK(one("a\n b") == "k: |-\n  a\n   b\n");
  CHECK(to_yaml(yaml("- |\n  x\n  y\n")) == "- |\n  x\n  y\n");
  CHECK(to_yaml(Value(List{Value("p\nq")})) == "- |-\n  p\n  q\n");
  // a block scalar's lines are written whole: long lines, multi-byte characters, Unicode and
  // carriage-return breaks, indicators that only matter at the start or before a blank
  const std::string line(100, 'x');
  CHECK(one(line + "\n" + line + " " + line) == "k: |-\n  " + line + "\n  " + line + " " + line + "\n");
  CHECK(one("caf\u00e9 \u20ac\n\u00e9t\u00e9") == "k: |-\n  caf\u00e9 \u20ac\n  \u00e9t\u00e9\n");
  CHECK(one("a\u2028" "b\nc") == "k: |-\n  a\u2028  b\n  c\n");
  CHECK(one("a\u0085" "b\nc") == "k: \"a\\Nb\\nc\"\n");
  CHECK(one("a\r\nb\rc\n") == "k: \"a\\r\\nb\\rc\\n\"\n");
  CHECK(one("- x\ny") == "k: |-\n  - x\n  y\n");
  CHECK(one("a: b\n# c\n? d\n") == "k: |\n  a: b\n  # c\n  ? d\n");
  CHECK(one("x\ty\nz") == "k: \"x\\ty\\nz\"\n");
  CHECK(one("-x") == "k: -x\n");
  CHECK(one("- x") == "k: '- x'\n");
  CHECK(one("?x") == "k: ?x\n");
  CHECK(one("? x") == "k: '? x'\n");
  CHECK(one(":x") == "k: :x\n");
  CHECK(one("x:") == "k: 'x:'\n");
  CHECK(one("x #") == "k: 'x #'\n");
  CHECK(one("x#") == "k: x#\n");
  CHECK(one("x,y") == "k: x,y\n");
  CHECK(one("\u00e9:\u00e9") == "k: \u00e9:\u00e9\n");
  CHECK(one("\u00e9: \u00e9") == "k: '\u00e9: \u00e9'\n");
  Map nested;
  nested["m"] = Value(Map{{"k", Value("one\ntwo\u00e9 three\n")}});
  CHECK(to_yaml(Value(nested)) == "m:\n  k: |\n    one\n    two\u00e9 three\n");
}

TEST_CASE("toYaml: long strings fold at 80 columns like goyaml.v2", "[template][yaml]") {
  std::string words;
  for (int i = 0; i < 25; ++i) words += (i ? " " : "") + std::string("abcd");
  Map m;
  m["k"] = Value(words);
  std::string first, second;
  for (int i = 0; i < 16; ++i) first += (i ? " " : "") + std::string("abcd");
  for (int i = 0; i < 9; ++i) second += (i ? " " : "") + std::string("abcd");
  CHECK(to_yaml(Value(m)) == "k: " + first + "\n  " + second + "\n");
  // keys never fold
  Map k;
  k[words] = Value(1);
  CHECK(to_yaml(Value(k)) == words + ": 1\n");
}

TEST_CASE("toYaml through the template function trims the final newline", "[template][yaml]") {
  Value v = yaml("labels:\n  app: web\n  tier: \"1\"\n");
  CHECK(render("{{ toYaml .labels | nindent 4 }}", v) == "\n    app: web\n    tier: \"1\"");
  CHECK(render("{{ toYaml .missing }}", v) == "null");
}

TEST_CASE("yaml: a stray flow entry is an error, not a hang", "[template][yaml][hostile]") {
  // yaml-cpp 0.7 looped forever on these; goyaml.v2 refuses them with these words
  auto all_docs = [](const char* text) { return parse_yaml_documents(text, YamlMode::helm, "test.yaml"); };
  CHECK_THROWS_WITH(all_docs(" ,"), Catch::Contains("did not find expected node content"));
  CHECK_THROWS_WITH(all_docs("- a\n,"), "test.yaml:2:1: did not find expected '-' indicator");
  for (const char* text : {"\"a\", b", "[a], b", "&a,b"})
    CHECK_THROWS_WITH(all_docs(text), Catch::Contains("did not find expected <document start>"));
  for (const char* text : {"a: 1\n---\n, 1", "k: [x, (y\", z]\n---\n,"})
    CHECK_THROWS_WITH(all_docs(text), Catch::Contains("did not find expected node content"));
  // yaml.Unmarshal reads only the first document: what follows it is never looked at
  CHECK(yaml("a: 1\n---\n, 1").find("a") != nullptr);
  CHECK(yaml("\"a\", b").as_string() == "a");
  // ',' belongs to a tag (goyaml.v2's URI characters)
  CHECK(yaml("!tag,x 1").as_string() == "1");
  CHECK_THROWS_WITH(yaml(std::string("a: b\n\0,\0,aa", 12)), "test.yaml:2:1: control characters are not allowed");
  // commas inside plain, quoted, flow and block scalars are fine
  Value v = yaml("a: x, y\nb: \"p, q\"\nc: [1, 2]\nd: |\n  line\n  , starts with comma\ne: long text\n  \"quoted\", continued\n");
  CHECK(v.find("a")->as_string() == "x, y");
  CHECK(v.find("c")->as_list().size() == 2);
  CHECK(v.find("d")->as_string() == "line\n, starts with comma\n");
  CHECK(v.find("e")->as_string() == "long text \"quoted\", continued");
}

TEST_CASE("fromYaml: each call's map or list is its own, though the engine parses a text once", "[template][yaml]") {
  // Sprig's set changes a map in place: a later fromYaml of the same text still reads the text.
  CHECK(render("{{ $a := fromYaml \"x: {v: 1}\\nl: [{z: 1}]\" }}{{ $_ := set $a.x \"v\" 2 }}"
               "{{ $_ := set (index $a.l 0) \"z\" 3 }}{{ $_ := set $a \"w\" 4 }}"
               "{{ $b := fromYaml \"x: {v: 1}\\nl: [{z: 1}]\" }}{{ $a }} {{ $b }}") ==
        "map[l:[map[z:3]] w:4 x:map[v:2]] map[l:[map[z:1]] x:map[v:1]]");
  CHECK(render("{{ $l := fromYamlArray \"[{a: 1}]\" }}{{ $_ := set (index $l 0) \"a\" 5 }}"
               "{{ $l }} {{ fromYamlArray \"[{a: 1}]\" }}") == "[map[a:5]] [map[a:1]]");
  // one text through both functions: each judges the same parse by its own rule
  CHECK(render("{{ fromYamlArray \"[1]\" }} {{ (fromYaml \"[1]\").Error | empty | not }} {{ fromYamlArray \"[1]\" }}") ==
        "[1] true [1]");
  CHECK(render("{{ fromYaml \"a: 1\" }} {{ fromYamlArray \"a: 1\" }} {{ fromYaml \"a: 1\" }}") ==
        "map[a:1] [error unmarshaling JSON: while decoding JSON: json: cannot unmarshal object into Go value of type "
        "[]interface {}] map[a:1]");
  // a text that fails fails every time, in each function's words
  const std::string once = render("{{ (fromYaml \"a: b: c\").Error }}");
  CHECK_FALSE(once.empty());
  CHECK(render("{{ (fromYaml \"a: b: c\").Error }}|{{ (fromYaml \"a: b: c\").Error }}") == once + "|" + once);
  CHECK(render("{{ index (fromYamlArray \"a: b: c\") 0 }}|{{ (fromYaml \"a: b: c\").Error }}") ==
        render("{{ index (fromYamlArray \"a: b: c\") 0 }}") + "|" + once);
}
