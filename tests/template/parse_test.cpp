// Parse errors worded as Go's text/template/parse words them.
#include <catch2/catch.hpp>

#include <memory>

#include "core/util/error.hpp"
#include "helpers.hpp"

using namespace emco::tmpl;
using namespace emco::tmpl::test;

namespace {
std::string parse_error(const std::string& text) {
  try {
    Engine e;
    e.add("t", text);
  } catch (const emco::Error& err) {
    CHECK(err.kind() == emco::ErrorKind::invalid);
    return err.message();
  }
  return "";
}
}  // namespace

TEST_CASE("parse: unterminated actions and strings", "[template][parse]") {
  CHECK(parse_error("abc {{ .x ") == "template: t:1: unclosed action");
  CHECK(parse_error("{{ \"abc }}") == "template: t:1: unterminated quoted string");
  CHECK(parse_error("{{ `abc }}") == "template: t:1: unterminated raw quoted string");
  CHECK(parse_error("{{ 'a }}") == "template: t:1: unterminated character constant");
  CHECK(parse_error("{{/* never closed") == "template: t:1: unclosed comment");
  CHECK(parse_error("{{/* c */ x }}") == "template: t:1: comment ends before closing delimiter");
}

TEST_CASE("parse: structure errors", "[template][parse]") {
  CHECK(parse_error("{{ if .x }}yes") == "template: t:1: unexpected EOF");
  CHECK(parse_error("{{ end }}") == "template: t:1: unexpected {{end}}");
  CHECK(parse_error("{{ else }}") == "template: t:1: unexpected {{else}}");
  CHECK(parse_error("{{ range .x }}{{ else }}{{ else }}{{ end }}") == "template: t:1: expected end; found {{else}}");
  CHECK(parse_error("{{ break }}") == "template: t:1: {{break}} outside {{range}}");
  CHECK(parse_error("{{ continue }}") == "template: t:1: {{continue}} outside {{range}}");
  CHECK(parse_error("{{ if }}{{ end }}") == "template: t:1: missing value for if");
  CHECK(parse_error("{{ }}") == "template: t:1: missing value for command");
  CHECK(parse_error("{{ .x | 3 }}") == "template: t:1: non executable command in pipeline stage 2");
}

TEST_CASE("parse: unknown functions and variables", "[template][parse]") {
  CHECK(parse_error("{{ nosuchfunc 1 }}") == "template: t:1: function \"nosuchfunc\" not defined");
  // a defined function seen before, with the same length and first and last letters
  CHECK(parse_error("{{ quote 1 }}{{ quote 2 }}{{ qu0te 3 }}") == "template: t:1: function \"qu0te\" not defined");
  CHECK(parse_error("{{ $x }}") == "template: t:1: undefined variable \"$x\"");
  // a variable declared inside if is gone after its end
  CHECK(parse_error("{{ if true }}{{ $y := 1 }}{{ end }}{{ $y }}") == "template: t:1: undefined variable \"$y\"");
  // Go's builtins only when helm functions are off
  Options go_only;
  go_only.helm_functions = false;
  Engine e(go_only);
  CHECK_THROWS_WITH(e.add("t", "{{ upper .x }}"), "template: t:1: function \"upper\" not defined");
}

TEST_CASE("parse: the line number is the line of the offending token", "[template][parse]") {
  CHECK(parse_error("line one\nline two\n{{ if }}") == "template: t:3: missing value for if");
  // the error token is on line 4; Go names the line where the action started
  CHECK(parse_error("a\n{{ define \"x\" }}\n{{ .y \n") == "template: t:4: unclosed action started at t:3");
  // The parser counts the lines of the tokens it names (the lexer leaves them to it), forward
  // and back from the last one asked: helm 3.17.3's lines for the same texts.
  CHECK(parse_error("a\nb\n{{ if }}\n") == "template: t:3: missing value for if");
  CHECK(parse_error("x\n{{ .a\n\n .b") == "template: t:4: unclosed action started at t:2");
  CHECK(parse_error("{{ define \"a\" }}\n\n{{ end }}\n{{ end }}") == "template: t:4: unexpected {{end}}");
  CHECK(parse_error("{{ $x := 1 }}\n\n{{ $y }}") == "template: t:3: undefined variable \"$y\"");
  CHECK(parse_error("{{ if .a }}\n{{ else }}\n{{ else }}\n{{ end }}") == "template: t:3: expected end; found {{else}}");
  CHECK(parse_error("{{ .a\n | foo }}") == "template: t:2: function \"foo\" not defined");
  CHECK(parse_error("a\n{{- /* c */ -}}\n\n{{ (1 }}") == "template: t:4: unclosed left paren");
  CHECK(parse_error("{{ with .a }}\n{{ range .b }}\n{{ end }}\nx") == "template: t:4: unexpected EOF");
  CHECK(parse_error("\n{{ \"a\n\" }}") == "template: t:2: unterminated quoted string");
  CHECK(error_of("\n\n{{ template \"x\" 1 2 }}") ==
        "template: t:3:12: executing \"t\" at <{{template \"x\" 1 2}}>: template \"x\" not defined");
}

