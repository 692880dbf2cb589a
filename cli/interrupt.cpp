#include "cli/interrupt.hpp"

namespace emco::cli {

std::atomic<bool> g_interrupted{false};

namespace {

extern "C" void on_interrupt(int) { g_interrupted = true; }

}  // namespace

InterruptGuard::InterruptGuard() {
  g_interrupted = false;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &m_old_int);
  sigaction(SIGTERM, &sa, &m_old_term);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &m_old_int, nullptr);
  sigaction(SIGTERM, &m_old_term, nullptr);
}

}  // namespace emco::cli
