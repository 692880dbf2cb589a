// Manifest splitting, heads, hooks and install-order sorting (Helm's releaseutil).
#include <catch2/catch.hpp>

#include <re2/re2.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/helm/manifests.hpp"
#include "core/util/error.hpp"

using namespace emco::helm;

TEST_CASE("split_manifests follows Helm's separator regex", "[helm][manifests]") {
  CHECK(split_manifests("") == std::vector<std::string>{});
  CHECK(split_manifests("---\na: 1\n---\nb: 2\n") == std::vector<std::string>{"a: 1", "b: 2"});
  CHECK(split_manifests("a: 1\n  \n---   \n\nb: 2") == std::vector<std::string>{"a: 1", "b: 2"});
  // Go consumes the newline with the first separator, so the second "---" survives.
  CHECK(split_manifests("\n\n---\n---\n") == std::vector<std::string>{"---"});
  // "---" not at the start of a line does not split; "---x" at line start does (Helm quirk).
  CHECK(split_manifests("a: ---\n---x: 1") == std::vector<std::string>{"a: ---", "x: 1"});
  CHECK(split_manifests("# only a comment\n") == std::vector<std::string>{"# only a comment"});
}

namespace {
// Helm's SplitManifests literally: the Go regexp through RE2 (same syntax and leftmost-first
// semantics), pieces trimmed as strings.TrimSpace does for ASCII.
std::vector<std::string> split_by_regexp(const std::string& text) {
  static const RE2 sep("(?:^|\\s*\n)---\\s*");
  auto trim = [](std::string_view s) {
    const char* ws = " \t\n\v\f\r";
    auto b = s.find_first_not_of(ws);
    if (b == std::string_view::npos) return std::string_view();
    return s.substr(b, s.find_last_not_of(ws) - b + 1);
  };
  std::string_view big = trim(text);
  std::vector<std::string> docs;
  auto add = [&](std::string_view piece) {
    piece = trim(piece);
    if (!piece.empty()) docs.emplace_back(piece);
  };
  size_t pos = 0;
  re2::StringPiece input(big.data(), big.size());
  re2::StringPiece m;
  while (pos <= big.size() && sep.Match(input, pos, big.size(), RE2::UNANCHORED, &m, 1)) {
    auto start = static_cast<size_t>(m.data() - big.data());
    add(big.substr(pos, start - pos));
    pos = start + m.size();
  }
  if (pos <= big.size()) add(big.substr(pos));
  return docs;
}
}  // namespace

TEST_CASE("split_manifests agrees with Helm's regexp on random texts", "[helm][manifests]") {
  std::mt19937 rng(20261122);
  const std::string alphabet = "-\n \t\r\f\va#:";
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    size_t len = rng() % 24;
    for (size_t k = 0; k < len; ++k) text.push_back(alphabet[rng() % alphabet.size()]);
    INFO("text: " << text);
    REQUIRE(split_manifests(text) == split_by_regexp(text));
  }
}

TEST_CASE("the fast head reader refuses control bytes wherever they sit in a line", "[helm][manifests]") {
  const std::string head = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: |\n    ";
  const std::string line = "{\"panels\": [1, 2, 3], \"title\": \"dashboard\"}";
  ManifestHead h;
  REQUIRE(read_head_fast(head + line + "\n", h));
  CHECK(h.name == "x");
  for (size_t at = 0; at <= line.size(); ++at) {
    for (char bad : {'\x01', '\x1f', '\x7f', '\r'}) {
      std::string doc = head + line.substr(0, at) + bad + line.substr(at) + "\n";
      INFO("byte " << int(bad) << " at " << at);
      CHECK_FALSE(read_head_fast(doc, h));
    }
    if (at == 0) continue;  // a tab where the indentation is found is libyaml's error
    std::string tabbed = head + line.substr(0, at) + "\t" + line.substr(at) + "\n";
    INFO("tab at " << at);
    CHECK(read_head_fast(tabbed, h));  // a tab inside block-scalar content is text
  }
  // Deep indentation is measured eight spaces at a time, and a tab ends it.
  std::string deep = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: |\n" +
                     std::string(19, ' ') + "line\n" + std::string(19, ' ') + "next\n";
  CHECK(read_head_fast(deep, h));
  std::string less = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: |\n" +
                     std::string(19, ' ') + "line\n" + std::string(17, ' ') + "next\n";
  CHECK_FALSE(read_head_fast(less, h));  // less indented than the first content line
}

