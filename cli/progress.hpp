#pragma once
// Live displays: the progress of a delivery on stderr, and --watch's frame
// redrawn on stdout.

#include <chrono>
#include <functional>
#include <ostream>
#include <string>

#include "cli/context.hpp"
#include "cli/table.hpp"
#include "core/sync/engine.hpp"

namespace emco::cli {

// "mm:ss".
std::string clock_text(std::chrono::milliseconds d);

// One line of progress on stderr ("instantiating [####....] 3/8 app clusters
// 12/40 resources 00:07"): redrawn in place on a terminal, otherwise printed
// as plain lines when something changed (at most every few seconds). Silent
// when not `enabled` or under --quiet.
class ProgressView {
public:
  ProgressView(Context& ctx, bool enabled);

  // `event`: the AppContext event being delivered ("Instantiate", "Terminate", ...).
  void update(const std::string& event, const sync::Progress& p);
  // Ends the redrawn line, if one was drawn.
  void finish();

private:
  Context& m_ctx;
  bool m_enabled;
  bool m_tty;
  bool m_drawn = false;
  std::string m_last_key;
  std::chrono::steady_clock::time_point m_last_print{};
};

// Runs `show` on stdout once, or with --watch every 2 seconds until Ctrl-C,
// redrawing the screen on a terminal. Returns the exit code (0).
int watchable(Context& ctx, const Invocation& inv, const std::function<void(std::ostream&)>& show);

}  // namespace emco::cli
