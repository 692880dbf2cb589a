#include "core/helm/helm.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <ostream>

#include "core/helm/manifests.hpp"
#include "core/helm/schema.hpp"
#include "core/helm/values.hpp"
#include "core/template/engine.hpp"
#include "core/util/allocator.hpp"
#include "core/util/base64.hpp"
#include "core/util/file_io.hpp"
#include "core/util/semver.hpp"
#include "core/util/strings.hpp"

namespace emco::helm {
using tmpl::List;
using tmpl::Map;
using tmpl::Value;

namespace {

constexpr const char* k_helm_version = "v3.17.3";
constexpr const char* k_helm_commit = "e4da49785aa6e6ee2b86efd5dd9e43400318262b";
constexpr const char* k_go_version = "go1.23.7";

// Helm's chartutil.DefaultVersionSet: every group/version of client-go's scheme (Kubernetes
// 1.32) plus apiextensions; no kinds and no third-party groups.
const std::vector<std::string>& default_api_versions() {
  static const std::vector<std::string> v = {
      "v1",
      "admissionregistration.k8s.io/v1",
      "admissionregistration.k8s.io/v1alpha1",
      "admissionregistration.k8s.io/v1beta1",
      "internal.apiserver.k8s.io/v1alpha1",
      "apps/v1",
      "apps/v1beta1",
      "apps/v1beta2",
      "authentication.k8s.io/v1",
      "authentication.k8s.io/v1alpha1",
      "authentication.k8s.io/v1beta1",
      "authorization.k8s.io/v1",
      "authorization.k8s.io/v1beta1",
      "autoscaling/v1",
      "autoscaling/v2",
      "autoscaling/v2beta1",
      "autoscaling/v2beta2",
      "batch/v1",
      "batch/v1beta1",
      "certificates.k8s.io/v1",
      "certificates.k8s.io/v1alpha1",
      "certificates.k8s.io/v1beta1",
      "coordination.k8s.io/v1",
      "coordination.k8s.io/v1alpha2",
      "coordination.k8s.io/v1beta1",
      "discovery.k8s.io/v1",
      "discovery.k8s.io/v1beta1",
      "events.k8s.io/v1",
      "events.k8s.io/v1beta1",
      "extensions/v1beta1",
      "flowcontrol.apiserver.k8s.io/v1",
      "flowcontrol.apiserver.k8s.io/v1beta1",
      "flowcontrol.apiserver.k8s.io/v1beta2",
      "flowcontrol.apiserver.k8s.io/v1beta3",
      "networking.k8s.io/v1",
      "networking.k8s.io/v1alpha1",
      "networking.k8s.io/v1beta1",
      "node.k8s.io/v1",
      "node.k8s.io/v1alpha1",
      "node.k8s.io/v1beta1",
      "policy/v1",
      "policy/v1beta1",
      "rbac.authorization.k8s.io/v1",
      "rbac.authorization.k8s.io/v1alpha1",
      "rbac.authorization.k8s.io/v1beta1",
      "resource.k8s.io/v1alpha3",
      "resource.k8s.io/v1beta1",
      "scheduling.k8s.io/v1",
      "scheduling.k8s.io/v1alpha1",
      "scheduling.k8s.io/v1beta1",
      "storage.k8s.io/v1",
      "storage.k8s.io/v1alpha1",
      "storage.k8s.io/v1beta1",
      "storagemigration.k8s.io/v1alpha1",
      "apiextensions.k8s.io/v1",
      "apiextensions.k8s.io/v1beta1",
  };
  return v;
}

// gobwas/glob (what .Files.Glob uses) with '/' as separator, translated to RE2:
// * and ? stay inside one path segment, ** crosses segments, [..] / [!..] classes, {a,b}.
std::string glob_to_regex(std::string_view g) {
  std::string re = "^";
  int braces = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    char c = g[i];
    switch (c) {
      case '*':
        if (i + 1 < g.size() && g[i + 1] == '*') {
          re += ".*";
          ++i;
        } else {
          re += "[^/]*";
        }
        break;
      case '?':
        re += "[^/]";
        break;
      case '[': {
        size_t j = i + 1;
        std::string cls = "[";
        if (j < g.size() && g[j] == '!') {
          cls += '^';
          ++j;
        }
        for (; j < g.size() && g[j] != ']'; ++j) {
          if (g[j] == '\\' || g[j] == '[' || g[j] == '^') cls += '\\';
          cls += g[j];
        }
        if (j >= g.size()) fail(ErrorKind::invalid, "unexpected end of input in glob '" + std::string(g) + "'");
        re += cls + "]";
        i = j;
        break;
      }
      case '{':
        ++braces;
        re += "(?:";
        break;
      case '}':
        if (braces > 0) {
          --braces;
          re += ")";
        } else {
          re += "\\}";
        }
        break;
      case ',':
        re += braces > 0 ? "|" : ",";
        break;
      case '\\':
        if (i + 1 < g.size()) {
          ++i;
          re += RE2::QuoteMeta(std::string(1, g[i]));
        }
        break;
      default:
        re += RE2::QuoteMeta(std::string(1, c));
    }
  }
  if (braces > 0) fail(ErrorKind::invalid, "unexpected end of input in glob '" + std::string(g) + "'");
  return re + "$";
}

// Helm's .Files: the chart's non-template files, keyed by path. The files are the Chart's (copying
// them per chart was a tenth of loading a chart with large CRDs): the Chart outlives every value
// made while rendering it. A chart directory's are read when first asked for (ChartFile::contents).
using FileViews = std::map<std::string, const ChartFile*>;
class FilesObject : public tmpl::Object {
public:
  explicit FilesObject(std::shared_ptr<const FileViews> files) : m_files(std::move(files)) {}