TEST_CASE("parse_manifest_head reads kind, name and annotations", "[helm][manifests]") {
  auto h = parse_manifest_head(
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    helm.sh/hook: pre-install\n");
  CHECK(h.api_version == "v1");
  CHECK(h.kind == "ConfigMap");
  CHECK(h.name == "x");
  CHECK(h.annotations.at("helm.sh/hook") == "pre-install");
  CHECK(parse_manifest_head("# comment").kind.empty());
  CHECK_THROWS_WITH(parse_manifest_head("a:\n  b: c\n  image: x:\n"),
                    Catch::Contains("error converting YAML to JSON: yaml: line 3: mapping values are not allowed"));
}

TEST_CASE("sort_manifests orders by kind, keeps hooks apart", "[helm][manifests]") {
  std::map<std::string, std::string> files = {
      {"c/templates/b.yaml", "kind: Deployment\nmetadata:\n  name: d\n---\nkind: Service\nmetadata:\n  name: s\n"},
      {"c/templates/a.yaml", "kind: Zeta\n---\nkind: Alpha\n---\nkind: ServiceAccount\nmetadata:\n  name: sa\n"},
      {"c/templates/_helpers.tpl", "kind: Secret\n"},
      {"c/templates/empty.yaml", "  \n\n"},
      {"c/templates/hook.yaml",
       "kind: Job\nmetadata:\n  name: j\n  annotations:\n    helm.sh/hook: post-install,TEST-success\n"
       "    helm.sh/hook-weight: \"-5\"\n    helm.sh/hook-delete-policy: before-hook-creation\n"
       "---\nkind: Pod\nmetadata:\n  name: crd\n  annotations:\n    helm.sh/hook: crd-install\n"},
  };
  auto sorted = sort_manifests(files);
  std::vector<std::string> kinds;
  for (const auto& m : sorted.manifests) kinds.push_back(m.head.kind);
  CHECK(kinds == std::vector<std::string>{"ServiceAccount", "Service", "Deployment", "Alpha", "Zeta"});
  CHECK(sorted.manifests[0].source == "c/templates/a.yaml");
  REQUIRE(sorted.hooks.size() == 1);
  CHECK(sorted.hooks[0].events == std::vector<std::string>{"post-install", "test"});
  CHECK(sorted.hooks[0].weight == -5);
  CHECK(sorted.hooks[0].delete_policies == std::vector<std::string>{"before-hook-creation"});
  CHECK(sorted.log_lines == std::vector<std::string>{
                                "manifest_sorter.go:190: info: skipping unknown hook: \"crd-install\""});
  CHECK_THROWS_WITH(sort_manifests({{"c/templates/bad.yaml", "a: b: c\n"}}),
                    Catch::StartsWith("YAML parse error on c/templates/bad.yaml: error converting YAML to JSON"));
}

TEST_CASE("sort_by_kind is stable among equal kinds, known or not", "[helm][manifests]") {
  auto manifest = [](std::string kind, std::string name) {
    Manifest m;
    m.head.kind = std::move(kind);
    m.head.name = std::move(name);
    return m;
  };
  std::vector<Manifest> manifests = {manifest("Zeta", "z1"),       manifest("Service", "s1"), manifest("Alpha", "a1"),
                                     manifest("Zeta", "z2"),       manifest("Namespace", "n"), manifest("Service", "s2"),
                                     manifest("Alpha", "a2")};
  sort_by_kind(manifests);
  std::vector<std::string> names;
  for (const auto& m : manifests) names.push_back(m.head.name);
  CHECK(names == std::vector<std::string>{"n", "s1", "s2", "a1", "a2", "z1", "z2"});

  std::vector<Hook> hooks(3);
  hooks[0].kind = "Job", hooks[0].name = "j1";
  hooks[1].kind = "ConfigMap", hooks[1].name = "c";
  hooks[2].kind = "Job", hooks[2].name = "j2";
  sort_by_kind(hooks);
  names.clear();
  for (const auto& h : hooks) names.push_back(h.name);
  CHECK(names == std::vector<std::string>{"c", "j1", "j2"});
}

namespace {

bool same_head(const ManifestHead& a, const ManifestHead& b) {
  return a.api_version == b.api_version && a.kind == b.kind && a.name == b.name && a.annotations == b.annotations &&
         a.has_metadata == b.has_metadata;
}

}  // namespace

TEST_CASE("the fast head reader never accepts invalid YAML", "[helm][manifests]") {
  const std::vector<std::string> invalid = {
      "a: b: c",
      "a:\n  b: c\n d: e",
      "a: 'x",
      "a: [x",
      "a: {x: y",
      "- a\nb: c",
      "a:\n- b\nc",
      "a: \"\\q\"",
      "kind: x\n  more: y",
      "a: |\n    x\n  y\nb: c",
      "a:\tb",
      "a: b\n\tc: d",
      "a: - b",
      "image: emco-metricscollector:",
      "a: b\na b c\n",
      "a: \"x\" y",
      "a: [b, c] d",
      "a: *anchor",
      "a: !tag x",
      "? complex\n: value",
      "metadata:\n  - name: x",
  };
  for (const auto& doc : invalid) {
    INFO(doc);
    ManifestHead h;
    CHECK_FALSE(read_head_fast(doc, h));
  }
}

// Head values that YAML 1.1 does not read as text go to the full parser; words that only look
// like them (a kind "Namespace", a name "nginx") are text. Go's ParseInt (goyaml.v2) reads 0o7,
// 0B11 and 0x_1F as numbers and 1:30 is text: helm 3.17.3 sorts kinds so.
TEST_CASE("the fast head reader leaves non-string head values to the full parser", "[helm][manifests]") {
  for (std::string v : {"~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true",
                        "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "12", "-3",
                        "+0x1F", "017", "1.5", ".5", "-.inf", ".NaN", "1e3", "0b101", "0o7", "0B11", "0x_1F", "1_0"}) {
    INFO(v);
    ManifestHead h;
    CHECK_FALSE(read_head_fast("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + v + "\n", h));
  }
  for (std::string v : {"Namespace", "nginx", "yesterday", "onion", "Normal", "trueish", "offline", "v1", "n1", "y-2",
                        "1st", "1:30", "-x", "+y", ".hidden", "1.2.3", "10.0.0.1"}) {
    INFO(v);
    const std::string doc = "apiVersion: v1\nkind: " + v + "\nmetadata:\n  name: " + v + "\n";
    ManifestHead fast;
    REQUIRE(read_head_fast(doc, fast));
    CHECK(fast.kind == v);
    CHECK(same_head(fast, parse_manifest_head_slow(doc)));
  }
}

TEST_CASE("the fast head reader agrees with the full parser", "[helm][manifests]") {
  const std::vector<std::string> valid = {
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x # comment\n  annotations:\n    \"helm.sh/hook\": "
      "'pre-install'\n    a: \"q\\\"uote\"\ndata:\n  k: |\n    line\n\n    more: stuff\n  j: >-\n    folded\n",
      "kind: List\nitems:\n- a\n-   b: c\n    d: [1, \"two\", {x: y}]\n- - nested\n  - more\n-\n  key: v\n",
      "metadata:\n  labels:\n  - compact\n  - seq\n  name: nm\nkind: 'K'\n",
      "# leading comment\napiVersion: apps/v1\n\n\nkind: Deployment\nspec:\n  x: {}\n  y: []\n  z: \"\"\n",
      "kind: Secret\nmetadata:\n  name: s\n  annotations:\n    weight: \"5\"\nstringData:\n  url: http://host:80/path\n",
      // empty annotations written as a flow mapping, on the key's line or the next; the last
      // annotations key counts
      "kind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    {}\n  labels:\n    a: b\ndata:\n  k: v\n",
      "kind: ConfigMap\nmetadata:\n  annotations:\n    helm.sh/hook: pre-install\n  annotations: {} # none\n  name: c\n",
      "kind: ConfigMap\nmetadata:\n  annotations:\n    {}\n  annotations:\n    helm.sh/hook: post-install\n",
      // a repeated annotations or metadata block replaces the earlier one
      "kind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    helm.sh/hook: pre-install\n  annotations:\n    a: b\n",
      "kind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    helm.sh/hook: pre-install\nmetadata:\n  labels:\n    a: b\n",
      "kind: ConfigMap\nmetadata:\n  name: x\nmetadata:\n",
  };
  for (const auto& doc : valid) {
    INFO(doc);
    ManifestHead fast;
    REQUIRE(read_head_fast(doc, fast));
    CHECK(same_head(fast, parse_manifest_head_slow(doc)));
  }
  // Every document of helm's recorded outputs (when the corpus is present next to the repo):
  // whatever the fast reader accepts, it reads exactly as the full parser does, and it accepts most.
  std::filesystem::path corpus = std::filesystem::path(EMCO_SOURCE_DIR).parent_path() / "shared" / "charts";
  if (!std::filesystem::exists(corpus)) return;
  size_t docs = 0, fast_docs = 0;
  for (const auto& chart : std::filesystem::directory_iterator(corpus)) {
    for (const std::string variant : {"default", "custom"}) {
      std::ifstream in(chart.path() / ("expected-" + variant + ".yaml"));
      if (!in) continue;
      std::stringstream ss;
      ss << in.rdbuf();
      for (const auto& doc : split_manifests(ss.str())) {
        ++docs;
        ManifestHead fast;
        if (!read_head_fast(doc, fast)) continue;
        ++fast_docs;
        INFO(chart.path().filename().string() << "\n" << doc.substr(0, 400));
        CHECK(same_head(fast, parse_manifest_head_slow(doc)));
      }
    }
  }
  CHECK(docs > 500);
  CHECK(fast_docs * 10 >= docs * 9);
}

TEST_CASE("mutated documents: the fast reader accepts only what the full parser reads the same", "[helm][manifests]") {
  std::vector<std::string> docs;
  std::filesystem::path corpus = std::filesystem::path(EMCO_SOURCE_DIR).parent_path() / "shared" / "charts";
  std::vector<std::filesystem::path> sources;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(EMCO_SOURCE_DIR) / "tests/helm/charts"))
    if (e.path().extension() == ".expected") sources.push_back(e.path());
  if (std::filesystem::exists(corpus))
    for (const auto& chart : std::filesystem::directory_iterator(corpus))
      sources.push_back(chart.path() / "expected-default.yaml");
  for (const auto& p : sources) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    for (auto& d : split_manifests(ss.str()))
      if (d.size() < 4000) docs.push_back(d);
  }
  REQUIRE(!docs.empty());
  std::uint32_t state = 12345;
  auto rnd = [&] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  const std::string alphabet = " :-#'\"\n[]{}|>&*!?\t,x0<~.K";
  size_t accepted = 0;
  for (int it = 0; it < 20000; ++it) {
    std::string d = docs[rnd() % docs.size()];
    for (int m = 0, n = 1 + static_cast<int>(rnd() % 3); m < n; ++m) {
      size_t pos = rnd() % (d.size() + 1);
      char ch = alphabet[rnd() % alphabet.size()];
      switch (rnd() % 3) {
        case 0: if (pos < d.size()) d.erase(pos, 1); break;
        case 1: d.insert(d.begin() + static_cast<long>(pos), ch); break;
        default: if (pos < d.size()) d[pos] = ch;
      }
    }
    ManifestHead fast;
    if (!read_head_fast(d, fast)) continue;
    ++accepted;
    INFO(d);
    ManifestHead slow;
    REQUIRE_NOTHROW(slow = parse_manifest_head_slow(d));
    REQUIRE(same_head(fast, slow));
  }
  CHECK(accepted > 1000);
}

