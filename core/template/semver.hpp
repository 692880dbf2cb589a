#pragma once
// Masterminds/semver v3 versions and constraints, as Sprig's semver/semverCompare use them
// (internal to core/template).

#include <string>

#include "core/template/value.hpp"

namespace emco::tmpl {

// semverCompare: true when `version` satisfies `constraint` ("^1.2", ">= 1.2.3-0, < 2", "~1.2 || 3.x",
// "1.2 - 1.4"). Throws emco::Error with Masterminds' wording for an invalid constraint or version.
bool semver_satisfies(const std::string& constraint, const std::string& version);
// semver: a map with Major, Minor, Patch (int64), Prerelease, Metadata, Original (strings).
Value semver_value(const std::string& version);

}  // namespace emco::tmpl
