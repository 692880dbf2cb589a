#include "core/util/error.hpp"

namespace emco {

ExitCode exit_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::failed: return ExitCode::failed;
    case ErrorKind::invalid: return ExitCode::invalid;
    case ErrorKind::not_found: return ExitCode::not_found;
    case ErrorKind::conflict: return ExitCode::conflict;
    case ErrorKind::workspace: return ExitCode::workspace;
    case ErrorKind::unreachable: return ExitCode::unreachable;
    case ErrorKind::pending: return ExitCode::pending;
    case ErrorKind::unsupported: return ExitCode::unsupported;
    case ErrorKind::usage: return ExitCode::usage;
    case ErrorKind::internal: return ExitCode::internal;
  }
  return ExitCode::internal;
}

Error::Error(ErrorKind kind, std::string message, std::string hint)
    : std::runtime_error(message), m_kind(kind), m_message(std::move(message)), m_hint(std::move(hint)) {}

Error Error::with_context(const std::string& prefix) const {
  if (prefix.empty()) return *this;
  return Error(m_kind, prefix + ": " + m_message, m_hint);
}

void fail(ErrorKind kind, std::string message, std::string hint) {
  throw Error(kind, std::move(message), std::move(hint));
}

}  // namespace emco

namespace emco {
const std::vector<ExitCodeDoc>& exit_code_docs() {
  static const std::vector<ExitCodeDoc> docs = {
      {0, "success"},
      {1, "an operation ran and failed (a deployment or a check failed)"},
      {2, "emco dig plan: the plan has changes (nothing failed)"},
      {3, "invalid input: YAML syntax, unknown or mistyped field, invalid name or value"},
      {4, "not found: a named resource, its parent or a referenced resource does not exist"},
      {5, "conflict: the resource exists, is still referenced or has children, or its state forbids the operation"},
      {6, "workspace error: no workspace found, it cannot be opened, or an encrypted secret needs its key"},
      {7, "unreachable: a cluster or git remote could not be reached or refused the credentials"},
      {8, "still pending: waited up to --timeout; the work continues in a later invocation"},
      {9, "not implemented: an EMCO feature emco does not run yet (its controller or operation is missing)"},
      {64, "usage error: unknown command or flag, missing argument"},
      {70, "internal error: a bug in emco (please report it)"},
  };
  return docs;
}
}  // namespace emco
