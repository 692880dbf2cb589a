#pragma once
// The status views of lifecycle resources with a context (emco dig status,
// emco cluster network status): EMCO's query flags and the table form of a
// status from core/status.

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cli/output.hpp"
#include "cli/table.hpp"
#include "core/status/status.hpp"

namespace emco::cli {

// The query from the status flags; `format` gets the table|json|yaml part of -o.
status::Query query_of(const Invocation& inv, Format& format);
// The flags of a status command (status_flags()).
std::vector<FlagSpec> status_flags();
// "<what>  state <last state>  revision <n>" from the status' stateInfo.
void print_status_heading(std::ostream& out, const std::string& what, const nlohmann::json& s);
// The deployed/ready summary and the list or per-resource table of a status.
void print_status_table(std::ostream& out, const nlohmann::json& s, const status::Query& q);

}  // namespace emco::cli
