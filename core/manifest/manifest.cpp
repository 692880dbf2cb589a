#include "core/manifest/manifest.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "core/util/file_io.hpp"
#include "core/util/strings.hpp"
#include "core/util/utf8.hpp"
#include "core/yaml/yaml.hpp"

namespace emco::manifest {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Document::where(const std::string& path) const {
  if (line == 0) return "";  // built from the command line: no file position
  std::string p = path;
  for (;;) {
    if (auto it = lines.find(p); it != lines.end()) return source + ":" + std::to_string(it->second);
    if (p.empty()) break;
    auto cut = p.find_last_of(".[");
    p = cut == std::string::npos ? "" : p.substr(0, cut);
  }
  return source + ":" + std::to_string(line);
}

namespace {

[[noreturn]] void bad(const std::string& where, const std::string& msg, const std::string& hint = {}) {
  fail(ErrorKind::invalid, where + ": " + msg, hint);
}

bool all_of_class(std::string_view s, const char* digits) {
  return !s.empty() && s.find_first_not_of(digits) == std::string_view::npos;
}

// [-+]?(0|[1-9][0-9]*) | 0x[0-9a-fA-F]+ | 0o[0-7]+
bool is_int(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && s[1] == 'x') return all_of_class(s.substr(2), "0123456789abcdefABCDEF");
  if (s.size() > 2 && s[0] == '0' && s[1] == 'o') return all_of_class(s.substr(2), "01234567");
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  if (!all_of_class(s, "0123456789")) return false;
  return s.size() == 1 || s[0] != '0';
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool is_float(std::string_view s) {
  std::size_t i = 0;
  auto digits = [&] {
    std::size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - from;
  };
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

// YAML 1.2 core-schema resolution of a plain scalar (what the Go YAML
// decoder emcoctl uses gives for these files).
json scalar(const yaml::Document& d, yaml::NodeId id) {
  std::string v(d.scalar(id));
  if (!d.is_plain(id)) return v;  // quoted, block or tagged: a string
  if (v.empty() || v == "~" || v == "null" || v == "Null" || v == "NULL") return nullptr;
  if (v == "true" || v == "True" || v == "TRUE") return true;
  if (v == "false" || v == "False" || v == "FALSE") return false;
  if (is_int(v)) {
    try {
      if (starts_with(v, "0x")) return std::stoll(v.substr(2), nullptr, 16);
      if (starts_with(v, "0o")) return std::stoll(v.substr(2), nullptr, 8);
      return std::stoll(v);
    } catch (const std::out_of_range&) {
      return v;
    }
  }
  if (is_float(v)) {
    // Go's decoder keeps a float only when strconv.ParseFloat has no error:
    // one past the double range ("9e999") stays a string; one below it
    // rounds to zero or a denormal, as strtod gives it.
    errno = 0;
    double number = std::strtod(v.c_str(), nullptr);
    if (errno == ERANGE && std::isinf(number)) return v;
    return number;
  }
  if (v == ".inf" || v == ".Inf" || v == ".INF" || v == "+.inf") return std::numeric_limits<double>::infinity();
  if (v == "-.inf" || v == "-.Inf" || v == "-.INF") return -std::numeric_limits<double>::infinity();
  return v;
}

class Converter {
public:
  Converter(const yaml::Document& d, Document& doc) : m_d(d), m_doc(doc), m_budget(d) {}

  json convert(yaml::NodeId id, const std::string& path, int depth, bool via_alias) {
    if (m_d.node(id).type == yaml::NodeType::alias) {
      id = m_d.target(id);
      via_alias = true;
    }
    if (via_alias) m_budget.charge();
    const yaml::Node& n = m_d.node(id);
    if (depth > 200) bad(where(n), "YAML nesting deeper than 200 levels");
    m_doc.lines.emplace(path, n.line);
    switch (n.type) {
      case yaml::NodeType::scalar: return scalar(m_d, id);
      case yaml::NodeType::sequence: {
        json a = json::array();
        for (std::size_t i = 0; i < m_d.size(id); ++i)
          a.push_back(convert(m_d.item(id, i), path + "[" + std::to_string(i) + "]", depth + 1, via_alias));
        return a;
      }
      case yaml::NodeType::mapping: {
        json o = json::object();
        for (std::size_t i = 0; i < m_d.size(id); ++i) {
          yaml::NodeId k = m_d.target(m_d.key(id, i));
          const yaml::Node& kn = m_d.node(m_d.key(id, i));
          if (m_d.node(k).type != yaml::NodeType::scalar) bad(where(kn), "mapping keys must be plain strings");
          std::string key(m_d.scalar(k));
          if (o.contains(key)) bad(where(kn), "duplicate key '" + key + "'", "each key may appear once in a mapping");
          std::string child = path.empty() ? key : path + "." + key;
          o[key] = convert(m_d.value(id, i), child, depth + 1, via_alias);
          m_doc.lines[child] = static_cast<int>(kn.line);
        }
        return o;
      }
      case yaml::NodeType::alias: break;  // targets are never aliases
    }
    return nullptr;
  }

private:
  const yaml::Document& m_d;
  Document& m_doc;
  yaml::AliasBudget m_budget;

  std::string where(const yaml::Node& n) const { return m_doc.source + ":" + std::to_string(n.line); }
};

// Made at first use: a namespace-scope vector is built at every process's start.
const std::vector<std::string>& top_level_fields() {
  static const std::vector<std::string> fields = {"version",     "resourceContext", "metadata",    "spec",
                                                   "file",        "files",           "clusterLabel"};
  return fields;
}

std::string as_string(const json& v, const Document& doc, const std::string& path) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_float() || v.is_boolean()) return v.dump();
  bad(doc.where(path), "'" + path + "' must be a string");
}

void build_document(Document& doc, json raw, const ReadOptions& opts) {
  if (!raw.is_object()) bad(doc.where(), "a document must be a mapping with resourceContext.anchor");
  json body = json::object();
  const auto& top_level = top_level_fields();
  for (auto it = raw.begin(); it != raw.end(); ++it) {
    const auto& k = it.key();
    if (std::find(top_level.begin(), top_level.end(), k) != top_level.end()) continue;
    if (opts.strict_top_level) {
      std::string guess = closest_match(k, top_level);
      bad(doc.where(k), "unknown field '" + k + "'",
          guess.empty() ? "a document has " + join(top_level, ", ") : "did you mean '" + guess + "'?");
    }
    doc.warnings.push_back(doc.where(k) + ": ignoring unknown field '" + k + "'");
  }
  auto rc = raw.find("resourceContext");
  if (rc == raw.end() || !rc->is_object() || !rc->contains("anchor"))
    bad(doc.where("resourceContext"), "missing resourceContext.anchor",
        "every document needs resourceContext: {anchor: <path>}, e.g. anchor: projects");
  for (auto it = rc->begin(); it != rc->end(); ++it)
    if (it.key() != "anchor") bad(doc.where("resourceContext." + it.key()), "unknown field 'resourceContext." + it.key() + "'");
  doc.anchor_text = as_string((*rc)["anchor"], doc, "resourceContext.anchor");
  try {
    doc.anchor = resource::parse_anchor(doc.anchor_text);
  } catch (const Error& e) {
    Error located = e.with_context(doc.where("resourceContext.anchor"));
    if (!opts.keep_bad_anchors) throw located;
    doc.anchor = resource::Anchor{};
    doc.anchor_error = Error(ErrorKind::not_found, located.message(), located.hint());
  }
  json metadata = raw.value("metadata", json::object());
  if (metadata.is_null()) metadata = json::object();
  if (!metadata.is_object()) bad(doc.where("metadata"), "'metadata' must be a mapping");
  body["metadata"] = metadata;
  if (raw.contains("spec")) body["spec"] = raw["spec"];
  if (raw.contains("clusterLabel") && !raw["clusterLabel"].is_null())
    body["clusterLabel"] = as_string(raw["clusterLabel"], doc, "clusterLabel");
  if (metadata.contains("name") && !metadata["name"].is_null()) doc.name = as_string(metadata["name"], doc, "metadata.name");
  if (doc.name.empty() && body.contains("clusterLabel")) doc.name = body["clusterLabel"].get<std::string>();
  if (raw.contains("file") && !raw["file"].is_null()) {
    doc.files.push_back(trim(as_string(raw["file"], doc, "file")));
  } else if (raw.contains("files") && !raw["files"].is_null()) {
    if (!raw["files"].is_array()) bad(doc.where("files"), "'files' must be a list of paths");
    for (size_t i = 0; i < raw["files"].size(); ++i)
      doc.files.push_back(trim(as_string(raw["files"][i], doc, "files[" + std::to_string(i) + "]")));
    doc.multi_file = true;
  }
  doc.body = std::make_shared<json>(std::move(body));
}

constexpr const char* k_empty_hint =
    "a batch file holds YAML documents, each with version, resourceContext.anchor and metadata";

// Go templates print "<no value>" for a key the values do not have. Which
// key: the one `{{ ... }}` written after "<field>:" in the template, when the
// template writes that field with one expression only; "" otherwise.
std::string missing_value_key(const std::string& tmpl, const std::string& field) {
  std::set<std::string> expressions;
  for (size_t at = tmpl.find(field); at != std::string::npos; at = tmpl.find(field, at + 1)) {
    if (at > 0 && std::string(" \t{,\"'").find(tmpl[at - 1]) == std::string::npos) continue;
    size_t i = at + field.size();
    if (i < tmpl.size() && (tmpl[i] == '"' || tmpl[i] == '\'')) ++i;
    while (i < tmpl.size() && tmpl[i] == ' ') ++i;
    if (i >= tmpl.size() || tmpl[i] != ':') continue;
    ++i;
    while (i < tmpl.size() && (tmpl[i] == ' ' || tmpl[i] == '"' || tmpl[i] == '\'')) ++i;
    if (tmpl.compare(i, 2, "{{") != 0) continue;
    size_t end = tmpl.find("}}", i);
    if (end == std::string::npos || tmpl.find('\n', i) < end) continue;
    std::string inner = trim(tmpl.substr(i + 2, end - i - 2));
    if (!inner.empty() && inner.front() == '-') inner = trim(inner.substr(1));
    if (!inner.empty() && inner.back() == '-') inner = trim(inner.substr(0, inner.size() - 1));
    expressions.insert(inner);
  }
  if (expressions.size() != 1) return "";
  // A field chain (".DtcIntent", "$.Values.X", "$cluster.Name"): its last name.
  const std::string& e = *expressions.begin();
  if (e.empty() || e.find_first_of(" |()") != std::string::npos) return "";
  auto dot = e.find_last_of('.');
  return dot == std::string::npos ? "" : e.substr(dot + 1);
}

void warn_no_value(Document& doc, const json& v, const std::string& path, const std::string& tmpl) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) warn_no_value(doc, *it, path.empty() ? it.key() : path + "." + it.key(), tmpl);
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) warn_no_value(doc, v[i], path + "[" + std::to_string(i) + "]", tmpl);
  } else if (v.is_string() && v.get_ref<const std::string&>().find("<no value>") != std::string::npos) {
    std::string field = path.substr(path.find_last_of('.') + 1);
    if (auto b = field.find('['); b != std::string::npos) field = field.substr(0, b);
    std::string key = missing_value_key(tmpl, field);
    doc.warnings.push_back(doc.where(path) + ": " + path + " rendered as '<no value>': " +
                           (key.empty() ? "the template names a key the values do not have"
                                        : "the values have no '" + key + "'") +
                           "; stored as it is, as upstream does");
  }
}

