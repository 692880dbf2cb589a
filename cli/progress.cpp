#include "cli/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <sstream>
#include <thread>

#include "cli/interrupt.hpp"

namespace emco::cli {

using namespace std::chrono;

std::string clock_text(milliseconds d) {
  auto s = duration_cast<seconds>(d).count();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  return buf;
}

ProgressView::ProgressView(Context& ctx, bool enabled)
    : m_ctx(ctx), m_enabled(enabled && !ctx.quiet), m_tty(::isatty(2) == 1) {}

void ProgressView::update(const std::string& event, const sync::Progress& p) {
  if (!m_enabled) return;
  std::string verb = event == "Terminate" ? "terminating" : event == "UpdateDelete" ? "removing" :
                     event == "Update" ? "updating" : "instantiating";
  std::ostringstream line;
  line << verb << " ";
  if (m_tty) {
    const int width = 24;
    int filled = p.jobs ? static_cast<int>((p.done + p.failed) * width / p.jobs) : width;
    line << "[" << std::string(static_cast<size_t>(filled), '#') << std::string(static_cast<size_t>(width - filled), '.') << "] ";
  }
  line << (p.done + p.failed) << "/" << p.jobs << " app clusters";
  if (p.failed) line << ", " << p.failed << " failed";
  if (p.retrying) line << ", " << p.retrying << " retrying";
  line << "  " << p.steps_done << "/" << p.steps << " resources  " << clock_text(p.elapsed);
  std::string text = line.str();
  if (m_tty) {
    m_ctx.err << "\r\033[K" << text << std::flush;
    m_drawn = true;
    return;
  }
  // Logs and pipes get a line when the counts change, but not more often
  // than every 2 seconds (10 when nothing changed), and always the last one.
  std::string key = verb + std::to_string(p.done) + "/" + std::to_string(p.failed) + "/" + std::to_string(p.retrying);
  auto now = steady_clock::now();
  if (key == m_last_key && now - m_last_print < seconds(10)) return;
  if (now - m_last_print < seconds(2) && p.done + p.failed < p.jobs) return;
  m_last_key = key;
  m_last_print = now;
  m_ctx.err << "emco: " << text << "\n";
}

void ProgressView::finish() {
  if (m_drawn) m_ctx.err << "\n";
  m_drawn = false;
}

int watchable(Context& ctx, const Invocation& inv, const std::function<void(std::ostream&)>& show) {
  if (!inv.has("watch")) {
    show(ctx.out);
    return 0;
  }
  InterruptGuard guard;
  bool tty = ::isatty(1) == 1;
  while (!g_interrupted) {
    // A whole frame at once, so a slow query never shows a half-drawn screen.
    std::ostringstream frame;
    show(frame);
    if (tty) ctx.out << "\033[H\033[J";
    ctx.out << frame.str() << std::flush;
    for (int i = 0; i < 20 && !g_interrupted; ++i) std::this_thread::sleep_for(milliseconds(100));
    if (!tty) ctx.out << "\n";
  }
  return 0;
}

}  // namespace emco::cli
