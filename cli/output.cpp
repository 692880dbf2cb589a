#include "cli/output.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::cli {

using nlohmann::json;

const std::vector<std::string>& format_names() {
  static const std::vector<std::string> n = {"table", "json", "yaml", "name"};
  return n;
}

Format parse_format(const std::string& text) {
  if (text == "table" || text.empty()) return Format::table;
  if (text == "json") return Format::json;
  if (text == "yaml") return Format::yaml;
  if (text == "name") return Format::name;
  fail(ErrorKind::usage, "unknown output format '" + text + "'", "allowed formats are " + join(format_names(), ", "));
}

void print_table(std::ostream& out, const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size());
  for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size() && i < width.size(); ++i) width[i] = std::max(width[i], r[i].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t i = 0; i < cells.size(); ++i) {
      s += cells[i];
      if (i + 1 < cells.size()) s += std::string(width[i] - cells[i].size() + 2, ' ');
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
}

void print_json(std::ostream& out, const json& value) { out << value.dump(2) << "\n"; }

namespace {

void emit(YAML::Emitter& e, const json& v) {
  switch (v.type()) {
    case json::value_t::object:
      e << YAML::BeginMap;
      for (auto it = v.begin(); it != v.end(); ++it) {
        e << YAML::Key << it.key() << YAML::Value;
        emit(e, it.value());
      }
      e << YAML::EndMap;
      break;
    case json::value_t::array:
      e << YAML::BeginSeq;
      for (const auto& x : v) emit(e, x);
      e << YAML::EndSeq;
      break;
    case json::value_t::string: {
      const auto& s = v.get_ref<const std::string&>();
      // Quote strings YAML would read back as another type.
      static const std::vector<std::string> special = {"true", "false", "null", "~", "yes", "no", "on", "off", ""};
      bool numeric = !s.empty() && s.find_first_not_of("0123456789.-+eE") == std::string::npos;
      if (numeric || std::find(special.begin(), special.end(), to_lower(s)) != special.end())
        e << YAML::DoubleQuoted << s;
      else if (s.find('\n') != std::string::npos)
        e << YAML::Literal << s;
      else
        e << s;
      break;
    }
    case json::value_t::null: e << YAML::Null; break;
    default: e << v.dump(); break;
  }
}

}  // namespace

void print_yaml(std::ostream& out, const json& value) {
  YAML::Emitter e;
  e.SetIndent(2);
  emit(e, value);
  out << e.c_str() << "\n";
}

}  // namespace emco::cli
