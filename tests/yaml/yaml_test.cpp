// core/yaml: the loader's tree, positions and errors, from the YAML 1.1 spec's
// rules and goyaml.v2's documented behaviour (cases written for emco).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/yaml/yaml.hpp"

using namespace emco::yaml;

namespace {

// A compact rendering: scalars "text" with a style prefix (' " | >) and their
// tag as <tag>, sequences [..], mappings {k: v, ..}, aliases *target-line.
std::string dump(const Document& d, NodeId id) {
  const Node& n = d.node(id);
  std::string out;
  if (!d.tag(id).empty()) out += "<" + d.tag(id) + ">";
  switch (n.type) {
    case NodeType::alias: return out + "*" + std::to_string(d.node(d.target(id)).line);
    case NodeType::scalar: {
      switch (n.style) {
        case Style::single_quoted: out += "'"; break;
        case Style::double_quoted: out += "\""; break;
        case Style::literal: out += "|"; break;
        case Style::folded: out += ">"; break;
        default: break;
      }
      out += d.scalar(id);
      return out;
    }
    case NodeType::sequence: {
      out += "[";
      for (std::size_t i = 0; i < d.size(id); ++i) out += (i ? ", " : "") + dump(d, d.item(id, i));
      return out + "]";
    }
    case NodeType::mapping: {
      out += "{";
      for (std::size_t i = 0; i < d.size(id); ++i)
        out += (i ? ", " : "") + dump(d, d.key(id, i)) + ": " + dump(d, d.value(id, i));
      return out + "}";
    }
  }
  return out;
}

std::string one(std::string_view text) {
  auto docs = parse(text);
  REQUIRE(docs.size() == 1);
  return dump(docs[0], docs[0].root());
}

std::string error_of(std::string_view text) {
  try {
    parse(text);
  } catch (const ParseError& e) {
    return e.goyaml_text();
  }
  return "no error";
}

}  // namespace

TEST_CASE("block collections", "[yaml]") {
  CHECK(one("a: 1\nb:\n  c: x\n  d: [1, 2]\n") == "{a: 1, b: {c: x, d: [1, 2]}}");
  CHECK(one("- a\n- - b\n  - c\n- d: e\n  f: g\n") == "[a, [b, c], {d: e, f: g}]");
  // a sequence as a mapping value may sit at the key's indentation
  CHECK(one("k:\n- 1\n- 2\nn: x\n") == "{k: [1, 2], n: x}");
  CHECK(one("? complex\n: value\n") == "{complex: value}");
  CHECK(one("a:\nb: \n") == "{a: , b: }");
  CHECK(one("- \n-\n") == "[, ]");
}

TEST_CASE("flow collections", "[yaml]") {
  CHECK(one("{a: 1, b: [x, y], c: {d: e}}") == "{a: 1, b: [x, y], c: {d: e}}");
  CHECK(one("[a, b, ]") == "[a, b]");
  CHECK(one("[a: b, c]") == "[{a: b}, c]");
  CHECK(one("{a, b: c}") == "{a: , b: c}");
  CHECK(one("[\n  1,\n  2\n]\n") == "[1, 2]");
  CHECK(one("{\"a\":1}") == "{\"a: 1}");
  CHECK(one("k: {x: [1, {y: z}]}\n") == "{k: {x: [1, {y: z}]}}");
}

