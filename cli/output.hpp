#pragma once
// Printers for -o table|json|yaml|name. Data goes to stdout; JSON output is
// stable for scripts (sorted keys, one document per invocation).

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cli/table.hpp"

namespace emco::cli {

// The printers, in the order -o lists them.
enum class Format { table, json, yaml, name };
Format parse_format(const std::string& text);  // Error(usage) for unknown formats
const std::vector<std::string>& format_names();  // "table", "json", "yaml", "name"

// The -o/--output flag of a command that prints data in `formats` (named as
// format_names() does), the first one being the default. `human_name` is
// what the command calls its human-readable format (Format::table) when that
// is no table ("text" for `emco dig plan`).
FlagSpec output_flag(const std::vector<Format>& formats = {Format::table, Format::json, Format::yaml, Format::name},
                     const std::string& human_name = "table");

// A text table: header row in capitals, columns padded with two spaces.
void print_table(std::ostream& out, const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);
void print_json(std::ostream& out, const nlohmann::json& value);
void print_yaml(std::ostream& out, const nlohmann::json& value);  // one YAML document

}  // namespace emco::cli
