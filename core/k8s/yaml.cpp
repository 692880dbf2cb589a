#include "core/k8s/yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/util/error.hpp"

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

json scalar(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str") return s;  // quoted
  if (s == "null" || s == "~" || s == "Null" || s == "NULL" || s.empty()) return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  long long i;
  if (parse_int(s, i)) return i;
  double d;
  if (parse_float(s, d)) return d;
  return s;
}

json convert(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      return scalar(node);
    case YAML::NodeType::Sequence: {
      json arr = json::array();
      for (const auto& item : node) arr.push_back(convert(item));
      return arr;
    }
    case YAML::NodeType::Map: {
      json obj = json::object();
      for (const auto& kv : node) obj[kv.first.as<std::string>()] = convert(kv.second);
      return obj;
    }
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
    std::vector<YAML::Node> docs = YAML::LoadAll(std::string(text));
    if (docs.size() > 1) fail(ErrorKind::invalid, "expected one YAML document, found " + std::to_string(docs.size()));
    if (docs.empty()) return nullptr;
    return convert(docs[0]);
  } catch (const YAML::Exception& e) {
    fail(ErrorKind::invalid, std::string("invalid YAML: ") + e.what());
  }
}

}  // namespace emco::k8s
