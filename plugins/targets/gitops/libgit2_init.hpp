#pragma once
// Internal to plugins/targets/gitops: initialises libgit2 exactly once per
// process (never shut down: other threads may still hold libgit2 objects).

namespace emco::gitops {

void ensure_libgit2();
// Starts ensure_libgit2() on a thread of its own (once per process; the
// thread is joined at exit) and returns at once: a later ensure_libgit2()
// waits for it to finish.
void warm_up_libgit2();

}  // namespace emco::gitops
