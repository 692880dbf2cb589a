#include "core/helm/chart.hpp"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <map>
#include <sstream>

#include "core/helm/manifests.hpp"
#include "core/helm/semver.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::helm {
namespace fs = std::filesystem;
using tmpl::Value;

namespace {

[[noreturn]] void invalid(const std::string& msg) { fail(ErrorKind::invalid, msg); }

std::string scalar(const YAML::Node& n) {
  if (!n || n.IsNull() || !n.IsScalar()) return "";
  return n.Scalar();
}

std::vector<std::string> string_list(const YAML::Node& n) {
  std::vector<std::string> out;
  if (n && n.IsSequence())
    for (const auto& item : n) out.push_back(scalar(item));
  return out;
}

bool yaml_bool(const YAML::Node& n) {
  auto s = to_lower(scalar(n));
  return s == "true" || s == "yes" || s == "on" || s == "y";
}

// Import values are strings or {child, parent} maps; kept as plain Values.
Value yaml_to_plain(const YAML::Node& n) {
  if (!n || n.IsNull()) return Value();
  if (n.IsScalar()) return Value(n.Scalar());
  if (n.IsSequence()) {
    tmpl::List l;
    for (const auto& item : n) l.push_back(yaml_to_plain(item));
    return Value(std::move(l));
  }
  tmpl::Map m;
  for (const auto& kv : n) m[kv.first.as<std::string>()] = yaml_to_plain(kv.second);
  return Value(std::move(m));
}

std::vector<Dependency> parse_dependencies(const YAML::Node& list) {
  std::vector<Dependency> deps;
  if (!list || !list.IsSequence()) return deps;
  for (const auto& d : list) {
    if (!d || d.IsNull()) invalid("validation: dependencies must not contain empty or null nodes");
    Dependency dep;
    dep.name = trim(scalar(d["name"]));
    dep.version = trim(scalar(d["version"]));
    dep.repository = trim(scalar(d["repository"]));
    dep.condition = trim(scalar(d["condition"]));
    dep.tags = string_list(d["tags"]);
    dep.enabled = yaml_bool(d["enabled"]);
    dep.import_values = d["import-values"] ? yaml_to_plain(d["import-values"]) : Value(tmpl::List{});
    dep.alias = scalar(d["alias"]);
    deps.push_back(std::move(dep));
  }
  return deps;
}

YAML::Node load_yaml(const std::string& text, const std::string& what) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    invalid("cannot load " + what + ": error converting YAML to JSON: yaml: line " + std::to_string(e.mark.line + 1) +
            ": " + e.msg);
  }
}

void parse_metadata(const std::string& text, Metadata& md) {
  YAML::Node root = load_yaml(text, "Chart.yaml");
  if (root && !root.IsNull() && !root.IsMap()) invalid("cannot load Chart.yaml: not a YAML mapping");
  if (!root || root.IsNull()) return;
  md.name = scalar(root["name"]);
  md.home = scalar(root["home"]);
  md.sources = string_list(root["sources"]);
  md.version = scalar(root["version"]);
  md.description = scalar(root["description"]);
  md.keywords = string_list(root["keywords"]);
  if (root["maintainers"] && root["maintainers"].IsSequence())
    for (const auto& m : root["maintainers"])
      md.maintainers.push_back({scalar(m["name"]), scalar(m["email"]), scalar(m["url"])});
  md.icon = scalar(root["icon"]);
  md.api_version = scalar(root["apiVersion"]);
  md.condition = scalar(root["condition"]);
  md.tags = scalar(root["tags"]);
  md.app_version = scalar(root["appVersion"]);
  md.deprecated = yaml_bool(root["deprecated"]);
  if (root["annotations"] && root["annotations"].IsMap())
    for (const auto& kv : root["annotations"]) md.annotations[kv.first.as<std::string>()] = scalar(kv.second);
  md.kube_version = scalar(root["kubeVersion"]);
  if (root["dependencies"]) md.dependencies = parse_dependencies(root["dependencies"]);
  md.type = scalar(root["type"]);
}

