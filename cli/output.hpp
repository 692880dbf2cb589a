#pragma once
// Printers for -o table|json|yaml|name. Data goes to stdout; JSON output is
// stable for scripts (sorted keys, one document per invocation).

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace emco::cli {

enum class Format { table, json, yaml, name };
Format parse_format(const std::string& text);  // Error(usage) for unknown formats
const std::vector<std::string>& format_names();

// A text table: header row in capitals, columns padded with two spaces.
void print_table(std::ostream& out, const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);
void print_json(std::ostream& out, const nlohmann::json& value);
void print_yaml(std::ostream& out, const nlohmann::json& value);  // one YAML document

}  // namespace emco::cli
