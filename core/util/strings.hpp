#pragma once
// Small string helpers shared by every module.

#include <string>
#include <string_view>
#include <vector>

namespace emco {

std::vector<std::string> split(std::string_view text, char sep);          // keeps empty fields
std::string join(const std::vector<std::string>& parts, std::string_view sep);
bool starts_with(std::string_view text, std::string_view prefix);
bool ends_with(std::string_view text, std::string_view suffix);
std::string to_lower(std::string_view text);
std::string trim(std::string_view text);                                  // ASCII whitespace
// %XX escapes of a URL query value decoded; "+" is kept (not a space), as
// EMCO's servers read "cluster=p+c"; a malformed escape stays as written.
std::string url_decode(const std::string& s);
// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word` within distance max(2, len/3), or "".
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace emco