// helm checks every rendered document with sigs.k8s.io/yaml (goyaml.v2); its error text is part
// of `helm template`'s output, so ours must read the same.
TEST_CASE("rendered documents are refused with goyaml.v2's words", "[helm][manifests]") {
  CHECK(yaml_syntax_error("kind: Pod\nmetadata:\n  name: x\n") == "");
  CHECK(yaml_syntax_error("a: b: c\n") == "error converting YAML to JSON: yaml: mapping values are not allowed in this context");
  CHECK(yaml_syntax_error("kind: Pod\nmetadata:\n  name: x\n   labels: y\n") ==
        "error converting YAML to JSON: yaml: line 4: mapping values are not allowed in this context");
  CHECK(yaml_syntax_error("kind: Pod\nx: [a, b\n") ==
        "error converting YAML to JSON: yaml: line 2: did not find expected ',' or ']'");
  // an unclosed quote at the end is an error for goyaml (yaml-cpp let it pass)
  CHECK(yaml_syntax_error("kind: Pod\nname: \"x\n") ==
        "error converting YAML to JSON: yaml: line 3: found unexpected end of stream");
  // only the first document counts, as with yaml.Unmarshal
  CHECK(yaml_syntax_error("a: 1\n---\nb: [\n") == "");
  CHECK_THROWS_WITH(parse_manifest_head_slow("- a\n- b\n"), Catch::Contains("cannot unmarshal array"));
}

