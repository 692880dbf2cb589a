#include "core/helm/chart.hpp"

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "core/helm/manifests.hpp"
#include "core/util/semver.hpp"
#include "core/util/error.hpp"
#include "core/util/file_io.hpp"
#include "core/util/strings.hpp"
#include "core/yaml/yaml.hpp"

namespace emco::helm {
namespace fs = std::filesystem;
using tmpl::Value;

namespace {

[[noreturn]] void invalid(const std::string& msg) { fail(ErrorKind::invalid, msg); }

// One node of a parsed Chart.yaml / requirements.yaml (aliases followed); empty when a key is
// missing or the node is not a mapping, so lookups chain (root["a"]["b"]).
class YRef {
public:
  YRef() = default;
  YRef(const yaml::Document& doc, yaml::NodeId id)
      : m_doc(&doc), m_id(id == yaml::Document::k_none ? id : doc.target(id)) {}

  explicit operator bool() const { return m_doc != nullptr && m_id != yaml::Document::k_none; }
  bool is(yaml::NodeType t) const { return *this && m_doc->node(m_id).type == t; }
  bool is_null() const {
    if (!*this) return true;
    if (!m_doc->is_plain(m_id)) return false;
    std::string_view s = m_doc->scalar(m_id);
    return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
  }
  // The scalar as the Go string field Helm decodes it into (sigs.k8s.io/yaml: a plain 1.10
  // reads "1.1", yes reads "true"); "" for null or a collection.
  std::string text() const {
    if (!is(yaml::NodeType::scalar)) return "";
    std::string_view s = m_doc->scalar(m_id);
    if (!m_doc->is_plain(m_id)) return std::string(s);
    return tmpl::yaml_plain_as_go_string(s);
  }
  // The same for a map key of a map[string]string.
  std::string key_text() const {
    if (!is(yaml::NodeType::scalar)) return "";
    std::string_view s = m_doc->scalar(m_id);
    if (!m_doc->is_plain(m_id)) return std::string(s);
    return tmpl::yaml_plain_as_go_key(s);
  }
  YRef operator[](std::string_view key) const {
    if (!is(yaml::NodeType::mapping)) return {};
    yaml::NodeId v = m_doc->find(m_id, key);
    return v == yaml::Document::k_none ? YRef() : YRef(*m_doc, v);
  }
  std::size_t size() const {
    return is(yaml::NodeType::sequence) || is(yaml::NodeType::mapping) ? m_doc->size(m_id) : 0;
  }
  YRef item(std::size_t i) const { return YRef(*m_doc, m_doc->item(m_id, i)); }
  YRef key(std::size_t i) const { return YRef(*m_doc, m_doc->key(m_id, i)); }
  YRef value(std::size_t i) const { return YRef(*m_doc, m_doc->value(m_id, i)); }

private:
  const yaml::Document* m_doc = nullptr;
  yaml::NodeId m_id = yaml::Document::k_none;
};

std::string scalar(const YRef& n) { return n.text(); }

std::vector<std::string> string_list(const YRef& n) {
  std::vector<std::string> out;
  if (n.is(yaml::NodeType::sequence))
    for (std::size_t i = 0; i < n.size(); ++i) out.push_back(scalar(n.item(i)));
  return out;
}

bool yaml_bool(const YRef& n) {
  auto s = to_lower(scalar(n));
  return s == "true" || s == "yes" || s == "on" || s == "y";
}

// Import values are strings or {child, parent} maps; kept as plain Values.
Value yaml_to_plain(const YRef& n) {
  if (n.is_null()) return Value();
  if (n.is(yaml::NodeType::scalar)) return Value(n.text());
  if (n.is(yaml::NodeType::sequence)) {
    tmpl::List l;
    for (std::size_t i = 0; i < n.size(); ++i) l.push_back(yaml_to_plain(n.item(i)));
    return Value(std::move(l));
  }
  tmpl::Map m;
  for (std::size_t i = 0; i < n.size(); ++i) m[n.key(i).key_text()] = yaml_to_plain(n.value(i));
  return Value(std::move(m));
}

std::vector<Dependency> parse_dependencies(const YRef& list) {
  std::vector<Dependency> deps;
  if (!list.is(yaml::NodeType::sequence)) return deps;
  for (std::size_t i = 0; i < list.size(); ++i) {
    YRef d = list.item(i);
    if (d.is_null()) invalid("validation: dependencies must not contain empty or null nodes");
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

// The first document of `text` (yaml.Unmarshal reads no further); empty text gives none.
std::vector<yaml::Document> load_yaml(const std::string& text, const std::string& what) {
  try {
    yaml::Options o;
    o.max_documents = 1;
    return yaml::parse(text, o);
  } catch (const yaml::ParseError& e) {
    invalid("cannot load " + what + ": error converting YAML to JSON: " + e.goyaml_text());
  }
}

YRef root_of(const std::vector<yaml::Document>& docs) {
  if (docs.empty()) return {};
  return YRef(docs.front(), docs.front().root());
}

void parse_metadata(const std::string& text, Metadata& md) {
  auto docs = load_yaml(text, "Chart.yaml");
  YRef root = root_of(docs);
  if (!root.is_null() && !root.is(yaml::NodeType::mapping)) invalid("cannot load Chart.yaml: not a YAML mapping");
  if (root.is_null()) return;
  md.name = scalar(root["name"]);
  md.home = scalar(root["home"]);
  md.sources = string_list(root["sources"]);
  md.version = scalar(root["version"]);
  md.description = scalar(root["description"]);
  md.keywords = string_list(root["keywords"]);
  YRef maintainers = root["maintainers"];
  for (std::size_t i = 0; i < (maintainers.is(yaml::NodeType::sequence) ? maintainers.size() : 0); ++i) {
    YRef m = maintainers.item(i);
    md.maintainers.push_back({scalar(m["name"]), scalar(m["email"]), scalar(m["url"])});
  }
  md.icon = scalar(root["icon"]);
  md.api_version = scalar(root["apiVersion"]);
  md.condition = scalar(root["condition"]);
  md.tags = scalar(root["tags"]);
  md.app_version = scalar(root["appVersion"]);
  md.deprecated = yaml_bool(root["deprecated"]);
  YRef annotations = root["annotations"];
  if (annotations.is(yaml::NodeType::mapping))
    for (std::size_t i = 0; i < annotations.size(); ++i)
      md.annotations[annotations.key(i).key_text()] = scalar(annotations.value(i));
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
  if (!semver::parse_version(md.version)) invalid("validation: chart.metadata.version \"" + md.version + "\" is invalid");
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
  std::string data;
  if (int err = emco::read_whole_file(p.string(), data))
    fail(err == ENOENT ? ErrorKind::not_found : ErrorKind::invalid,
         err == ENOENT ? "chart '" + p.string() + "' not found" : "cannot read '" + p.string() + "': " + std::strerror(err));
  return data;
}

}  // namespace

bool is_crd_file(std::string_view name) {
  return starts_with(name, "crds/") && (ends_with(name, ".yaml") || ends_with(name, ".yml") || ends_with(name, ".json"));
}

namespace {

// Whether loading a chart directory leaves the file `name` to .Files alone: load_chart_files
// reads Chart.yaml, values.yaml, values.schema.json, requirements.yaml, the templates and
// subchart archives, the chart's own or a subchart directory's. The rest (READMEs, CRDs,
// dashboards: 5 MB of kube-prometheus-stack) is read when a template asks for it.
bool only_for_files(std::string_view name) {
  while (starts_with(name, "charts/")) {
    const std::size_t slash = name.find('/', 7);
    if (slash == std::string_view::npos) return false;  // a subchart archive (or its .prov)
    name.remove_prefix(slash + 1);
  }
  return name != "Chart.yaml" && name != "values.yaml" && name != "values.schema.json" &&
         name != "requirements.yaml" && !starts_with(name, "templates/");
}

}  // namespace

Chart load_chart(const fs::path& path, const ArchiveLimits& limits) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return load_chart_files(read_chart_dir(path, limits, only_for_files), limits);
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
    parse_metadata(f.contents(), c.metadata);
    if (c.metadata.api_version.empty()) c.metadata.api_version = "v1";
    have_metadata = true;
  }
  for (auto& f : files) {
    if (f.name == "Chart.yaml" || f.name == "Chart.lock") continue;
    if (f.name == "values.yaml") {
      Value v;
      try {
        v = tmpl::parse_yaml(f.contents(), tmpl::YamlMode::helm, "values.yaml");
      } catch (const Error& e) {
        std::string why = yaml_syntax_error(f.contents());
        invalid("cannot load values.yaml: " + (why.empty() ? e.message() : why));
      }
      if (v.is_map()) c.values = v;
      else if (!v.is_null()) invalid("cannot load values.yaml: error unmarshaling JSON: top level is not a map");
    } else if (f.name == "values.schema.json") {
      c.schema = f.contents();
    } else if (f.name == "requirements.yaml") {
      auto docs = load_yaml(f.contents(), "requirements.yaml");
      YRef root = root_of(docs);
      if (c.metadata.api_version == "v1") {
        if (root["dependencies"])
          c.metadata.dependencies = parse_dependencies(root["dependencies"]);
        c.files.push_back(std::move(f));
      }
    } else if (f.name == "requirements.lock") {
      if (c.metadata.api_version == "v1") c.files.push_back(std::move(f));
    } else if (starts_with(f.name, "templates/")) {
      c.templates.push_back(std::move(f));
    } else if (starts_with(f.name, "charts/")) {
      if (ends_with(f.name, ".prov")) {
        c.files.push_back(std::move(f));
        continue;
      }
      std::string rest = f.name.substr(7);
      std::string cname = rest.substr(0, rest.find('/'));
      subcharts[cname].push_back({std::move(rest), std::move(f.data), std::move(f.deferred)});
    } else {
      c.files.push_back(std::move(f));
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
        c.dependencies.push_back(load_chart_files(read_chart_archive(sub_files[0].contents(), limits), limits));
      } else {
        std::vector<ChartFile> inner;
        for (auto& sf : sub_files) {
          auto slash = sf.name.find('/');
          if (slash == std::string::npos) continue;
          inner.push_back({sf.name.substr(slash + 1), std::move(sf.data), std::move(sf.deferred)});
        }
        c.dependencies.push_back(load_chart_files(std::move(inner), limits));
      }
    } catch (const Error& e) {
      invalid("error unpacking subchart " + cname + " in " + c.name() + ": " + e.message());
    }
  }
  return c;
}

