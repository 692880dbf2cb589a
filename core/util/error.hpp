#pragma once
// emco's error type and the one table that maps error kinds to exit codes.
//
// Every failure a user can cause or act on is thrown as emco::Error with a
// kind, a message in git's style (lowercase, no final full stop, the subject
// in 'quotes') and an optional hint. cli/main.cpp catches it once, prints
//   emco: error: <message>
//   hint: <hint>
// and exits with exit_code(kind). Internal bugs are any other exception and
// exit with ExitCode::internal.

#include <stdexcept>
#include <string>
#include <vector>

namespace emco {

// Documented exit codes (README "Exit codes", manpages/emco.1).
enum class ExitCode : int {
  ok = 0,
  failed = 1,         // an operation ran and failed (deploy failed, a check failed)
  changes = 2,        // `emco dig plan`: the plan contains changes (CI contract)
  invalid = 3,        // bad input: YAML syntax, unknown field, invalid name/spec
  not_found = 4,      // a named resource, parent or reference does not exist
  conflict = 5,       // exists already, still referenced, state does not allow it
  workspace = 6,      // no workspace, unreadable or newer-schema workspace
  unreachable = 7,    // a cluster or git remote could not be reached or refused us
  pending = 8,        // waited up to --timeout; the work continues later
  unsupported = 9,    // the input is EMCO's, but emco does not implement that feature yet
  usage = 64,         // bad command line (unknown flag, missing argument)
  internal = 70,      // a bug in emco
};

enum class ErrorKind {
  failed,
  invalid,
  not_found,
  conflict,
  workspace,
  unreachable,
  pending,
  unsupported,  // a feature emco stores but does not run yet (a controller, an operation)
  usage,
  internal,
};

ExitCode exit_code(ErrorKind kind);

class Error : public std::runtime_error {
public:
  Error(ErrorKind kind, std::string message, std::string hint = {});

  ErrorKind kind() const { return m_kind; }
  const std::string& message() const { return m_message; }
  const std::string& hint() const { return m_hint; }

  // A copy with `prefix + ": "` in front of the message (adds file:line or the
  // resource an error happened in while it travels up); unchanged when prefix is empty.
  Error with_context(const std::string& prefix) const;

private:
  ErrorKind m_kind;
  std::string m_message;
  std::string m_hint;
};

[[noreturn]] void fail(ErrorKind kind, std::string message, std::string hint = {});

}  // namespace emco

namespace emco {
// The documented meaning of every exit code, in code order. README.md and
// manpages/emco.1 show this table; tests/cli checks they agree with it.
struct ExitCodeDoc {
  int code;
  const char* meaning;
};
const std::vector<ExitCodeDoc>& exit_code_docs();
}  // namespace emco