std::string read_all(const std::string& path, size_t limit) {
  if (path == "-") {
    std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    if (text.size() > limit) fail(ErrorKind::invalid, "standard input is larger than " + std::to_string(limit >> 20) + " MiB");
    if (text.empty()) fail(ErrorKind::invalid, "standard input is empty", k_empty_hint);
    return text;
  }
  return read_input_file(path, {.what = "batch file",
                                .max_bytes = limit,
                                .too_big_hint = "split it into several files",
                                .allow_empty = false,
                                .empty_hint = k_empty_hint});
}

}  // namespace

File parse_text(const std::string& original, const std::string& source, const std::string& base_dir, const ReadOptions& opts) {
  if (size_t bad_at = utf8::invalid_offset(original); bad_at != std::string::npos) {
    size_t line = 1 + static_cast<size_t>(std::count(original.begin(), original.begin() + static_cast<std::ptrdiff_t>(bad_at), '\n'));
    fail(ErrorKind::invalid, source + ":" + std::to_string(line) + ": not valid UTF-8 (byte " + std::to_string(bad_at) + ")",
         "save the file as UTF-8");
  }
  std::string text = opts.render ? opts.render(original, source) : original;
  File file;
  file.source = source;
  std::vector<yaml::Document> nodes;
  try {
    nodes = yaml::parse(text);
  } catch (const yaml::ParseError& e) {
    // a problem found at the end of the input (an unclosed quote or bracket) is shown on the
    // last line that has text
    int last_line = 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
    if (!text.empty() && text.back() == '\n') --last_line;
    int line = std::min(e.line(), std::max(last_line, 1));
    int column = line == e.line() ? e.column() : 1;
    fail(ErrorKind::invalid, source + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + e.problem(),
         "check the indentation and quoting around that line");
  }
  int index = 0;
  for (const auto& n : nodes) {
    ++index;
    Document doc;
    doc.source = source;
    doc.base_dir = base_dir;
    doc.index = index;
    doc.line = static_cast<int>(n.node(n.root()).line);
    json raw = Converter(n, doc).convert(n.root(), "", 0, false);
    if (raw.is_null()) continue;
    build_document(doc, std::move(raw), opts);
    if (opts.render && text.find("<no value>") != std::string::npos) warn_no_value(doc, *doc.body, "", original);
    file.documents.push_back(std::move(doc));
  }
  return file;
}

std::vector<File> read_files(const std::string& path, const ReadOptions& opts) {
  std::vector<File> out;
  std::error_code ec;  // a symlink loop is not a directory; reading it says what it is
  if (path != "-" && fs::is_directory(path, ec)) {
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(path)) {
      auto ext = e.path().extension().string();
      if (e.is_regular_file(ec) && (ext == ".yaml" || ext == ".yml")) entries.push_back(e.path());
    }
    std::sort(entries.begin(), entries.end());
    if (entries.empty()) fail(ErrorKind::invalid, "directory '" + path + "' has no .yaml or .yml files");
    for (const auto& e : entries) {
      out.push_back(parse_text(read_all(e.string(), opts.max_file_bytes), e.string(), e.parent_path().string(), opts));
    }
    return out;
  }
  std::string base = path == "-" ? fs::current_path().string() : fs::absolute(path).parent_path().string();
  out.push_back(parse_text(read_all(path, opts.max_file_bytes), path, base, opts));
  return out;
}

}  // namespace emco::manifest