namespace {

// Helm's .Chart: struct { chart.Metadata; IsRoot bool }. Templates read its Go fields
// (.Chart.Name); toYaml and toJson see what encoding/json makes of it: the json tags, empty
// fields omitted, IsRoot always.
class ChartMetadataObject : public tmpl::Object {
public:
  ChartMetadataObject(Value fields, Value json) : m_fields(std::move(fields)), m_json(std::move(json)) {}
  std::string type_name() const override { return "struct { chart.Metadata; IsRoot bool }"; }
  std::optional<Value> field(std::string_view name) const override {
    const Value* v = m_fields.find(name);
    if (!v) return std::nullopt;
    return *v;
  }
  std::optional<Value> data() const override { return m_json; }

private:
  Value m_fields;
  Value m_json;
};

Value string_list_value(const std::vector<std::string>& v) { return Value(tmpl::List(v.begin(), v.end())); }

// encoding/json's omitempty: set `key` only when `value` is not empty.
void set_unless_empty(tmpl::Map& m, const char* key, const Value& value) {
  bool empty = value.is_null() || (value.is_string() && value.as_string().empty()) ||
               (value.is_bool() && !value.as_bool()) || (value.is_list() && value.as_list().empty()) ||
               (value.is_map() && value.as_map().empty());
  if (!empty) m[key] = value;
}

}  // namespace

