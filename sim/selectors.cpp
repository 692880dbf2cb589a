#include "sim/selectors.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::sim::detail {

using nlohmann::json;

namespace {

std::vector<std::string> split_top_level(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!trim(cur).empty() || !out.empty()) out.push_back(trim(cur));
  return out;
}

bool valid_key(const std::string& key) {
  if (key.empty() || key.size() > 316) return false;
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '/')) return false;
  return true;
}

[[noreturn]] void bad_selector(const std::string& part) {
  fail(ErrorKind::invalid, "unable to parse requirement: found '" + part + "', expected: identifier");
}

std::vector<std::string> parse_set(const std::string& rest, const std::string& part) {
  std::string r = trim(rest);
  if (r.size() < 2 || r.front() != '(' || r.back() != ')') bad_selector(part);
  std::vector<std::string> values;
  for (auto& v : split(r.substr(1, r.size() - 2), ',')) values.push_back(trim(v));
  return values;
}

const json* lookup(const json& object, const std::string& path) {
  const json* cur = &object;
  for (const auto& seg : split(path, '.')) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(seg);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

}  // namespace

LabelSelector parse_label_selector(const std::string& text) {
  LabelSelector sel;
  if (trim(text).empty()) return sel;
  for (const auto& part : split_top_level(text)) {
    if (part.empty()) bad_selector(part);
    LabelRequirement req;
    if (part[0] == '!') {
      req.op = LabelRequirement::not_exists;
      req.key = trim(part.substr(1));
    } else if (auto p = part.find("!="); p != std::string::npos) {
      req.op = LabelRequirement::not_equals;
      req.key = trim(part.substr(0, p));
      req.values = {trim(part.substr(p + 2))};
    } else if (auto p2 = part.find("=="); p2 != std::string::npos) {
      req.op = LabelRequirement::equals;
      req.key = trim(part.substr(0, p2));
      req.values = {trim(part.substr(p2 + 2))};
    } else if (auto p3 = part.find('='); p3 != std::string::npos) {
      req.op = LabelRequirement::equals;
      req.key = trim(part.substr(0, p3));
      req.values = {trim(part.substr(p3 + 1))};
    } else if (auto p4 = part.find(" notin "); p4 != std::string::npos) {
      req.op = LabelRequirement::not_in;
      req.key = trim(part.substr(0, p4));
      req.values = parse_set(part.substr(p4 + 7), part);
    } else if (auto p5 = part.find(" in "); p5 != std::string::npos) {
      req.op = LabelRequirement::in;
      req.key = trim(part.substr(0, p5));
      req.values = parse_set(part.substr(p5 + 4), part);
    } else {
      req.op = LabelRequirement::exists;
      req.key = trim(part);
    }
    if (!valid_key(req.key)) bad_selector(part);
    sel.requirements.push_back(std::move(req));
  }
  return sel;
}

bool LabelSelector::matches(const json& object) const {
  static const json empty = json::object();
  const json* labels = lookup(object, "metadata.labels");
  if (!labels || !labels->is_object()) labels = &empty;
  for (const auto& r : requirements) {
    auto it = labels->find(r.key);
    bool has = it != labels->end() && it->is_string();
    std::string value = has ? it->get<std::string>() : std::string();
    bool in_values = has && std::find(r.values.begin(), r.values.end(), value) != r.values.end();
    switch (r.op) {
      case LabelRequirement::equals:
      case LabelRequirement::in:
        if (!in_values) return false;
        break;
      case LabelRequirement::not_equals:
      case LabelRequirement::not_in:
        if (in_values) return false;
        break;
      case LabelRequirement::exists:
        if (!has) return false;
        break;
      case LabelRequirement::not_exists:
        if (has) return false;
        break;
    }
  }
  return true;
}

FieldSelector parse_field_selector(const std::string& text, const std::string& kind) {
  FieldSelector sel;
  if (trim(text).empty()) return sel;
  for (const auto& part : split(text, ',')) {
    FieldRequirement req;
    size_t p;
    size_t len;
    if ((p = part.find("!=")) != std::string::npos) {
      req.negate = true;
      len = 2;
    } else if ((p = part.find("==")) != std::string::npos) {
      len = 2;
    } else if ((p = part.find('=')) != std::string::npos) {
      len = 1;
    } else {
      fail(ErrorKind::invalid, "invalid selector: '" + text + "'; can't understand '" + part + "'");
    }
    req.path = trim(part.substr(0, p));
    req.value = trim(part.substr(p + len));
    bool supported = req.path == "metadata.name" || req.path == "metadata.namespace";
    if (kind == "Pod")
      supported = supported || req.path == "spec.nodeName" || req.path == "status.phase" ||
                  req.path == "spec.restartPolicy" || req.path == "spec.serviceAccountName" ||
                  req.path == "status.podIP";
    if (kind == "Namespace") supported = supported || req.path == "status.phase";
    if (kind == "Secret") supported = supported || req.path == "type";
    if (kind == "Event")
      supported = supported || req.path == "reason" || req.path == "type" || starts_with(req.path, "involvedObject.");
    if (!supported) fail(ErrorKind::invalid, "field label not supported: " + req.path);
    sel.requirements.push_back(std::move(req));
  }
  return sel;
}

bool FieldSelector::matches(const json& object) const {
  for (const auto& r : requirements) {
    const json* v = lookup(object, r.path);
    std::string value;
    if (v && v->is_string())
      value = v->get<std::string>();
    else if (v && !v->is_null())
      value = v->dump();
    bool equal = value == r.value;
    if (equal == r.negate) return false;
  }
  return true;
}

}  // namespace emco::sim::detail
