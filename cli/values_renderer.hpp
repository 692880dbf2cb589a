#pragma once
// `-v values.yaml`: emcoctl renders each batch file as a Go text/template
// over the values (Go's builtins only, missing keys print "<no value>").

#include <string>

#include "core/manifest/manifest.hpp"

namespace emco::cli {

// Reads and parses `values_file` now (Error(invalid) naming -v when it cannot
// be read); the renderer executes each file's text as a template named by
// its source.
manifest::Renderer make_values_renderer(const std::string& values_file);

}  // namespace emco::cli