TEST_CASE("plain scalars fold lines and stop at indicators", "[yaml]") {
  CHECK(one("a: one\n  two\n\n  three\n") == "{a: one two\nthree}");
  CHECK(one("a: x#y # comment\n") == "{a: x#y}");
  CHECK(one("a: b:c\n") == "{a: b:c}");
  CHECK(one("a: -1\nb: -x\n") == "{a: -1, b: -x}");
  CHECK(one("url: http://x/y?z=1\n") == "{url: http://x/y?z=1}");
  CHECK(one("[a b, c]") == "[a b, c]");
  // A run of characters stops at a blank, any of the breaks, ':' before a blank or the end, and
  // (only in a flow collection) a flow indicator; multi-byte characters count one column each.
  CHECK(one("a: x,y?z[0]{1}\n") == "{a: x,y?z[0]{1}}");
  CHECK(error_of("[x?y]") == "yaml: did not find expected ',' or ']'");
  CHECK(error_of("{a: x}y}") == "yaml: did not find expected <document start>");
  CHECK(error_of("[x]y]") == "yaml: did not find expected <document start>");
  CHECK(one("a:b: c:d\n") == "{a:b: c:d}");
  CHECK(one("- b:\tc\n- d:") == "[{b: c}, {d: }]");
  CHECK(one("- b:\xC2\x85" "  c: d\n") == "[{b: , c: d}]");
  CHECK(error_of("a: b:\xE2\x80\xA9") == "yaml: mapping values are not allowed in this context");
  CHECK(one("a: \xC3\xA9t\xC3\xA9\xE2\x80\xA8" "b: \xE2\x82\xAC\xE2\x80\xA9" "c: x\xC2\x85 y\n") ==
        "{a: \xC3\xA9t\xC3\xA9, b: \xE2\x82\xAC, c: x y}");
  CHECK(one("a: x\xE2\x80\xAFy\xC2\xA0z\n") == "{a: x\xE2\x80\xAFy\xC2\xA0z}");
  CHECK(one("- \xC3\xA9\xC3\xA9: 1\n  k: 2\n") == "[{\xC3\xA9\xC3\xA9: 1, k: 2}]");
}

TEST_CASE("quoted scalars", "[yaml]") {
  CHECK(one("a: 'it''s'\n") == "{a: 'it's}");
  CHECK(one("a: \"tab\\tnl\\n\\x41\\u00e9\\U0001F600\"\n") == "{a: \"tab\tnl\nA\xC3\xA9\xF0\x9F\x98\x80}");
  CHECK(one("a: \"one\n  two\n\n  three\"\n") == "{a: \"one two\nthree}");
  CHECK(one("a: \"joined\\\n  here\"\n") == "{a: \"joinedhere}");
  CHECK(one("a: 'x\n\n  y'\n") == "{a: 'x\ny}");
}

TEST_CASE("block scalars", "[yaml]") {
  CHECK(one("a: |\n  line1\n  line2\n") == "{a: |line1\nline2\n}");
  CHECK(one("a: |-\n  x\n\n") == "{a: |x}");
  CHECK(one("a: |+\n  x\n\n") == "{a: |x\n\n}");
  CHECK(one("a: >\n  folded\n  text\n\n  para\n") == "{a: >folded text\npara\n}");
  CHECK(one("a: >\n  x\n    more\n  y\n") == "{a: >x\n  more\ny\n}");
  CHECK(one("a: |2\n    indented\n") == "{a: |  indented\n}");
  CHECK(one("- |\n  x\n- y\n") == "[|x\n, y]");
  CHECK(one("a: |\n\n  after blank\n") == "{a: |\nafter blank\n}");
  CHECK(one("|\n text\n") == "|text\n");
}

TEST_CASE("tags", "[yaml]") {
  CHECK(one("a: !!str 1\n") == "{a: <tag:yaml.org,2002:str>1}");
  CHECK(one("a: !local x\n") == "{a: <!local>x}");
  CHECK(one("a: ! x\n") == "{a: <!>x}");
  CHECK(one("a: !<tag:example.com,2000:x> y\n") == "{a: <tag:example.com,2000:x>y}");
  CHECK(one("%TAG !e! tag:example.com,2000:\n---\na: !e!foo x\n") == "{a: <tag:example.com,2000:foo>x}");
  CHECK(one("a: !!map {b: c}\n") == "{a: <tag:yaml.org,2002:map>{b: c}}");
  CHECK(error_of("a: !e!x y\n") == "yaml: found undefined tag handle");
}

TEST_CASE("anchors and aliases", "[yaml]") {
  auto docs = parse("base: &b {x: 1}\nother: *b\nlist:\n  - &s str\n  - *s\n");
  REQUIRE(docs.size() == 1);
  const auto& d = docs[0];
  CHECK(dump(d, d.root()) == "{base: {x: 1}, other: *1, list: [str, *4]}");
  NodeId other = d.find(d.root(), "other");
  CHECK(d.node(other).type == NodeType::alias);
  CHECK(d.node(d.target(other)).type == NodeType::mapping);
  CHECK(one("a: &x\nb: *x\n") == "{a: , b: *1}");
  CHECK(error_of("a: *nope\n") == "yaml: unknown anchor 'nope' referenced");
  CHECK(error_of("a: &x [1, *x]\n") == "yaml: anchor 'x' value contains itself");
  // a later anchor of the same name replaces the earlier one
  CHECK(one("- &a 1\n- &a 2\n- *a\n") == "[1, 2, *2]");
}