Value metadata_value(const Metadata& md, bool is_root) {
  tmpl::List maintainers, maintainers_json;
  for (const auto& m : md.maintainers) {
    maintainers.push_back(Value(tmpl::Map{{"Name", m.name}, {"Email", m.email}, {"URL", m.url}}));
    tmpl::Map j;
    set_unless_empty(j, "name", m.name);
    set_unless_empty(j, "email", m.email);
    set_unless_empty(j, "url", m.url);
    maintainers_json.push_back(Value(std::move(j)));
  }
  tmpl::Map annotations;
  for (const auto& [k, v] : md.annotations) annotations[k] = Value(v);
  tmpl::List deps, deps_json;
  for (const auto& d : md.dependencies) {
    deps.push_back(Value(tmpl::Map{{"Name", d.name},
                                   {"Version", d.version},
                                   {"Repository", d.repository},
                                   {"Condition", d.condition},
                                   {"Tags", string_list_value(d.tags)},
                                   {"Enabled", d.enabled},
                                   {"ImportValues", d.import_values},
                                   {"Alias", d.alias}}));
    tmpl::Map j{{"name", d.name}, {"repository", d.repository}};
    set_unless_empty(j, "version", d.version);
    set_unless_empty(j, "condition", d.condition);
    set_unless_empty(j, "tags", string_list_value(d.tags));
    set_unless_empty(j, "enabled", d.enabled);
    set_unless_empty(j, "import-values", d.import_values);
    set_unless_empty(j, "alias", d.alias);
    deps_json.push_back(Value(std::move(j)));
  }
  Value fields(tmpl::Map{
      {"Name", md.name},
      {"Home", md.home},
      {"Sources", string_list_value(md.sources)},
      {"Version", md.version},
      {"Description", md.description},
      {"Keywords", string_list_value(md.keywords)},
      {"Maintainers", Value(std::move(maintainers))},
      {"Icon", md.icon},
      {"APIVersion", md.api_version},
      {"Condition", md.condition},
      {"Tags", md.tags},
      {"AppVersion", md.app_version},
      {"Deprecated", md.deprecated},
      {"Annotations", Value(annotations)},
      {"KubeVersion", md.kube_version},
      {"Dependencies", Value(std::move(deps))},
      {"Type", md.type},
      {"IsRoot", is_root},
  });
  tmpl::Map json{{"IsRoot", is_root}};
  set_unless_empty(json, "name", md.name);
  set_unless_empty(json, "home", md.home);
  set_unless_empty(json, "sources", string_list_value(md.sources));
  set_unless_empty(json, "version", md.version);
  set_unless_empty(json, "description", md.description);
  set_unless_empty(json, "keywords", string_list_value(md.keywords));
  set_unless_empty(json, "maintainers", Value(std::move(maintainers_json)));
  set_unless_empty(json, "icon", md.icon);
  set_unless_empty(json, "apiVersion", md.api_version);
  set_unless_empty(json, "condition", md.condition);
  set_unless_empty(json, "tags", md.tags);
  set_unless_empty(json, "appVersion", md.app_version);
  set_unless_empty(json, "deprecated", md.deprecated);
  set_unless_empty(json, "annotations", Value(std::move(annotations)));
  set_unless_empty(json, "kubeVersion", md.kube_version);
  set_unless_empty(json, "dependencies", Value(std::move(deps_json)));
  set_unless_empty(json, "type", md.type);
  return Value(std::shared_ptr<const tmpl::Object>(
      std::make_shared<ChartMetadataObject>(std::move(fields), Value(std::move(json)))));
}

}  // namespace emco::helm
