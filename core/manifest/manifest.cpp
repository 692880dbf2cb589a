#include "core/manifest/manifest.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "core/util/error.hpp"
#include "core/util/strings.hpp"

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

bool is_int(const std::string& s) {
  static const std::regex re("[-+]?(0|[1-9][0-9]*)|0x[0-9a-fA-F]+|0o[0-7]+");
  return std::regex_match(s, re);
}
bool is_float(const std::string& s) {
  static const std::regex re("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  return std::regex_match(s, re);
}

// YAML 1.2 core-schema resolution of a plain scalar (what the Go YAML
// decoder emcoctl uses gives for these files).
json scalar(const YAML::Node& n) {
  const std::string& v = n.Scalar();
  if (n.Tag() == "!" || n.Tag() == "tag:yaml.org,2002:str") return v;
  if (n.Tag() != "?" && !n.Tag().empty()) return v;
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
  if (is_float(v) && v.find_first_of("0123456789") != std::string::npos) return std::stod(v);
  if (v == ".inf" || v == ".Inf" || v == ".INF" || v == "+.inf") return std::numeric_limits<double>::infinity();
  if (v == "-.inf" || v == "-.Inf" || v == "-.INF") return -std::numeric_limits<double>::infinity();
  return v;
}

json convert(const YAML::Node& n, const std::string& path, Document& doc, const std::string& source, int depth) {
  if (depth > 200) bad(source + ":" + std::to_string(n.Mark().line + 1), "YAML nesting deeper than 200 levels");
  doc.lines.emplace(path, n.Mark().line + 1);
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return nullptr;
    case YAML::NodeType::Scalar: return scalar(n);
    case YAML::NodeType::Sequence: {
      json a = json::array();
      size_t i = 0;
      for (const auto& e : n) a.push_back(convert(e, path + "[" + std::to_string(i++) + "]", doc, source, depth + 1));
      return a;
    }
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar())
          bad(source + ":" + std::to_string(kv.first.Mark().line + 1), "mapping keys must be plain strings");
        std::string key = kv.first.Scalar();
        if (o.contains(key))
          bad(source + ":" + std::to_string(kv.first.Mark().line + 1), "duplicate key '" + key + "'",
              "each key may appear once in a mapping");
        std::string child = path.empty() ? key : path + "." + key;
        o[key] = convert(kv.second, child, doc, source, depth + 1);
        doc.lines[child] = kv.first.Mark().line + 1;
      }
      return o;
    }
  }
  return nullptr;
}

const std::vector<std::string> k_top_level = {"version", "resourceContext", "metadata", "spec", "file", "files", "clusterLabel"};

std::string as_string(const json& v, const Document& doc, const std::string& path) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_float() || v.is_boolean()) return v.dump();
  bad(doc.where(path), "'" + path + "' must be a string");
}

void build_document(Document& doc, json raw, const ReadOptions& opts) {
  if (!raw.is_object()) bad(doc.where(), "a document must be a mapping with resourceContext.anchor");
  json body = json::object();
  for (auto it = raw.begin(); it != raw.end(); ++it) {
    const auto& k = it.key();
    if (std::find(k_top_level.begin(), k_top_level.end(), k) != k_top_level.end()) continue;
    if (opts.strict_top_level) {
      std::string guess = closest_match(k, k_top_level);
      bad(doc.where(k), "unknown field '" + k + "'",
          guess.empty() ? "a document has " + join(k_top_level, ", ") : "did you mean '" + guess + "'?");
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
    throw e.with_context(doc.where("resourceContext.anchor"));
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

std::string read_all(const std::string& path, size_t limit) {
  if (path == "-") {
    std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    if (text.size() > limit) fail(ErrorKind::invalid, "standard input is larger than " + std::to_string(limit >> 20) + " MiB");
    return text;
  }
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec) fail(ErrorKind::invalid, "cannot read '" + path + "': " + ec.message());
  if (size > limit)
    fail(ErrorKind::invalid,
         "cannot read '" + path + "': file is " + std::to_string(size >> 20) + " MiB, larger than the " +
             std::to_string(limit >> 20) + " MiB limit for batch files",
         "split it into several files");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorKind::invalid, "cannot read '" + path + "': permission denied or not a regular file");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text;
}

}  // namespace

File parse_text(const std::string& original, const std::string& source, const std::string& base_dir, const ReadOptions& opts) {
  if (size_t bad_at = invalid_utf8_offset(original); bad_at != std::string::npos) {
    size_t line = 1 + static_cast<size_t>(std::count(original.begin(), original.begin() + static_cast<std::ptrdiff_t>(bad_at), '\n'));
    fail(ErrorKind::invalid, source + ":" + std::to_string(line) + ": not valid UTF-8 (byte " + std::to_string(bad_at) + ")",
         "save the file as UTF-8");
  }
  std::string text = opts.render ? opts.render(original, source) : original;
  File file;
  file.source = source;
  std::vector<YAML::Node> nodes;
  try {
    nodes = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    fail(ErrorKind::invalid, source + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) + ": " + e.msg,
         "check the indentation and quoting around that line");
  }
  int index = 0;
  for (const auto& n : nodes) {
    ++index;
    if (n.IsNull() || !n.IsDefined()) continue;
    Document doc;
    doc.source = source;
    doc.base_dir = base_dir;
    doc.index = index;
    doc.line = n.Mark().line + 1;
    json raw = convert(n, "", doc, source, 0);
    if (raw.is_null()) continue;
    build_document(doc, std::move(raw), opts);
    file.documents.push_back(std::move(doc));
  }
  return file;
}

std::vector<File> read_files(const std::string& path, const ReadOptions& opts) {
  std::vector<File> out;
  if (path != "-" && fs::is_directory(path)) {
    std::vector<fs::path> entries;
    for (const auto& e : fs::directory_iterator(path)) {
      auto ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml")) entries.push_back(e.path());
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