TEST_CASE("documents, directives, comments, BOM and CRLF", "[yaml]") {
  CHECK(parse("").empty());
  CHECK(parse("# only a comment\n").empty());
  auto docs = parse("a: 1\n---\nb: 2\n...\n---\n- c\n");
  REQUIRE(docs.size() == 3);
  CHECK(dump(docs[1], docs[1].root()) == "{b: 2}");
  CHECK(dump(docs[2], docs[2].root()) == "[c]");
  docs = parse("---\n---\n");
  REQUIRE(docs.size() == 2);
  CHECK(docs[0].node(docs[0].root()).type == NodeType::scalar);
  CHECK(docs[0].scalar(docs[0].root()).empty());
  CHECK(parse("%YAML 1.1\n---\nx\n").size() == 1);
  CHECK(one("\xEF\xBB\xBF" "a: 1\n") == "{a: 1}");
  CHECK(one("a: 1\r\nb: |\r\n  x\r\n  y\r\n") == "{a: 1, b: |x\ny\n}");
  CHECK(one("# c\na: 1 # c\n# c\nb: 2\n") == "{a: 1, b: 2}");
  Options first;
  first.max_documents = 1;
  CHECK(parse("a\n---\nb\n---\nc\n", first).size() == 1);
}

TEST_CASE("every node has its line and column", "[yaml]") {
  auto docs = parse("---\nkind: Pod\nmetadata:\n  name: x\n  labels: {a: b}\nitems:\n- one\n-   two\n");
  const auto& d = docs.at(0);
  NodeId root = d.root();
  CHECK(d.node(root).line == 2);
  CHECK(d.node(d.key(root, 0)).line == 2);
  NodeId meta = d.find(root, "metadata");
  CHECK(d.node(meta).line == 4);
  CHECK(d.node(meta).column == 3);
  NodeId labels = d.find(meta, "labels");
  CHECK(d.node(labels).line == 5);
  CHECK(d.node(labels).column == 11);
  NodeId items = d.find(root, "items");
  CHECK(d.node(d.item(items, 1)).line == 8);
  CHECK(d.node(d.item(items, 1)).column == 5);
  CHECK(d.find(root, "absent") == Document::k_none);
}

// goyaml counts scanner problems from 1 and parser problems from 0, and prints no line for 0.
TEST_CASE("errors read like goyaml.v2's", "[yaml]") {
  CHECK(error_of("a: b: c\n") == "yaml: mapping values are not allowed in this context");
  CHECK(error_of("x: 1\na: b: c\n") == "yaml: line 2: mapping values are not allowed in this context");
  CHECK(error_of("a: b\n  c: d\n") == "yaml: line 2: mapping values are not allowed in this context");
  CHECK(error_of("x: 1\na: \"abc\n") == "yaml: line 3: found unexpected end of stream");
  CHECK(error_of("a: 1\n b: 2\n") == "yaml: line 2: mapping values are not allowed in this context");
  CHECK(error_of("a:\n  b: 1\n c: 2\n") == "yaml: line 2: did not find expected key");
  CHECK(error_of("x: 1\ny: @z\n") == "yaml: line 2: found character that cannot start any token");
  CHECK(error_of("a: 1\nb\nc: 2\n") == "yaml: line 3: could not find expected ':'");
  CHECK(error_of("- a\nb: c\n") == "yaml: line 1: did not find expected '-' indicator");
  CHECK(error_of("x: [a, b\ny: 1\n") == "yaml: line 1: did not find expected ',' or ']'");
  CHECK(error_of("x: {a: b\n") == "yaml: line 1: did not find expected ',' or '}'");
  CHECK(error_of("a: \"\\q\"\n") == "yaml: found unknown escape character");
  CHECK(error_of("a: 1\n\tb: 2\n") == "yaml: line 2: found a tab character that violates indentation");
  CHECK(error_of(",x\n") == "yaml: did not find expected node content");
  CHECK(error_of("a: b\x01\n") == "yaml: control characters are not allowed");
  CHECK(error_of("a: \xff\n") == "yaml: invalid leading UTF-8 octet");
  CHECK(error_of("a: 1\n...\nb: 2\n") == "yaml: line 2: did not find expected <document start>");
  CHECK(error_of("%YAML 2.0\n---\nx\n") == "yaml: found incompatible YAML document");
  CHECK(error_of("a: |0\n  x\n") == "yaml: found an indentation indicator equal to 0");
}

