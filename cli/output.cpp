#include "cli/output.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/template/value.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::cli {

using nlohmann::json;

namespace {

// The printer registry: each format with its name on the command line.
struct NamedFormat {
  Format format;
  const char* name;
};
constexpr NamedFormat k_formats[] = {
    {Format::table, "table"}, {Format::json, "json"}, {Format::yaml, "yaml"}, {Format::name, "name"}};

}  // namespace

const std::vector<std::string>& format_names() {
  static const std::vector<std::string> n = [] {
    std::vector<std::string> v;
    for (const auto& f : k_formats) v.push_back(f.name);
    return v;
  }();
  return n;
}

Format parse_format(const std::string& text) {
  if (text.empty()) return Format::table;
  for (const auto& f : k_formats)
    if (text == f.name) return f.format;
  fail(ErrorKind::usage, "unknown output format '" + text + "'", "allowed formats are " + join(format_names(), ", "));
}

FlagSpec output_flag(const std::vector<Format>& formats, const std::string& human_name) {
  std::vector<std::string> choices;
  choices.reserve(formats.size());
  for (Format f : formats)
    for (const auto& named : k_formats)
      if (named.format == f) choices.push_back(f == Format::table ? human_name : named.name);
  return {.name = "output", .short_name = 'o', .value = "FORMAT", .help = "output format", .choices = choices,
          .default_value = choices.front()};
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

// kubectl's -o yaml: sigs.k8s.io/yaml over goyaml.v2, the emitter Helm's
// toYaml uses too (keys sorted, strings quoted when YAML would read them as
// another type, long strings folded at 80 columns).
void print_yaml(std::ostream& out, const json& value) { out << tmpl::to_yaml(tmpl::Value::from_json(value)); }

}  // namespace emco::cli
