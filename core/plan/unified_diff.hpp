#pragma once
// A unified diff of two texts, line by line, as `diff -u` prints hunks
// (without the ---/+++ header lines, which callers write).

#include <string>

namespace emco::plan {

// Hunks "@@ -a,b +c,d @@" with `context` lines around each change; "" when
// the texts are equal. A missing final newline is shown as in diff -u.
std::string unified_diff(const std::string& old_text, const std::string& new_text, int context = 3);

}  // namespace emco::plan
