#include "core/k8s/yaml.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "core/yaml/yaml.hpp"

namespace emco::k8s {

using nlohmann::json;

namespace {

bool parse_int(const std::string& s, long long& out) {
  if (s.empty()) return false;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t j = i; j < s.size(); ++j)
    if (s[j] < '0' || s[j] > '9') return false;
  try {
    out = std::stoll(s);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

bool parse_float(const std::string& s, double& out) {
  if (s.empty()) return false;
  bool digit = false;
  for (char c : s) {
    if (c >= '0' && c <= '9')
      digit = true;
    else if (c != '.' && c != 'e' && c != 'E' && c != '-' && c != '+')
      return false;
  }
  if (!digit) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end && *end == '\0' && std::isfinite(out);
}

json scalar(const yaml::Document& d, yaml::NodeId id) {
  std::string s(d.scalar(id));
  if (!d.is_plain(id)) return s;  // quoted, block or tagged: a string
  if (s == "null" || s == "~" || s == "Null" || s == "NULL" || s.empty()) return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  long long i;
  if (parse_int(s, i)) return i;
  double f;
  if (parse_float(s, f)) return f;
  return s;
}

json convert(const yaml::Document& d, yaml::NodeId id, yaml::AliasBudget& budget, bool via_alias, int depth) {
  // aliases can nest a document deeper than the parser's limit; bound the recursion here
  if (depth > 10000) fail(ErrorKind::invalid, "invalid YAML: document nested too deeply");
  if (d.node(id).type == yaml::NodeType::alias) {
    id = d.target(id);
    via_alias = true;
  }
  if (via_alias) budget.charge();
  switch (d.node(id).type) {
    case yaml::NodeType::scalar: return scalar(d, id);
    case yaml::NodeType::sequence: {
      json arr = json::array();
      for (std::size_t i = 0; i < d.size(id); ++i) arr.push_back(convert(d, d.item(id, i), budget, via_alias, depth + 1));
      return arr;
    }
    case yaml::NodeType::mapping: {
      json obj = json::object();
      for (std::size_t i = 0; i < d.size(id); ++i) {
        yaml::NodeId k = d.target(d.key(id, i));
        if (d.node(k).type != yaml::NodeType::scalar)
          fail(ErrorKind::invalid, "invalid YAML: line " + std::to_string(d.node(k).line) + ": mapping keys must be scalars");
        obj[std::string(d.scalar(k))] = convert(d, d.value(id, i), budget, via_alias, depth + 1);
      }
      return obj;
    }
    case yaml::NodeType::alias: break;  // targets are never aliases
  }
  return nullptr;
}

}  // namespace

json parse_json_or_yaml(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && (text[first] == '{' || text[first] == '[')) {
    json parsed = json::parse(text, nullptr, false);
    if (!parsed.is_discarded()) return parsed;
  }
  try {
    std::vector<yaml::Document> docs = yaml::parse(text);
    if (docs.size() > 1) fail(ErrorKind::invalid, "expected one YAML document, found " + std::to_string(docs.size()));
    if (docs.empty()) return nullptr;
    yaml::AliasBudget budget(docs[0]);
    return convert(docs[0], docs[0].root(), budget, false, 0);
  } catch (const yaml::ParseError& e) {
    fail(ErrorKind::invalid, "invalid YAML: " + e.goyaml_text());
  }
}

}  // namespace emco::k8s
