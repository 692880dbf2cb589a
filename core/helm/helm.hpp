#pragma once
// emco's in-process Helm: `helm template` (Helm v3.17.3, client-only) without a helm binary.
//
//   Chart chart = load_chart("path/to/chart-or.tgz");        // core/helm/chart.hpp
//   RenderOptions opts;  opts.release_name = "rel";  opts.namespace_name = "ns";
//   opts.values = user_values(...);                           // -f files <- --set
//   RenderResult r = render(chart, opts);
//   std::cout << template_output(r);                          // byte-identical to helm template
//
// render() follows Helm's install path: dependencies processed (condition, tags, alias,
// import-values), values coalesced and checked against every values.schema.json, every
// template of the chart and its enabled subcharts parsed into one engine in Helm's order,
// each non-partial template executed with its chart's dot (.Values scoped per subchart,
// .Release, .Chart, .Capabilities (Kubernetes v1.32.0, Helm v3.17.3, Helm's built-in API
// versions), .Template, .Files, .Subcharts), NOTES.txt rendered but kept apart, documents
// split, hooks separated and everything sorted in Helm's install order.
//
// Failures throw emco::Error. A RenderFailure is an error of the rendering phase (template
// parse/execution, YAML parse of a rendered document, kubeVersion mismatch): helm appends
// "Use --debug flag to render out invalid YAML" to those, and template_main() does too.
// Messages are Helm's ("execution error at (chart/templates/x.yaml:44:23): message",
// "YAML parse error on chart/templates/x.yaml: error converting YAML to JSON: ...",
// "values don't meet the specifications of the schema(s) in the following chart(s): ...").

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/helm/chart.hpp"
#include "core/template/value.hpp"
#include "core/util/error.hpp"

namespace emco::helm {

class RenderFailure : public Error {
public:
  using Error::Error;
};

struct RenderOptions {
  std::string release_name = "release-name";
  std::string namespace_name = "default";
  tmpl::Value values;                   // user values (a map or null), see user_values()
  bool include_crds = false;            // put crds/ files into the output (helm --include-crds)
  bool skip_schema_validation = false;
  bool sub_notes = false;               // collect subcharts' NOTES.txt too
  std::string kube_version = "v1.32.0";
  std::vector<std::string> extra_api_versions;  // helm --api-versions
  unsigned long long random_seed = 0;   // 0 = the kernel's randomness (tests may fix it)
  // The process exits after this render (`emco template`): the template engine and the chart
  // are left for the exit to drop instead of being destroyed, whether the render succeeds or a
  // template fails to parse or execute (never destroyed: they stay reachable).
  bool leave_to_exit = false;
  // Called with each line helm would log to stderr, when it happens (also kept in
  // RenderResult::warnings when rendering succeeds).
  std::function<void(const std::string&)> log;
};

struct RenderedManifest {
  std::string source;   // "chart/templates/x.yaml", "chart/charts/sub/templates/y.yaml"
  std::string content;  // the document text as rendered, trimmed
  std::string api_version;
  std::string kind;
  std::string name;
};

struct RenderedHook {
  std::string source;
  std::string content;
  std::string kind;
  std::string name;
  std::vector<std::string> events;  // "pre-install", "post-install", "test", ...
  int weight = 0;
  std::vector<std::string> delete_policies;
};

struct RenderedCrd {
  std::string source;  // "chart/crds/x.yaml"
  std::string content;
};

struct RenderResult {
  std::vector<RenderedManifest> manifests;  // install order; CRDs from templates stay here
  std::vector<RenderedHook> hooks;          // sorted by kind as helm prints them
  std::vector<RenderedCrd> crds;            // with include_crds: files of crds/ directories (chart, then subcharts)
  std::string notes;                        // rendered NOTES.txt of the chart ("" if none)
  std::vector<std::string> warnings;        // what helm logs to stderr while rendering
  bool include_crds = false;                // copied from the options (affects template_output)
};

// Renders `chart` (a copy is processed; the argument is not modified).
RenderResult render(const Chart& chart, const RenderOptions& options);
// The same, consuming the chart (no copy of its files). The values the templates see share
// tables with the chart's values: a chart whose values are shared with another (a Chart copied
// without own_values) must not be passed.
RenderResult render(Chart&& chart, const RenderOptions& options);

// Exactly what `helm template` prints on stdout for this result (CRDs only when
// include_crds, then manifests, then hooks, each as "---\n# Source: PATH\nDOC\n").
std::string template_output(const RenderResult& result);

// The user-values pipeline of helm's CLI: -f files merged in order, then --set, then
// --set-string. Files are read from disk; "-" is not supported.
tmpl::Value user_values(const std::vector<std::string>& value_files, const std::vector<std::string>& set,
                        const std::vector<std::string>& set_string);

// Arguments of `emco template`.
struct TemplateArgs {
  std::string chart;                     // directory or .tgz
  std::vector<std::string> value_files;  // -f, in order
  std::vector<std::string> set;          // --set, in order
  std::vector<std::string> set_string;   // --set-string, in order
  std::string namespace_name = "default";
  std::string release_name = "release-name";
  bool include_crds = false;
  bool skip_tests = false;
  bool leave_to_exit = false;            // the process exits next (RenderOptions::leave_to_exit)
};

// Does all of `emco template`: loads, renders, prints helm's stdout to `out`. Warnings and
// errors go to `err` in helm's words ("Error: ..."). Returns the exit status (0 or 1).
int template_main(const TemplateArgs& args, std::ostream& out, std::ostream& err);

}  // namespace emco::helm