TEST_CASE("parse: parentheses and bad characters", "[template][parse]") {
  CHECK(parse_error("{{ (1 }}") == "template: t:1: unclosed left paren");
  CHECK(parse_error("{{ 1) }}") == "template: t:1: unexpected \")\" in command");
  CHECK(parse_error("{{ 3x }}") == "template: t:1: bad number syntax: \"3x\"");
  CHECK(parse_error("{{ .x.y. }}").find("template: t:1: ") == 0);
  CHECK(parse_error("{{ \"a\".b }}") == "template: t:1: unexpected . after term \"\\\"a\\\"\"");
}

TEST_CASE("parse: duplicate definitions in one text are an error, across texts the later wins", "[template][parse]") {
  CHECK(parse_error("{{ define \"a\" }}1{{ end }}{{ define \"a\" }}2{{ end }}") ==
        "template: t:1: template: multiple definition of template \"a\"");
  Engine e;
  e.add("one", "{{ define \"a\" }}first{{ end }}");
  e.add("two", "{{ define \"a\" }}second{{ end }}");
  e.add("three", "{{ define \"a\" }}  {{ end }}");  // empty: does not replace
  e.add("main", "{{ template \"a\" }}");
  CHECK(e.execute("main", Value()) == "second");
  CHECK(e.has("a"));
  CHECK_FALSE(e.has("b"));
}

TEST_CASE("parse: hostile nesting errors cleanly instead of overflowing the stack", "[template][parse]") {
  std::string deep = "{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}";
  CHECK(parse_error(deep) == "template: t:1: max expression depth exceeded");
  std::string ifs;
  for (int i = 0; i < 50000; ++i) ifs += "{{ if 1 }}";
  CHECK(parse_error(ifs) == "template: t:1: max expression depth exceeded");
  // moderate nesting is fine
  std::string ok = "{{ " + std::string(200, '(') + "1" + std::string(200, ')') + " }}";
  CHECK(render(ok) == "1");
}

TEST_CASE("parse: declarations and field chains keep every name", "[template][parse]") {
  CHECK(parse_error("{{ range $i, $e, $x := .l }}{{ end }}") == "template: t:1: too many declarations in range");
  CHECK(parse_error("{{ $a, $b := .l }}") == "template: t:1: too many declarations in command");
  CHECK(parse_error("{{ range $i, 3 }}{{ end }}") == "template: t:1: range can only initialize variables");
  CHECK(parse_error("{{ \"s\".a.b }}") == "template: t:1: unexpected . after term \"\\\"s\\\"\"");
  const Value dot(Map{{"a", Value(Map{{"b", Value(Map{{"c", "abc"}})}})}, {"l", Value(List{"x", "y"})}});
  CHECK(render("{{ .a.b.c }} {{ $x := .a }}{{ $x.b.c }} {{ (.a).b.c }} {{ $.a.b.c }}", dot) == "abc abc abc abc");
  CHECK(render("{{ range $i, $e := .l }}{{ $i }}{{ $e }}{{ end }}{{ range $e := .l }}{{ $e }}{{ end }}", dot) ==
        "0x1yxy");
  CHECK(render("{{ if false }}{{ else if .a.b }}{{ with .a }}{{ .b.c }}{{ end }}{{ end }}", dot) == "abc");
}

TEST_CASE("parse: a file parsed after a failed or a larger one is parsed on its own", "[template][parse]") {
  // The lexer's items of one parse make room for the next one's on the same thread.
  Engine e;
  std::string big;
  for (int i = 0; i < 2000; ++i) big += "{{ .a }}{{ $x := 1 }}\n";
  e.add("big", big);
  CHECK_THROWS_WITH(e.add("bad", "{{ .a }}{{ if .b }}x"), "template: bad:1: unexpected EOF");
  e.add("small", "s{{ 1 }}{{ .v }}");
  CHECK(e.execute("small", yaml("v: w")) == "s1w");
  CHECK(e.execute("big", yaml("a: b")).size() == 2000 * 2);
}

TEST_CASE("parse: a file whose nodes outgrow the block sized from its items keeps them all", "[template][parse]") {
  // 400 operands take more than the first block gives their items, and their argument array
  // more than a later block's size.
  std::string args, printed;
  for (int i = 1; i <= 400; ++i) {
    args += " " + std::to_string(i);
    printed += (i > 1 ? " " : "") + std::to_string(i);
  }
  const std::string action = "{{ print" + args + " }}";
  CHECK(render(action + "\n" + action) == printed + "\n" + printed);
}

