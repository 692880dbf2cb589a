#pragma once
// Helm's post-render manifest handling (pkg/releaseutil, v3.17): splitting rendered
// templates into YAML documents, reading each document's head, separating hooks, and
// sorting by Helm's install order. Pure functions over strings; no template engine.

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace emco::helm {

// Helm's InstallOrder (kinds earlier in the list install first).
const std::vector<std::string>& install_order();

// Splits a rendered template as Helm's SplitManifests does: separator regex
// `(?:^|\s*\n)---\s*` over the trimmed text; empty pieces dropped, others trimmed.
std::vector<std::string> split_manifests(std::string_view text);

// The parts of a document Helm looks at (SimpleHead).
struct ManifestHead {
  std::string api_version;
  std::string kind;
  std::string name;
  bool has_metadata = false;
  std::map<std::string, std::string> annotations;
};

// Parses one document's head. Throws emco::Error(invalid) with Helm's wording for YAML
// that does not parse, e.g. "error converting YAML to JSON: yaml: line 21: mapping values
// are not allowed in this context".
ManifestHead parse_manifest_head(const std::string& doc);
// parse_manifest_head first tries read_head_fast, a quick reader of the plain block-YAML
// subset templates produce (true = the document is valid YAML and `head` is filled; false =
// not sure), and otherwise parse_manifest_head_slow, which parses with core/yaml. Exposed so
// tests can hold the two to the same answers.
bool read_head_fast(const std::string& doc, ManifestHead& head);
ManifestHead parse_manifest_head_slow(const std::string& doc);

// goyaml.v2's wording for the first syntax error in `text` ("error converting YAML to JSON:
// yaml: line 1: did not find expected node content"), or "" when goyaml.v2 would parse it.
std::string yaml_syntax_error(const std::string& text);

struct Manifest {
  std::string source;   // template path, e.g. "chart/templates/deployment.yaml"
  std::string content;  // the document text, trimmed, as rendered
  ManifestHead head;
};

struct Hook {
  std::string source;
  std::string content;
  std::string kind;
  std::string name;
  std::vector<std::string> events;  // lower-case; "test-success" is reported as "test"
  int weight = 0;
  std::vector<std::string> delete_policies;
};

struct SortedManifests {
  std::vector<Manifest> manifests;  // install order (stable by kind)
  std::vector<Hook> hooks;          // also stable-sorted by kind, as Helm does
  // Lines Helm logs while sorting, e.g. `manifest_sorter.go:190: info: skipping unknown hook: "crd-install"`.
  std::vector<std::string> log_lines;
};

// Helm's SortManifests: files in path order, partials (`_*`) and blank files skipped,
// documents in file order, then a stable sort by kind. Hooks with an unknown event are
// dropped (and logged). Throws emco::Error(failed) "YAML parse error on PATH: ...".
SortedManifests sort_manifests(const std::map<std::string, std::string>& files);

// Stable sort by Helm's install order; unknown kinds last, alphabetically among themselves.
void sort_by_kind(std::vector<Manifest>& manifests);
void sort_by_kind(std::vector<Hook>& hooks);

}  // namespace emco::helm
