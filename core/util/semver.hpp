#pragma once
// Semantic versions and constraints as Masterminds/semver v3 reads them: the one
// implementation behind Helm (chart version validation, dependency version matching,
// the kubeVersion check) and Sprig's semver/semverCompare template functions.
//
// Versions (NewVersion, lenient): an optional "v", MAJOR[.MINOR[.PATCH]], then an optional
// -PRERELEASE and +METADATA of dot-separated [0-9A-Za-z-] identifiers; a numeric
// prerelease identifier may not have a leading zero. Precedence is semver 2.0's (metadata
// ignored, numeric identifiers below alphanumeric ones, a release above its prereleases).
//
// Constraints (NewConstraint): alternatives joined by "||", each a list of comparisons
// joined by "," or spaces; "A - B" is ">= A, <= B". Operators: = != > < >= <= (and => =<),
// ~ (~>: same major and minor, or same major when only the major is given), ^ (same major;
// for 0.x the same minor; for 0.0.z exactly z). x, X and * (or omitted parts) are
// wildcards: "1.2.x" and "1.2" are 1.2.*, "*" any version. A version with a prerelease
// satisfies a comparison only when that comparison names a prerelease itself
// (">=1.2.3-0" admits 1.5.0-beta, ">=1.2.3" does not), as Masterminds checks term by term.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace emco::semver {

struct Version {
  std::uint64_t major = 0, minor = 0, patch = 0;
  std::string prerelease;
  std::string metadata;
  std::string original;  // the text parsed, as given
};

// nullopt when `text` is not a version (Masterminds' "Invalid Semantic Version").
std::optional<Version> parse_version(std::string_view text);
// -1, 0 or 1 by semver precedence (metadata ignored).
int compare(const Version& a, const Version& b);

// One comparison of a constraint ("<= 2.x"); the fields are the implementation's.
struct Comparison {
  std::string op;  // "", "=", "!=", ">", "<", ">=", "<=", "~", "^" (=> =< ~> normalised)
  Version con;     // the version, wildcards as 0
  bool dirty = false, minor_dirty = false, patch_dirty = false;
};

struct Constraints {
  std::vector<std::vector<Comparison>> alternatives;  // OR of ANDs
};

// Throws emco::Error(invalid) "improper constraint: SEGMENT" (Masterminds' wording) when
// a "||" segment does not parse. An empty segment is not a constraint.
Constraints parse_constraints(std::string_view text);
bool satisfies(const Constraints& constraints, const Version& version);
// Helm's IsCompatibleRange: false when the constraint or the version does not parse. An
// empty constraint means any version (a chart dependency without a version).
bool satisfies(std::string_view constraint, std::string_view version);

}  // namespace emco::semver