void validate(Metadata& md) {
  for (auto* s : {&md.name, &md.description, &md.home, &md.icon, &md.condition, &md.tags, &md.app_version,
                  &md.kube_version})
    *s = trim(*s);
  if (md.api_version.empty()) invalid("validation: chart.metadata.apiVersion is required");
  if (md.name.empty()) invalid("validation: chart.metadata.name is required");
  if (md.name.find('/') != std::string::npos || md.name == "." || md.name == "..")
    invalid("validation: chart.metadata.name \"" + md.name + "\" is invalid");
  if (md.version.empty()) invalid("validation: chart.metadata.version is required");
  if (!parse_semver(md.version)) invalid("validation: chart.metadata.version \"" + md.version + "\" is invalid");
  if (!md.type.empty() && md.type != "application" && md.type != "library")
    invalid("validation: chart.metadata.type must be application or library");
  std::map<std::string, bool> seen;
  for (const auto& d : md.dependencies) {
    if (!d.alias.empty())
      for (char c : d.alias)
        if (!(isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
          invalid("validation: dependency \"" + d.name + "\" has disallowed characters in the alias");
    const std::string& key = d.alias.empty() ? d.name : d.alias;
    if (seen[key]) invalid("validation: more than one dependency with name or alias \"" + key + "\"");
    seen[key] = true;
  }
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) fail(ErrorKind::not_found, "chart '" + p.string() + "' not found");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::vector<ChartFile> Chart::crds() const {
  std::vector<ChartFile> out;
  for (const auto& f : files)
    if (starts_with(f.name, "crds/") &&
        (ends_with(f.name, ".yaml") || ends_with(f.name, ".yml") || ends_with(f.name, ".json")))
      out.push_back(f);
  return out;
}

Chart load_chart(const fs::path& path, const ArchiveLimits& limits) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return load_chart_files(read_chart_dir(path, limits), limits);
  if (!fs::exists(path, ec)) fail(ErrorKind::not_found, "path '" + path.string() + "' not found");
  auto size = fs::file_size(path, ec);
  if (!ec && size > limits.max_total_bytes)
    invalid("chart archive '" + path.string() + "' is larger than the maximum size " +
            std::to_string(limits.max_total_bytes));
  return load_chart_files(read_chart_archive(read_file(path), limits), limits);
}

Chart load_chart_files(std::vector<ChartFile> files, const ArchiveLimits& limits) {
  Chart c;
  c.values = Value(tmpl::Map{});
  bool have_metadata = false;
  std::map<std::string, std::vector<ChartFile>> subcharts;
  // Chart.yaml first: requirements.yaml handling depends on the apiVersion.
  for (auto& f : files) {
    if (f.name != "Chart.yaml") continue;
    parse_metadata(f.data, c.metadata);
    if (c.metadata.api_version.empty()) c.metadata.api_version = "v1";
    have_metadata = true;
  }
  for (auto& f : files) {
    if (f.name == "Chart.yaml" || f.name == "Chart.lock") continue;
    if (f.name == "values.yaml") {
      Value v;
      try {
        v = tmpl::parse_yaml(f.data, tmpl::YamlMode::helm, "values.yaml");
      } catch (const Error& e) {
        std::string why = yaml_syntax_error(f.data);
        invalid("cannot load values.yaml: " + (why.empty() ? e.message() : why));
      }
      if (v.is_map()) c.values = v;
      else if (!v.is_null()) invalid("cannot load values.yaml: error unmarshaling JSON: top level is not a map");
    } else if (f.name == "values.schema.json") {
      c.schema = f.data;
    } else if (f.name == "requirements.yaml") {
      YAML::Node root = load_yaml(f.data, "requirements.yaml");
      if (c.metadata.api_version == "v1") {
        if (root && root.IsMap() && root["dependencies"])
          c.metadata.dependencies = parse_dependencies(root["dependencies"]);
        c.files.push_back(f);
      }
    } else if (f.name == "requirements.lock") {
      if (c.metadata.api_version == "v1") c.files.push_back(f);
    } else if (starts_with(f.name, "templates/")) {
      c.templates.push_back(f);
    } else if (starts_with(f.name, "charts/")) {
      if (ends_with(f.name, ".prov")) {
        c.files.push_back(f);
        continue;
      }
      std::string rest = f.name.substr(7);
      std::string cname = rest.substr(0, rest.find('/'));
      subcharts[cname].push_back({rest, f.data});
    } else {
      c.files.push_back(f);
    }
  }
  if (!have_metadata) invalid("Chart.yaml file is missing");
  validate(c.metadata);
  for (auto& [cname, sub_files] : subcharts) {
    if (cname.empty() || cname[0] == '_' || cname[0] == '.') continue;
    try {
      if (ends_with(cname, ".tgz")) {
        if (sub_files[0].name != cname)
          invalid("error unpacking subchart tar in " + c.name() + ": expected " + cname + ", got " + sub_files[0].name);
        c.dependencies.push_back(load_chart_files(read_chart_archive(sub_files[0].data, limits), limits));
      } else {
        std::vector<ChartFile> inner;
        for (auto& sf : sub_files) {
          auto slash = sf.name.find('/');
          if (slash == std::string::npos) continue;
          inner.push_back({sf.name.substr(slash + 1), std::move(sf.data)});
        }
        c.dependencies.push_back(load_chart_files(std::move(inner), limits));
      }
    } catch (const Error& e) {
      invalid("error unpacking subchart " + cname + " in " + c.name() + ": " + e.message());
    }
  }
  return c;
}

Value metadata_value(const Metadata& md, bool is_root) {
  auto strings = [](const std::vector<std::string>& v) {
    tmpl::List l(v.begin(), v.end());
    return Value(std::move(l));
  };
  tmpl::List maintainers;
  for (const auto& m : md.maintainers)
    maintainers.push_back(Value(tmpl::Map{{"Name", m.name}, {"Email", m.email}, {"URL", m.url}}));
  tmpl::Map annotations;
  for (const auto& [k, v] : md.annotations) annotations[k] = Value(v);
  tmpl::List deps;
  for (const auto& d : md.dependencies)
    deps.push_back(Value(tmpl::Map{{"Name", d.name},
                                   {"Version", d.version},
                                   {"Repository", d.repository},
                                   {"Condition", d.condition},
                                   {"Tags", strings(d.tags)},
                                   {"Enabled", d.enabled},
                                   {"ImportValues", d.import_values},
                                   {"Alias", d.alias}}));
  return Value(tmpl::Map{
      {"Name", md.name},
      {"Home", md.home},
      {"Sources", strings(md.sources)},
      {"Version", md.version},
      {"Description", md.description},
      {"Keywords", strings(md.keywords)},
      {"Maintainers", Value(std::move(maintainers))},
      {"Icon", md.icon},
      {"APIVersion", md.api_version},
      {"Condition", md.condition},
      {"Tags", md.tags},
      {"AppVersion", md.app_version},
      {"Deprecated", md.deprecated},
      {"Annotations", Value(std::move(annotations))},
      {"KubeVersion", md.kube_version},
      {"Dependencies", Value(std::move(deps))},
      {"Type", md.type},
      {"IsRoot", is_root},
  });
}

}  // namespace emco::helm
