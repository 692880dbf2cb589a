#include "cli/context.hpp"

#include <filesystem>

namespace emco::cli {

Context::Context(std::ostream& o, std::ostream& e, std::optional<std::string> workspace_flag,
                 const lifecycle::Runtime& (*plugins)())
    : out(o), err(e), m_workspace_flag(std::move(workspace_flag)), m_runtime(plugins) {}

Context::Context(std::ostream& o, std::ostream& e, Context& parent)
    : out(o), err(e), m_parent(&parent), m_runtime(parent.m_runtime) {}

std::unique_ptr<Context> Context::sibling(std::ostream& o, std::ostream& e) {
  auto c = std::make_unique<Context>(o, e, std::nullopt, m_runtime);
  c->m_workspace = workspace();
  c->quiet = quiet;
  return c;
}

const store::Workspace& Context::workspace() {
  if (m_parent) return m_parent->workspace();
  if (!m_workspace) m_workspace = store::find_workspace(m_workspace_flag, std::filesystem::current_path());
  return *m_workspace;
}

store::Store& Context::store() {
  if (m_parent) return m_parent->store();
  if (!m_store) m_store = store::Store::open(workspace());
  return *m_store;
}

void Context::note(const std::string& message) {
  if (!quiet) err << "emco: " << message << "\n";
}

void Context::warn(const std::string& message) { err << "emco: warning: " << message << "\n"; }

}  // namespace emco::cli
