#pragma once
// What a command handler needs: the parsed invocation's global options, the
// output streams, the clock, the runtime, and the workspace store (opened on
// first use).

#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "core/lifecycle/runtime.hpp"
#include "core/store/store.hpp"
#include "core/util/clock.hpp"

namespace emco::cli {

class Context {
public:
  // `plugins` gives the plugins, built on first use (runtime()).
  Context(std::ostream& out, std::ostream& err, std::optional<std::string> workspace_flag,
          const lifecycle::Runtime& (*plugins)());
  // A context writing to other streams over the same workspace as `parent`.
  Context(std::ostream& out, std::ostream& err, Context& parent);
  // A context over the same workspace and plugins with a connection to the
  // store of its own (opened on first use): for another thread, as the
  // store's contract is one thread per connection.
  std::unique_ptr<Context> sibling(std::ostream& out, std::ostream& err);

  std::ostream& out;
  std::ostream& err;
  bool quiet = false;
  // Set by commands that deliver queued work themselves (lifecycle
  // operations, `emco sync`): no background resume after them.
  bool delivers = false;

  store::Store& store();               // finds and opens the workspace (Error(workspace) if none)
  bool store_opened() const { return m_parent ? m_parent->store_opened() : m_store != nullptr; }
  const store::Workspace& workspace();
  Clock& clock() { return system_clock(); }
  // The plugins (controllers, delivery, kinds) the composition root gave,
  // built on the first call.
  const lifecycle::Runtime& runtime() const { return m_runtime(); }
  // A message for a human on stderr ("emco: ..."), suppressed by --quiet.
  void note(const std::string& message);
  void warn(const std::string& message);  // "emco: warning: ..." always

private:
  std::optional<std::string> m_workspace_flag;
  std::optional<store::Workspace> m_workspace;
  std::unique_ptr<store::Store> m_store;
  Context* m_parent = nullptr;
  const lifecycle::Runtime& (*m_runtime)();
};

}  // namespace emco::cli
