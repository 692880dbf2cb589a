#pragma once
// Semantic versions and constraint ranges as Helm uses them (Masterminds/semver v3):
// chart version validation, dependency version matching and the kubeVersion check.

#include <optional>
#include <string>
#include <string_view>

namespace emco::helm {

struct SemVersion {
  unsigned long long major = 0, minor = 0, patch = 0;
  std::string prerelease;
  std::string metadata;
};

// Masterminds' lenient NewVersion: optional "v", minor and patch may be omitted.
std::optional<SemVersion> parse_semver(std::string_view text);
int compare_semver(const SemVersion& a, const SemVersion& b);  // -1, 0, 1 (metadata ignored)

// Helm's IsCompatibleRange: false when either side does not parse. Supports ||, AND by
// ',' or space, = != > < >= <= ~ ~> ^, wildcards x X *, and "A - B" ranges. A version with
// a prerelease only satisfies a constraint that itself names a prerelease. An empty
// constraint means "*".
bool semver_satisfies(std::string_view constraint, std::string_view version);

}  // namespace emco::helm