  std::string type_name() const override { return "engine.files"; }
  bool has_method(std::string_view name) const override {
    return name == "Get" || name == "GetBytes" || name == "Glob" || name == "Lines" || name == "AsConfig" ||
           name == "AsSecrets";
  }
  Value call_method(std::string_view name, const std::vector<Value>& args) const override {
    auto want = [&](size_t n) {
      if (args.size() != n)
        fail(ErrorKind::failed, "wrong number of args for " + std::string(name) + ": want " + std::to_string(n) +
                                    " got " + std::to_string(args.size()));
    };
    auto str_arg = [&]() -> std::string {
      if (!args[0].is_string())
        fail(ErrorKind::failed, "wrong type for value; expected string; got " + args[0].go_type());
      return args[0].as_string();
    };
    if (name == "Get" || name == "GetBytes") {
      want(1);
      auto it = m_files->find(str_arg());
      return Value(it == m_files->end() ? std::string() : it->second->contents());
    }
    if (name == "Glob") {
      want(1);
      // gobwas/glob; Helm matches everything when the pattern does not compile.
      std::string regex;
      try {
        regex = glob_to_regex(str_arg());
      } catch (const Error&) {
        regex = ".*";
      }
      RE2 re(regex, RE2::Quiet);
      auto out = std::make_shared<FileViews>();
      for (const auto& [k, v] : *m_files)
        if (!re.ok() || RE2::FullMatch(k, re)) out->emplace(k, v);
      return Value(std::shared_ptr<const tmpl::Object>(std::make_shared<FilesObject>(std::move(out))));
    }
    if (name == "Lines") {
      want(1);
      auto it = m_files->find(str_arg());
      List lines;
      if (it == m_files->end() || it->second->contents().empty()) return Value(std::move(lines));
      std::string s(it->second->contents());
      if (s.back() == '\n') s.pop_back();
      for (auto& l : split(s, '\n')) lines.push_back(Value(std::move(l)));
      return Value(std::move(lines));
    }
    if (name == "AsConfig" || name == "AsSecrets") {
      want(0);
      Map m;
      for (const auto& [k, v] : *m_files) {
        auto base = k.substr(k.rfind('/') == std::string::npos ? 0 : k.rfind('/') + 1);
        m[base] = Value(name == "AsConfig" ? v->contents() : base64_encode(v->contents()));
      }
      std::string y = tmpl::to_yaml(Value(std::move(m)));
      if (!y.empty() && y.back() == '\n') y.pop_back();
      return Value(std::move(y));
    }
    return Object::call_method(name, args);
  }
  std::optional<Value> data() const override {
    Map m;
    for (const auto& [k, v] : *m_files) m[k] = Value(v->contents());
    return Value(std::move(m));
  }

private:
  std::shared_ptr<const FileViews> m_files;
};

class KubeVersionObject : public tmpl::Object {
public:
  KubeVersionObject(std::string version, std::string major, std::string minor)
      : m_version(std::move(version)), m_major(std::move(major)), m_minor(std::move(minor)) {}
  std::string type_name() const override { return "chartutil.KubeVersion"; }
  std::optional<Value> field(std::string_view name) const override {
    if (name == "Version") return Value(m_version);
    if (name == "Major") return Value(m_major);
    if (name == "Minor") return Value(m_minor);
    return std::nullopt;
  }
  bool has_method(std::string_view name) const override { return name == "GitVersion" || name == "String"; }
  Value call_method(std::string_view name, const std::vector<Value>& args) const override {
    if (!args.empty())
      fail(ErrorKind::failed, "wrong number of args for " + std::string(name) + ": want 0 got " +
                                  std::to_string(args.size()));
    return Value(m_version);
  }
  std::optional<Value> data() const override { return Value(m_version); }

private:
  std::string m_version, m_major, m_minor;
};

class VersionSetObject : public tmpl::Object {
public:
  explicit VersionSetObject(std::vector<std::string> versions) : m_versions(std::move(versions)) {}
  std::string type_name() const override { return "chartutil.VersionSet"; }
  bool has_method(std::string_view name) const override { return name == "Has"; }
  Value call_method(std::string_view name, const std::vector<Value>& args) const override {
    if (name != "Has") return Object::call_method(name, args);
    if (args.size() != 1)
      fail(ErrorKind::failed, "wrong number of args for Has: want 1 got " + std::to_string(args.size()));
    if (!args[0].is_string())
      fail(ErrorKind::failed, "wrong type for value; expected string; got " + args[0].go_type());
    return Value(std::find(m_versions.begin(), m_versions.end(), args[0].as_string()) != m_versions.end());
  }
  std::optional<Value> data() const override {
    List l;
    for (const auto& v : m_versions) l.push_back(Value(v));
    return Value(std::move(l));
  }

private:
  std::vector<std::string> m_versions;
};

Value capabilities_value(const RenderOptions& opts) {
  auto sv = semver::parse_version(opts.kube_version);
  if (!sv) fail(ErrorKind::invalid, "invalid kube version '" + opts.kube_version + "'");
  auto kube = std::make_shared<KubeVersionObject>(
      "v" + std::to_string(sv->major) + "." + std::to_string(sv->minor) + "." + std::to_string(sv->patch),
      std::to_string(sv->major), std::to_string(sv->minor));
  std::vector<std::string> apis = default_api_versions();
  apis.insert(apis.end(), opts.extra_api_versions.begin(), opts.extra_api_versions.end());
  return Value(Map{
      {"KubeVersion", Value(std::shared_ptr<const tmpl::Object>(kube))},
      {"APIVersions", Value(std::shared_ptr<const tmpl::Object>(std::make_shared<VersionSetObject>(apis)))},
      {"HelmVersion", Value(Map{{"Version", k_helm_version},
                                {"GitCommit", k_helm_commit},
                                {"GitTreeState", "clean"},
                                {"GoVersion", k_go_version}})},
  });
}

struct Renderable {
  const std::string* text = nullptr;
  Value vals;  // the chart's shared top-level map (Go mutates .Template into it)
  std::string base_path;
};

std::string chart_path_join(const std::string& a, const std::string& b) { return a.empty() ? b : a + "/" + b; }

// Helm's recAllTpls: builds each chart's dot and collects its templates under full names.
Value collect_templates(const Chart& c, const std::string& full_path, bool is_root, const Value& parent,
                        std::map<std::string, Renderable>& out) {
  Map subcharts_map;
  Value subcharts(std::move(subcharts_map));
  auto files = std::make_shared<FileViews>();
  for (const auto& f : c.files) (*files)[f.name] = &f;
  Value values;
  if (is_root) {
    const Value* v = parent.find("Values");
    values = v ? *v : Value(Map{});
  } else {
    const Value* pv = parent.find("Values");
    const Value* table = pv ? pv->find(c.name()) : nullptr;
    values = table && table->is_map() ? *table : Value(Map{});
  }
  Value next(Map{
      {"Chart", metadata_value(c.metadata, is_root)},
      {"Files", Value(std::shared_ptr<const tmpl::Object>(std::make_shared<FilesObject>(files)))},
      {"Release", parent.find("Release") ? *parent.find("Release") : Value()},
      {"Capabilities", parent.find("Capabilities") ? *parent.find("Capabilities") : Value()},
      {"Values", values},
      {"Subcharts", subcharts},
  });
  for (const auto& sub : c.dependencies)
    subcharts.mutable_map()[sub.name()] =
        collect_templates(sub, full_path + "/charts/" + sub.name(), false, next, out);
  for (const auto& t : c.templates) {
    if (c.is_library()) {
      auto base = t.name.substr(t.name.rfind('/') + 1);
      if (!starts_with(base, "_")) continue;
    }
    out[chart_path_join(full_path, t.name)] = Renderable{&t.contents(), next, full_path + "/templates"};
  }
  return next;
}

// Helm's sortTemplates: deepest paths first, then reverse lexical order.
std::vector<std::string> template_order(const std::map<std::string, Renderable>& tpls) {
  // The map's keys taken in reverse are already in reverse lexical order, so a stable sort by
  // depth alone finishes the job, each depth counted once rather than at every comparison.
  std::vector<std::pair<std::ptrdiff_t, const std::string*>> by_depth;
  by_depth.reserve(tpls.size());
  for (auto it = tpls.rbegin(); it != tpls.rend(); ++it)
    by_depth.emplace_back(std::count(it->first.begin(), it->first.end(), '/'), &it->first);
  std::stable_sort(by_depth.begin(), by_depth.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> keys;
  keys.reserve(by_depth.size());
  for (const auto& entry : by_depth) keys.push_back(*entry.second);
  return keys;
}

// Helm's cleanupParseError.
std::string parse_error_message(const std::string& filename, const std::string& msg) {
  std::vector<std::string> tokens;
  size_t start = 0;
  for (;;) {
    auto p = msg.find(": ", start);
    tokens.push_back(msg.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) break;
    start = p + 2;
  }
  if (tokens.size() == 1) return "parse error in (" + filename + "): " + msg;
  return "parse error at (" + tokens[1] + "): " + tokens.back();
}

// Helm's cleanupExecError: `fail`/`required` messages get Helm's "execution error at (...)".
std::string exec_error_message(const std::string& filename, const std::string& msg) {
  if (!starts_with(msg, "template: ")) return msg;
  auto first = msg.find(": ");
  auto second = msg.find(": ", first + 2);
  if (second == std::string::npos) return "execution error in (" + filename + "): " + msg;
  std::string location = msg.substr(first + 2, second - first - 2);
  std::string rest = msg.substr(second + 2);
  size_t best = std::string::npos;
  size_t skip = 0;
  for (const char* marker : {"error calling fail: ", "error calling required: "}) {
    auto p = rest.find(marker);
    if (p != std::string::npos && (best == std::string::npos || p < best)) {
      best = p;
      skip = std::char_traits<char>::length(marker);
    }
  }
  if (best == std::string::npos) return msg;
  return "execution error at (" + location + "): " + rest.substr(best + skip);
}

// Moves the CRD files' contents out of `c` (called last: nothing reads them after).
void collect_crds(Chart& c, const std::string& full_path, std::vector<RenderedCrd>& out) {
  for (auto& f : c.files) {
    if (!is_crd_file(f.name)) continue;
    if (f.deferred) out.push_back({full_path + "/" + f.name, f.contents()});
    else out.push_back({full_path + "/" + f.name, std::move(f.data)});
  }
  for (auto& sub : c.dependencies) collect_crds(sub, full_path + "/charts/" + sub.name(), out);
}

// Helm's check: at most 53 characters matching ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$,
// i.e. dot-separated labels of lowercase letters, digits and '-' that start and end with a letter or
// digit. Tested here by hand: compiling the pattern was 87K instructions of every `emco template`.
bool valid_release_name(std::string_view name) {
  if (name.empty() || name.size() > 53) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  for (std::size_t start = 0; start <= name.size();) {
    const std::size_t end = std::min(name.find('.', start), name.size());
    if (end == start || !alnum(name[start]) || !alnum(name[end - 1])) return false;
    for (std::size_t i = start; i < end; ++i)
      if (!alnum(name[i]) && name[i] != '-') return false;
    start = end + 1;
  }
  return true;
}

// Keeps a render's engine and chart until the exit, reachable (no leak to LeakSanitizer) and never
// destroyed: freeing their parse trees and files piece by piece was 2.5% of `emco template` of a
// small chart, memory the exit drops whole.
void leave_to_exit(std::unique_ptr<tmpl::Engine> engine, Chart chart) {
  struct Left {
    std::unique_ptr<tmpl::Engine> engine;
    Chart chart;
  };
  static auto& kept = *new std::vector<Left>;
  kept.push_back({std::move(engine), std::move(chart)});
}

}  // namespace

RenderResult render(const Chart& chart, const RenderOptions& opts) {
  // The copy's values are its own: the values the templates see share tables with the chart's,
  // and a template's `set` must not reach the caller's chart.
  Chart copy(chart);
  own_values(copy);
  return render(std::move(copy), opts);
}

RenderResult render(Chart&& input, const RenderOptions& opts) {
  prefer_huge_pages_for_heap();
  RenderResult result;
  result.include_crds = opts.include_crds;
  if (!valid_release_name(opts.release_name))
    fail(ErrorKind::invalid,
         "release name \"" + opts.release_name +
             "\": invalid release name, must match regex ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ "
             "and the length must not be longer than 53");
  if (!input.metadata.type.empty() && input.metadata.type != "application")
    fail(ErrorKind::invalid, input.metadata.type + " charts are not installable");
  {
    std::vector<std::string> missing;
    for (const auto& req : input.metadata.dependencies) {
      bool found = false;
      for (const auto& d : input.dependencies) found = found || d.name() == req.name;
      if (!found) missing.push_back(req.name);
    }
    if (!missing.empty())
      fail(ErrorKind::invalid,
           "An error occurred while checking for chart dependencies. You may need to run `helm dependency build` to "
           "fetch missing dependencies: found in Chart.yaml, but missing in charts/ directory: " +
               join(missing, ", "));
  }

  auto note = [&](const std::string& line) {
    result.warnings.push_back(line);
    if (opts.log) opts.log(line);
  };
  Chart chart = std::move(input);
  // A copy: the values the templates see share tables with it, and with the chart's values
  // (which this render owns and nothing reads after it).
  Value user = opts.values.is_map() ? opts.values.deep_copy() : Value(Map{});
  process_dependencies(chart, user, note);

  Value values = coalesce_values(chart, user, false, note);
  if (!opts.skip_schema_validation) {
    std::string problems = validate_chart_schemas(chart, values);
    if (!problems.empty())
      fail(ErrorKind::invalid,
           "values don't meet the specifications of the schema(s) in the following chart(s):\n" + problems);
  }

  if (!chart.metadata.kube_version.empty() && !semver::satisfies(chart.metadata.kube_version, opts.kube_version))
    throw RenderFailure(ErrorKind::invalid, "chart requires kubeVersion: " + chart.metadata.kube_version +
                                                " which is incompatible with Kubernetes " + opts.kube_version);

  Value top(Map{
      {"Values", values},
      {"Release", Value(Map{{"Name", opts.release_name},
                            {"Namespace", opts.namespace_name},
                            {"Revision", 1},
                            {"Service", "Helm"},
                            {"IsUpgrade", false},
                            {"IsInstall", true}})},
      {"Capabilities", capabilities_value(opts)},
  });
  std::map<std::string, Renderable> tpls;
  collect_templates(chart, chart.name(), true, top, tpls);

  tmpl::Options eopts;
  eopts.helm_functions = true;
  eopts.missingkey_zero = true;
  eopts.random_seed = opts.random_seed;
  auto engine_owner = std::make_unique<tmpl::Engine>(eopts);
  tmpl::Engine& engine = *engine_owner;
  auto order = template_order(tpls);
  for (const auto& name : order) {
    try {
      // The engine keeps the chart's text, not a copy (1.7 MB of kube-prometheus-stack's heap):
      // `chart` outlives `engine`, destroyed after it or left to the exit with it.
      engine.add(name, std::shared_ptr<const std::string>(std::shared_ptr<const std::string>(), tpls[name].text));
    } catch (const Error& e) {
      if (opts.leave_to_exit) leave_to_exit(std::move(engine_owner), std::move(chart));
      throw RenderFailure(ErrorKind::invalid, parse_error_message(name, e.message()));
    }
  }
  std::map<std::string, std::string> rendered;
  for (const auto& name : order) {
    auto base = name.substr(name.rfind('/') + 1);
    if (starts_with(base, "_")) continue;
    Renderable& r = tpls[name];
    r.vals.mutable_map()["Template"] = Value(Map{{"Name", name}, {"BasePath", r.base_path}});
    try {
      rendered[name] = engine.execute(name, r.vals);
    } catch (const Error& e) {
      // A failed render's engine and chart are left to the exit as a finished one's are (a
      // chart whose templates fail by design, as tempo-distributed's default values do, freed
      // them piece by piece).
      if (opts.leave_to_exit) leave_to_exit(std::move(engine_owner), std::move(chart));
      throw RenderFailure(ErrorKind::failed, exec_error_message(name, e.message()));
    }
  }

  const std::string root_notes = chart.name() + "/templates/NOTES.txt";
  for (auto it = rendered.begin(); it != rendered.end();) {
    if (ends_with(it->first, "NOTES.txt")) {
      if (opts.sub_notes || it->first == root_notes) {
        if (!result.notes.empty()) result.notes += "\n";
        result.notes += it->second;
      }
      it = rendered.erase(it);
    } else {
      ++it;
    }
  }

  SortedManifests sorted;
  try {
    sorted = sort_manifests(rendered);
  } catch (const Error& e) {
    throw RenderFailure(ErrorKind::invalid, e.message());
  }
  for (const auto& line : sorted.log_lines) note(line);
  for (auto& m : sorted.manifests)
    result.manifests.push_back({std::move(m.source), std::move(m.content), std::move(m.head.api_version),
                                std::move(m.head.kind), std::move(m.head.name)});
  for (auto& h : sorted.hooks)
    result.hooks.push_back({std::move(h.source), std::move(h.content), std::move(h.kind), std::move(h.name),
                            std::move(h.events), h.weight, std::move(h.delete_policies)});
  if (opts.include_crds) collect_crds(chart, chart.name(), result.crds);
  if (opts.leave_to_exit) leave_to_exit(std::move(engine_owner), std::move(chart));
  return result;
}

std::string template_output(const RenderResult& r) {
  // helm: the release manifest (CRDs, then manifests) trimmed plus "\n", then each hook.
  constexpr std::string_view k_head = "---\n# Source: ";
  std::size_t size = 1;
  auto measure = [&size, &k_head](const std::string& source, const std::string& content) {
    size += k_head.size() + source.size() + content.size() + 2;
  };
  if (r.include_crds)
    for (const auto& c : r.crds) measure(c.source, c.content);
  for (const auto& m : r.manifests) measure(m.source, m.content);
  for (const auto& h : r.hooks) measure(h.source, h.content);
  std::string out;
  out.reserve(size);
  auto add = [&out, &k_head](const std::string& source, const std::string& content) {
    out.append(k_head).append(source).append("\n").append(content).append("\n");
  };
  if (r.include_crds)
    for (const auto& c : r.crds) add(c.source, c.content);
  for (const auto& m : r.manifests) add(m.source, m.content);
  // The release manifest is trimmed as a whole; it starts with "---" when not empty, so only
  // its end can change.
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  out.append("\n");
  for (const auto& h : r.hooks) add(h.source, h.content);
  return out;
}

Value user_values(const std::vector<std::string>& value_files, const std::vector<std::string>& set,
                  const std::vector<std::string>& set_string) {
  Value base(Map{});
  for (const auto& path : value_files) {
    std::string text;
    if (int err = emco::read_whole_file(path, text)) {
      if (err == ENOENT) fail(ErrorKind::not_found, "open " + path + ": no such file or directory");
      fail(ErrorKind::invalid, "read " + path + ": " + std::strerror(err));
    }
    Value current;
    try {
      current = tmpl::parse_yaml(text, tmpl::YamlMode::helm, path);
    } catch (const Error& e) {
      std::string why = yaml_syntax_error(text);
      fail(ErrorKind::invalid, "failed to parse " + path + ": " + (why.empty() ? e.message() : why));
    }
    if (!current.is_null() && !current.is_map())
      fail(ErrorKind::invalid, "failed to parse " + path + ": error unmarshaling JSON: top level is not a map");
    if (current.is_map()) base = merge_maps(base, current);
  }
  for (const auto& s : set) parse_set(s, base, false);
  for (const auto& s : set_string) parse_set(s, base, true);
  return base;
}

int template_main(const TemplateArgs& args, std::ostream& out, std::ostream& err) {
  prefer_huge_pages_for_heap();  // before the chart is read: its files are the first big blocks
  try {
    RenderOptions opts;
    opts.release_name = args.release_name;
    opts.namespace_name = args.namespace_name;
    opts.include_crds = args.include_crds;
    opts.leave_to_exit = args.leave_to_exit;
    opts.log = [&err](const std::string& line) { err << line << "\n"; };
    Chart chart = load_chart(args.chart);
    if (chart.metadata.deprecated) err << "WARNING: This chart is deprecated\n";
    opts.values = user_values(args.value_files, args.set, args.set_string);
    RenderResult result;
    try {
      result = render(std::move(chart), opts);
    } catch (const RenderFailure& e) {
      err << "Error: " << e.message() << "\n\nUse --debug flag to render out invalid YAML\n";
      return 1;
    }
    if (args.skip_tests)
      result.hooks.erase(std::remove_if(result.hooks.begin(), result.hooks.end(),
                                        [](const RenderedHook& h) {
                                          return std::find(h.events.begin(), h.events.end(), "test") != h.events.end();
                                        }),
                         result.hooks.end());
    out << template_output(result);
    return 0;
  } catch (const Error& e) {
    err << "Error: " << e.message() << "\n";
    return 1;
  }
}

}  // namespace emco::helm
