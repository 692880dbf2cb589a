#pragma once
// Internal to plugins/targets/gitops: initialises libgit2 exactly once per
// process (never shut down: other threads may still hold libgit2 objects).

namespace emco::gitops {

void ensure_libgit2();

}  // namespace emco::gitops
