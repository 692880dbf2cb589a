#pragma once
// Helm chart and profile packages attached to apps and app profiles.

#include <string>

namespace emco::manifest {

// Returns the .tgz bytes for an app's chart given a path to a .tgz/.tar.gz
// package or a chart directory (packed as <app>/...). Checks that it is a
// gzip tar whose top-level directory is named exactly like the app (leading
// "./" allowed) and holds Chart.yaml. Throws Error(invalid) naming the problem.
std::string load_chart_package(const std::string& path, const std::string& app);

// Same for an app profile: a .tgz or a directory, holding manifest.yaml at
// its root (optionally below one top-level directory).
std::string load_profile_package(const std::string& path);

// Validates bytes already read as a chart package (see load_chart_package).
void check_chart_package(const std::string& bytes, const std::string& app, const std::string& source);

}  // namespace emco::manifest