TEST_CASE("error positions are 1-based", "[yaml]") {
  try {
    parse("a: 1\nb: [x,\n");
    FAIL("expected an error");
  } catch (const ParseError& e) {
    CHECK(e.stage() == ParseError::Stage::parser);
    CHECK(e.line() == 3);
    CHECK(e.problem() == "did not find expected node content");
  }
}

TEST_CASE("limits: nesting depth, alias expansion, long keys", "[yaml]") {
  std::string deep(2000, '[');
  Options o;
  o.max_depth = 100;
  try {
    parse(deep, o);
    FAIL("expected an error");
  } catch (const ParseError& e) {
    CHECK(e.problem() == "exceeded max depth of 100");
  }
  auto docs = parse("a: &a [x, x]\nb: &b [*a, *a]\n");
  AliasBudget budget(docs.at(0));
  CHECK_THROWS_WITH(
      [&] {
        for (int i = 0; i < 1000000; ++i) budget.charge(1);
      }(),
      "yaml: document contains excessive aliasing");
  // an implicit key may not be longer than 1024 characters
  std::string long_key(1100, 'k');
  CHECK(error_of(long_key + ": v\n") == "yaml: mapping values are not allowed in this context");
  CHECK(one(std::string(1000, 'k') + ": v\n") == "{" + std::string(1000, 'k') + ": v}");
}

TEST_CASE("spec corners: indentation, tabs, keys and line breaks", "[yaml]") {
  // tabs separate tokens after an indicator, never indent
  CHECK(one("a:\t1\nb: [x,\ty]\n") == "{a: 1, b: [x, y]}");
  // anchors and tags on keys, and on empty values
  CHECK(one("&k key: !!str &v\n") == "{key: <tag:yaml.org,2002:str>}");
  // a key may hold a flow collection
  CHECK(one("[a, b]: c\n") == "{[a, b]: c}");
  // a less indented line ends a block scalar, and the document goes on
  CHECK(one("a: |\n    deep\n  # c\nb: 1\n") == "{a: |deep\n, b: 1}");
  // '#' inside a scalar is text unless a blank precedes it
  CHECK(one("a: 'x # y' # z\nb: c#d\n") == "{a: 'x # y, b: c#d}");
  // NEL is a line break that folds like \n
  CHECK(one("a: \"x\xC2\x85y\"\n") == "{a: \"x y}");
  // a comment ends at any of goyaml.v2's line breaks (is_break: \r, \n, NEL, LS, PS), not
  // only \n, and multi-byte characters in it count as one column each; the same for a
  // block scalar's lines (where LS and PS stay in the text, as goyaml's read_line keeps them)
  CHECK(one("a: 1 # d\xC3\xA9j\xC3\xA0\xE2\x80\xA8" "b: 2\n") == "{a: 1, b: 2}");
  CHECK(one("a: 1 # x\rb: 2\r") == "{a: 1, b: 2}");
  // comments are skipped sixteen or eight bytes at a time: breaks and multi-byte characters at
  // every offset of a block or word still end the comment / count as one column
  for (const char* brk : {"\n", "\r", "\r\n", "\xC2\x85", "\xE2\x80\xA8", "\xE2\x80\xA9"}) {
    for (size_t n = 0; n < 40; ++n) {
      CHECK(one("a: 1 # " + std::string(n, 'x') + brk + "b: 2\n") == "{a: 1, b: 2}");
      CHECK(one("# " + std::string(n, 'y') + "\xC3\xA9" + std::string(n, 'z') + brk + "a: [1,\n  2]\n") == "{a: [1, 2]}");
    }
  }
  CHECK(error_of("# a comment that is longer than one word\n a: 1\nb: [\n") ==
        "yaml: line 2: did not find expected <document start>");
  CHECK(one("# \xE2\x82\xAC\xC2\x85" "a: |\n  \xC3\xA9t\xC3\xA9\xE2\x80\xA9  x\n") == "{a: |\xC3\xA9t\xC3\xA9\xE2\x80\xA9" "x\n}");
  // "---" inside a line is text; at column 0 it starts a document
  CHECK(one("a: x --- y\n") == "{a: x --- y}");
  CHECK(parse("a\n--- b\n").size() == 2);
  // flow collections may span lines; plain scalars in them fold
  CHECK(one("{a: one\n  two, b: 3}") == "{a: one two, b: 3}");
  CHECK(error_of("%TAG !a! x:\n%TAG !a! y:\n--- z\n") == "yaml: line 1: found duplicate %TAG directive");
  // '-' does not end a plain scalar in a flow collection
  CHECK(one("- [a\n- b]\n") == "[[a - b]]");
  CHECK(error_of("'unterminated\n") == "yaml: line 2: found unexpected end of stream");
  CHECK(error_of("a:\n  - b\n  c: d\n") == "yaml: line 2: did not find expected '-' indicator");
}

