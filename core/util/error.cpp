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
    case ErrorKind::usage: return ExitCode::usage;
    case ErrorKind::internal: return ExitCode::internal;
  }
  return ExitCode::internal;
}

const char* kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::failed: return "failed";
    case ErrorKind::invalid: return "invalid";
    case ErrorKind::not_found: return "not-found";
    case ErrorKind::conflict: return "conflict";
    case ErrorKind::workspace: return "workspace";
    case ErrorKind::unreachable: return "unreachable";
    case ErrorKind::pending: return "pending";
    case ErrorKind::usage: return "usage";
    case ErrorKind::internal: return "internal";
  }
  return "internal";
}

Error::Error(ErrorKind kind, std::string message, std::string hint)
    : std::runtime_error(message), m_kind(kind), m_message(std::move(message)), m_hint(std::move(hint)) {}

Error Error::with_context(const std::string& prefix) const {
  return Error(m_kind, prefix + ": " + m_message, m_hint);
}

void fail(ErrorKind kind, std::string message, std::string hint) {
  throw Error(kind, std::move(message), std::move(hint));
}

}  // namespace emco
