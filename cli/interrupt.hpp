#pragma once
// SIGINT/SIGTERM while emco waits for a delivery or redraws --watch: the wait
// ends and the work stays queued ('emco sync' resumes it) instead of the
// process dying in the middle of a transaction.

#include <atomic>
#include <csignal>

namespace emco::cli {

// Set by SIGINT or SIGTERM while an InterruptGuard is alive; cleared when a
// guard is made. Lifecycle waits poll it (OperationOptions::interrupt).
extern std::atomic<bool> g_interrupted;

// Catches SIGINT and SIGTERM for its lifetime, restoring the previous
// handlers when it goes.
class InterruptGuard {
public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

private:
  struct sigaction m_old_int {};
  struct sigaction m_old_term {};
};

}  // namespace emco::cli