// What helm decodes a document's head with (sigs.k8s.io/yaml into releaseutil.SimpleHead) refuses
// more than YAML syntax. Every expected message below was produced by the real helm 3.17.3
// (`helm template` over a chart holding the document; helm prefixes "YAML parse error on PATH: ").
TEST_CASE("documents helm's head decoding refuses are refused with helm's words", "[helm][manifests]") {
  const std::string conv = "error converting YAML to JSON: ";
  const std::string json = "error unmarshaling JSON: while decoding JSON: json: ";
  const std::string meta_type =
      "struct { Name string \"json:\\\"name\\\"\"; Annotations map[string]string \"json:\\\"annotations\\\"\" }";
  const std::vector<std::pair<std::string, std::string>> refused = {
      // goyaml.v2: merges
      {"data: {x: \"1\", <<: 1}\n", conv + "yaml: map merge requires map or sequence of maps as the value"},
      {"data:\n  x: \"1\"\n  <<: 1\n", conv + "yaml: map merge requires map or sequence of maps as the value"},
      {"l: &l {a: 1}\ndata:\n  <<: [*l, 2]\n", conv + "yaml: map merge requires map or sequence of maps as the value"},
      {"s: &s [a]\ndata:\n  <<: *s\n", conv + "yaml: map merge requires map or sequence of maps as the value"},
      // goyaml.v2: collection keys, printed as Go's %#v
      {"? [a, b]\n: c\n", conv + "yaml: invalid map key: []interface {}{\"a\", \"b\"}"},
      {"{a: b}: c\n", conv + "yaml: invalid map key: map[interface {}]interface {}{\"a\":\"b\"}"},
      {"[1, 2.5, true, ~, x]: c\n", conv + "yaml: invalid map key: []interface {}{1, 2.5, true, interface {}(nil), \"x\"}"},
      {"? {b: [1], a: x, 3: y}\n: c\n",
       conv + "yaml: invalid map key: map[interface {}]interface {}{\"a\":\"x\", \"b\":[]interface {}{1}, 3:true}"},
      {"? {b: 1, 1.5: x, true: y, 2: z, ~: n, 2001-01-01: t, 0xFFFFFFFFFFFFFFFF: u}\n: c\n",
       conv + "yaml: invalid map key: map[interface {}]interface {}{interface {}(nil):false, \"2001-01-01\":\"t\", "
              "\"b\":1, 0xffffffffffffffff:\"u\", 2:\"z\", 1.5:\"x\", true:true}"},
      {"? {<<: {a: 1}, b: 2}\n: c\n", conv + "yaml: invalid map key: map[interface {}]interface {}{\"a\":1, \"b\":2}"},
      {"? [!!binary YWI=, !!float 2, 18446744073709551615, -1]\n: c\n",
       conv + "yaml: invalid map key: []interface {}{\"ab\", 2, 0xffffffffffffffff, -1}"},
      {"a: [{? [1]: 2}]\n", conv + "yaml: invalid map key: []interface {}{1}"},
      // goyaml.v2: explicit tags the text does not fit
      {"x: !!int abc\n", conv + "yaml: cannot decode !!str `abc` as a !!int"},
      {"x: !!null abc\n", conv + "yaml: cannot decode !!str `abc` as a !!null"},
      {"x: !!bool abc\n", conv + "yaml: cannot decode !!str `abc` as a !!bool"},
      {"x: !!float abc\n", conv + "yaml: cannot decode !!str `abc` as a !!float"},
      {"x: !!int 1.5\n", conv + "yaml: cannot decode !!float `1.5` as a !!int"},
      {"x: !!timestamp abc\n", conv + "yaml: cannot decode !!str `abc` as a !!timestamp"},
      {"x: !!binary \"!!\"\n", conv + "yaml: !!binary value contains invalid base64 data"},
      // goyaml.v2's errors come first in document order, before the conversion's
      {"x: !!int abc\n? [a]\n: b\n", conv + "yaml: cannot decode !!str `abc` as a !!int"},
      {"? [a]\n: b\nx: !!int abc\n", conv + "yaml: invalid map key: []interface {}{\"a\"}"},
      // sigs.k8s.io/yaml: a nil key
      {"~: x\n", conv + "unsupported map key of type: %!s(<nil>), key: <nil>, value: \"x\""},
      {"null: x\n", conv + "unsupported map key of type: %!s(<nil>), key: <nil>, value: \"x\""},
      {"? \n: x\n", conv + "unsupported map key of type: %!s(<nil>), key: <nil>, value: \"x\""},
      {"~: {a: [1, 2.0, ~]}\n",
       conv + "unsupported map key of type: %!s(<nil>), key: <nil>, value: map[interface {}]interface {}{\"a\":[]interface "
              "{}{1, 2, interface {}(nil)}}"},
      {"~: .inf\n", conv + "unsupported map key of type: %!s(<nil>), key: <nil>, value: +Inf"},
      {"x: .inf\n~: y\n", conv + "unsupported map key of type: %!s(<nil>), key: <nil>, value: true"},
      // only a nil key goyaml.v2 keeps counts: a later one or a merge replaces it
      {"~: [a]\n~: 2001-01-01\n", conv + "unsupported map key of type: %!s(<nil>), key: <nil>, value: \"2001-01-01\""},
      {"<<: {~: x}\n~: y\n", conv + "unsupported map key of type: %!s(<nil>), key: <nil>, value: true"},
      {"~: y\n<<: {~: x}\n", conv + "unsupported map key of type: %!s(<nil>), key: <nil>, value: \"x\""},
      // json.Marshal: non-finite floats, the first in key order
      {"x: .inf\n", conv + "json: unsupported value: +Inf"},
      {"x: [-.inf]\n", conv + "json: unsupported value: -Inf"},
      {"x: {a: .nan, b: .inf}\n", conv + "json: unsupported value: NaN"},
      {"b: .nan\na: -.Inf\n", conv + "json: unsupported value: -Inf"},
      {".inf\n", conv + "json: unsupported value: +Inf"},
      {"data:\n  \"<<\": {a: .inf}\n", conv + "json: unsupported value: +Inf"},
      {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: {<<: {b: 1}, c: .5}\n  d: [.inf]\n",
       conv + "json: unsupported value: +Inf"},
      // encoding/json into SimpleHead
      {"1\n", json + "cannot unmarshal number into Go value of type releaseutil.SimpleHead"},
      {"true\n", json + "cannot unmarshal bool into Go value of type releaseutil.SimpleHead"},
      {"\"x\"\n", json + "cannot unmarshal string into Go value of type releaseutil.SimpleHead"},
      {"- a\n", json + "cannot unmarshal array into Go value of type releaseutil.SimpleHead"},
      {"metadata: hello\n", json + "cannot unmarshal string into Go struct field SimpleHead.metadata of type " + meta_type},
      {"metadata: 1\n", json + "cannot unmarshal number into Go struct field SimpleHead.metadata of type " + meta_type},
      {"metadata: true\n", json + "cannot unmarshal bool into Go struct field SimpleHead.metadata of type " + meta_type},
      {"metadata: [a]\n", json + "cannot unmarshal array into Go struct field SimpleHead.metadata of type " + meta_type},
      {"kind: {a: b}\n", json + "cannot unmarshal object into Go struct field SimpleHead.kind of type string"},
      {"apiVersion: [1]\n", json + "cannot unmarshal array into Go struct field SimpleHead.apiVersion of type string"},
      {"metadata:\n  name: [a]\n", json + "cannot unmarshal array into Go struct field .metadata.name of type string"},
      {"metadata:\n  name: {a: b}\n", json + "cannot unmarshal object into Go struct field .metadata.name of type string"},
      {"metadata:\n  annotations: [a]\n",
       json + "cannot unmarshal array into Go struct field .metadata.annotations of type map[string]string"},
      {"metadata:\n  annotations: hello\n",
       json + "cannot unmarshal string into Go struct field .metadata.annotations of type map[string]string"},
      {"metadata:\n  annotations: 1\n",
       json + "cannot unmarshal number into Go struct field .metadata.annotations of type map[string]string"},
      {"metadata:\n  annotations:\n    x: {a: b}\n",
       json + "cannot unmarshal object into Go struct field .metadata.annotations of type string"},
      {"metadata:\n  annotations:\n    x: [a]\n    a: [b]\n",
       json + "cannot unmarshal array into Go struct field .metadata.annotations of type string"},
      // keys match fields case-insensitively (and the Kelvin sign and long s fold); the first
      // wrong value in sorted key order is reported
      {"KIND: [a]\nkind: {a: b}\n", json + "cannot unmarshal array into Go struct field SimpleHead.kind of type string"},
      {"kind: [a]\nmetadata: 1\n", json + "cannot unmarshal array into Go struct field SimpleHead.kind of type string"},
      {"\u212Aind: [a]\n", json + "cannot unmarshal array into Go struct field SimpleHead.kind of type string"},
      {"apiVer\u017Fion: [a]\n", json + "cannot unmarshal array into Go struct field SimpleHead.apiVersion of type string"},
      {"metadata:\n  annotation\u017F: 1\n",
       json + "cannot unmarshal number into Go struct field .metadata.annotations of type map[string]string"},
  };
  for (const auto& [doc, message] : refused) {
    INFO(doc);
    CHECK_THROWS_WITH(parse_manifest_head(doc), message);
  }
  CHECK_THROWS_WITH(sort_manifests({{"c/templates/t.yaml", "kind: Pod\n---\nx: .inf\n"}}),
                    "YAML parse error on c/templates/t.yaml: " + conv + "json: unsupported value: +Inf");
}