TEST_CASE("parse: a text added as shared is kept, not copied, and parses as a copied one", "[template][parse]") {
  auto text = std::make_shared<const std::string>("{{ define \"d\" }}<{{ .x }}>{{ end }}a{{ template \"d\" . }}b");
  Engine e;
  e.add("t", text);
  CHECK(text.use_count() > 1);  // the trees hold it
  e.add("copied", std::string_view(*text));
  CHECK(e.execute("t", yaml("x: 1")) == "a<1>b");
  CHECK(e.execute("copied", yaml("x: 2")) == "a<2>b");
  CHECK_THROWS_WITH(e.add("bad", std::make_shared<const std::string>("{{ .x ")), "template: bad:1: unclosed action");
}

TEST_CASE("parse: spaces separate a command's operands", "[template][parse]") {
  // go 1.19's text/template and helm 3.17.3 word these so (helm prefixes "parse error at")
  CHECK(parse_error("{{ .a , }}") == "template: t:1: unexpected \",\" in operand");
  CHECK(parse_error("{{ .a = 1 }}") == "template: t:1: unexpected \"=\" in operand");
  CHECK(parse_error("{{ .a(\"x\") }}") == "template: t:1: unexpected \"(\" in operand");
  CHECK(parse_error("{{ print (1) (2)(3) }}") == "template: t:1: unexpected \"(\" in operand");
  CHECK(parse_error("{{ print .a. }}") == "template: t:1: unexpected <.> in operand");
  CHECK(parse_error("{{ print\n1\n2\n)\n}}") == "template: t:4: unexpected \")\" in command");
  CHECK(parse_error("{{ print\n1\n\n2 = }}") == "template: t:4: unexpected \"=\" in operand");
  CHECK(parse_error("{{ if\n.a\n.b ( }}x{{ end }}") == "template: t:3: unclosed left paren in action started at t:1");
}

TEST_CASE("parse: a name ends at the first byte that is not a letter, digit, '_' or non-ASCII", "[template][parse]") {
  // Names are scanned sixteen bytes at a time: every length around a block's end, and every kind
  // of byte as the one after the name, whatever its offset in the block.
  for (std::size_t n = 1; n < 40; ++n) {
    std::string name;
    for (std::size_t i = 0; i < n; ++i) name += "aZ_9"[i % 4];
    const std::string key = "k" + name;
    const Value dot(Map{{key, Value(Map{{"x", "found"}})}});
    CAPTURE(n);
    CHECK(render("{{ ." + key + ".x }}", dot) == "found");
    CHECK(render("{{ ." + key + " | printf \"%v\" }}{{ $" + name + " := 1 }}{{ $" + name + "}}", dot) ==
          "map[x:found]1");
    CHECK(render("{{ (." + key + ").x }}{{ ." + key + "}}", dot) == "foundmap[x:found]");
    CHECK(parse_error("{{ ." + key + "! }}") == "template: t:1: bad character U+0021 '!'");
    CHECK(parse_error("{{ ." + key + "@x }}") == "template: t:1: bad character U+0040 '@'");
    CHECK(parse_error("{{ " + key + "[ }}") == "template: t:1: bad character U+005B '['");
    CHECK(parse_error("{{ ." + key + "` }}") == "template: t:1: bad character U+0060 '`'");
    CHECK(parse_error("{{ ." + key + "{ }}") == "template: t:1: bad character U+007B '{'");
    CHECK(parse_error("{{ ." + key + "/ }}") == "template: t:1: bad character U+002F '/'");
    CHECK(parse_error("{{ ." + key + ": }}") == "template: t:1: expected :=");
    CHECK(render("{{ ." + key + "\xC3\xA9 }}", Value(Map{{key + "\xC3\xA9", "multi-byte"}})) == "multi-byte");
  }
}

TEST_CASE("parse: a quoted string's escapes, quotes and line feeds are found at every offset", "[template][parse]") {
  // Quoted strings are scanned sixteen bytes at a time: each kind of byte that ends a plain run,
  // at every offset around a block's end.
  for (std::size_t n = 0; n < 40; ++n) {
    const std::string pad(n, 'p');
    CAPTURE(n);
    CHECK(render("{{ \"" + pad + "\" }}") == pad);
    CHECK(render("{{ \"" + pad + "\\\"q\\\\\" }}") == pad + "\"q\\");
    CHECK(render("{{ \"" + pad + "\\n" + pad + "\\u00e9\" | len }}") == std::to_string(2 * n + 3));
    CHECK(render("{{ \"" + pad + "\xC3\xA9" + pad + "\" }}") == pad + "\xC3\xA9" + pad);
    CHECK(render("{{ \"" + pad + "\" }}{{ \"x\" }}") == pad + "x");
    CHECK(parse_error("{{ \"" + pad + "\n\" }}") == "template: t:1: unterminated quoted string");
    CHECK(parse_error("{{ \"" + pad) == "template: t:1: unterminated quoted string");
    CHECK(parse_error("{{ \"" + pad + "\\") == "template: t:1: unterminated quoted string");
    CHECK(parse_error("{{ \"" + pad + "\\q\" }}") == "template: t:1: invalid syntax");
  }
}