// Inputs the fuzzers keep (among them one that hung yaml-cpp 0.7 forever): each one either
// parses or is refused with a position, and every tree can be walked through its aliases.
TEST_CASE("fuzz seeds load or fail cleanly", "[yaml][hostile]") {
  int files = 0;
  for (const char* dir : {"yaml_fuzz", "yaml_loader_fuzz"}) {
    for (const auto& entry :
         std::filesystem::directory_iterator(std::filesystem::path(EMCO_SOURCE_DIR) / "tests/fuzz/seeds" / dir)) {
      std::ifstream in(entry.path(), std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      INFO(entry.path().string());
      ++files;
      try {
        for (const auto& d : parse(text)) CHECK(d.node(d.root()).line >= 1);
      } catch (const ParseError& e) {
        CHECK(e.line() >= 1);
      }
    }
  }
  CHECK(files >= 15);
}

TEST_CASE("the reader's checks hold at every byte offset of a word", "[yaml]") {
  // Plain scalars of 40 characters: a byte under test lands at each position of the 16-byte
  // blocks and 8-byte words the reader checks at once, and in the tail.
  const std::string filler = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN";
  auto doc = [&](size_t at, std::string_view piece) {
    return "k: " + filler.substr(0, at) + std::string(piece) + filler.substr(at) + "\n";
  };
  for (size_t at = 0; at <= filler.size(); ++at) {
    INFO("offset " << at);
    for (int b = 1; b < 0x80; ++b) {
      char c = static_cast<char>(b);
      if (c == '\t' || c == '\n' || c == '\r' || (b >= 0x20 && b < 0x7F)) continue;
      INFO("byte " << b);
      CHECK(error_of(doc(at, std::string(1, c))) == "yaml: control characters are not allowed");
    }
    CHECK(error_of(doc(at, "\xff")) == "yaml: invalid leading UTF-8 octet");
    CHECK(error_of(doc(at, "\xC3\x28")) == "yaml: invalid trailing UTF-8 octet");
    CHECK(error_of(doc(at, "\xC0\xAF")) == "yaml: invalid length of a UTF-8 sequence");
    CHECK(error_of(doc(at, "\xED\xA0\x80")) == "yaml: invalid Unicode character");
    CHECK(error_of(doc(at, "\xEF\xBF\xBE")) == "yaml: control characters are not allowed");
    CHECK(error_of(doc(at, "\xC2\x80")) == "yaml: control characters are not allowed");
    for (std::string_view ok : {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xEE\x80\x80"})
      CHECK(error_of(doc(at, ok)) == "no error");
  }
  CHECK(error_of("k: abcdefghijklmnopqrstuvw\xE2\x82") == "yaml: incomplete UTF-8 octet sequence");
}
