#pragma once
// The base workspace most end-to-end cases start from: controllers, a
// provider with two clusters (c1 labelled 'edge'), project proj1 with an admin
// logical cloud, composite app ca/v1 with app collectd, a composite profile,
// DIG dig1 with its intents, and an approved DIG dig-approved.

#include <string>

#include "tests/cli/support.hpp"

namespace emco::test {

// The batch file that builds the base state (paths relative to the sandbox).
const std::string& base_yaml();
// A tiny kubeconfig (no real cluster behind it).
const std::string& kubeconfig_yaml();

// A sandbox holding the base workspace and its input files (kubeconfig,
// collectd.tgz, profile.tgz). Built once per test process, then copied.
const Sandbox& base_sandbox();

// One emcoctl document: version, resourceContext.anchor, then `rest`
// (which starts at line 4 of the document).
std::string doc(const std::string& anchor, const std::string& rest = "");

}  // namespace emco::test
