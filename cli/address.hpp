#pragma once
// Resource addresses on the command line.

#include <string>

#include "core/resource/kinds.hpp"

namespace emco::cli {

// Resolves a resource address: an anchor ("cluster-providers/p/clusters/c")
// or its key values joined by '/' ("p/c"), for a resource of kind `k`
// described by `address` ("PROVIDER/CLUSTER", used in the hint).
// `parent_only`: the text names the parent of k's collection (for list).
// Throws Error(usage) for text of the wrong shape or kind, Error(invalid)
// for a name that breaks the naming rule.
resource::Key resolve_address(const resource::Kind& k, const std::string& text, const std::string& address,
                              bool parent_only = false);

}  // namespace emco::cli
