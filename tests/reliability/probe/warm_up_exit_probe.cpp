// A program that starts libgit2's warm-up (as a GitOps command does) and
// returns from main while it may still run: what a command that fails early
// does. Its test runs it under the fault shim, with the warm-up thread held
// just after OpenSSL registered its exit-time cleanup while the process
// exits, and fails if that cleanup runs before the thread has ended (see
// disk_fault_test.cpp).
//
// argv[1]: milliseconds to wait before returning.

#include <chrono>
#include <cstdlib>
#include <thread>

#include "plugins/targets/gitops/libgit2_init.hpp"

int main(int argc, char** argv) {
  emco::gitops::warm_up_libgit2();
  std::this_thread::sleep_for(std::chrono::milliseconds(argc > 1 ? std::atol(argv[1]) : 0));
  return 3;
}
