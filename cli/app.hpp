#pragma once
// The program behind main(): parse, run, map errors to exit codes.

#include <iosfwd>
#include <string>
#include <vector>

namespace emco::cli {

// Runs emco with `args` (argv without the program name). Prints errors in
// git's style ("emco: error: ...", "hint: ...") and returns the exit code.
// Once per process, which exits when it returns: a workspace connection that
// only read is left for the exit to drop (store::Store::leave_open_at_exit).
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace emco::cli