TEST_CASE("documents helm's head decoding accepts are read as helm reads them", "[helm][manifests]") {
  struct Case {
    std::string doc, api_version, kind, name;
    bool hook;  // helm 3.17.3 lists the document among hooks
  };
  const std::vector<Case> accepted = {
      // scalars into string fields become Go strings; null is ""
      {"kind: .inf\napiVersion: 1\nmetadata:\n  name: 1.5\n", "1", "+Inf", "1.5", false},
      {"kind: 123456789\napiVersion: true\nmetadata:\n  name: ~\n", "true", "123456789", "", false},
      {"kind: 0o7\napiVersion: 0x_1F\nmetadata:\n  name: 1:30\n", "31", "7", "1:30", false},
      {"kind: !!float 3\napiVersion: !!str 12\nmetadata:\n  name: !!binary UG9k\n", "12", "3", "Pod", false},
      {"kind: 2001-01-01\napiVersion: !!timestamp 2001-01-01\n", "2001-01-01", "2001-01-01", "", false},
      {"metadata: ~\nkind: Pod\n", "", "Pod", "", false},
      {"x: !!map abc\ny: !!int [a]\nz: !!float 1\nkind: Pod\n", "", "Pod", "", false},
      // merges and quoted "<<"
      {"\"<<\": 1\nkind: Pod\n", "", "Pod", "", false},
      {"base: &b {kind: Pod, metadata: {name: m}}\n<<: *b\n", "", "Pod", "m", false},
      {"base: &b\n  metadata:\n    annotations:\n      helm.sh/hook: post-install\n<<: *b\nkind: Pod\n", "", "Pod", "", true},
      {"kind: Pod\nmetadata: &m\n  annotations:\n    helm.sh/hook: pre-install\n  <<: {annotations: {x: y}}\n", "", "Pod", "",
       false},
      // a nil key in a map goyaml.v2 then replaces is never seen by sigs.k8s.io/yaml
      {"labels:\n  ~: 1\nlabels: 2\nkind: Pod\n", "", "Pod", "", false},
      {"x: {~: 1}\n<<: {x: 2}\n", "", "", "", false},
      // case variants: later in sorted key order wins, objects fill the same struct and map
      {"Kind: Secret\napiVersion: v1\n", "v1", "Secret", "", false},
      {"Kind: Secret\nkind: ConfigMap\n", "", "ConfigMap", "", false},
      {"Metadata:\n  name: a\nmetadata:\n  Annotations:\n    helm.sh/hook: pre-install\nkind: Pod\n", "", "Pod", "a", true},
      {"Metadata:\n  annotations:\n    helm.sh/hook: pre-install\nmetadata: ~\nkind: Pod\n", "", "Pod", "", false},
      {"METADATA:\n  ANNOTATIONS:\n    helm.sh/hook: pre-install\n  annotations:\n    x: y\nkind: Pod\n", "", "Pod", "", true},
      {"metadata:\n  annotations:\n    helm.sh/hook: pre-install\nMETADATA: ~\nkind: Pod\n", "", "Pod", "", true},
      {"metadata:\n  annotations:\n    helm.sh/hook: pre-install\n  ANNOTATIONS: ~\nkind: Pod\n", "", "Pod", "", true},
      {"metadata:\n  annotations:\n    helm.sh/hook: pre-install\n  ANNOTATIONS: {}\nkind: Pod\n", "", "Pod", "", true},
      {"metadata:\n  annotation\u017F:\n    helm.sh/hook: pre-install\nkind: Pod\n", "", "Pod", "", true},
      // U+0130 and U+0131 do not fold to i for helm 3.17.3
      {"k\u0130nd: 1\n", "", "", "", false},
      {"k\u0131nd: [a]\n", "", "", "", false},
      {"kind: Pod\nmetadata:\n  annotations:\n    helm.sh/hook: !!str pre-install\n    x: ~\n", "", "Pod", "", true},
  };
  for (const auto& c : accepted) {
    INFO(c.doc);
    ManifestHead head;
    REQUIRE_NOTHROW(head = parse_manifest_head(c.doc));
    CHECK(head.api_version == c.api_version);
    CHECK(head.kind == c.kind);
    CHECK(head.name == c.name);
    SortedManifests sorted = sort_manifests({{"c/templates/t.yaml", c.doc}});
    CHECK(sorted.hooks.size() == (c.hook ? 1u : 0u));
  }
  // annotation values of any scalar type are read as text
  ManifestHead head = parse_manifest_head(
      "kind: Pod\nmetadata:\n  annotations:\n    helm.sh/hook: pre-install\n    helm.sh/hook-weight: 1e1\n"
      "    a: 123456789\n    b: yes\n    c: ~\n");
  CHECK(head.annotations == std::map<std::string, std::string>{{"helm.sh/hook", "pre-install"},
                                                               {"helm.sh/hook-weight", "10"},
                                                               {"a", "123456789"},
                                                               {"b", "true"},
                                                               {"c", ""}});
}
