#pragma once
// The dashboard's files (cli/serve/dashboard/*), compiled into emco by
// cmake/EmbedAssets.cmake.

#include <string_view>
#include <vector>

namespace emco::cli::serve {

struct EmbeddedAsset {
  std::string_view path;  // "/index.html", "/app.js", ...
  std::string_view data;  // the file's bytes
};

// Every file of cli/serve/dashboard, in name order.
const std::vector<EmbeddedAsset>& dashboard_assets();

}  // namespace emco::cli::serve
