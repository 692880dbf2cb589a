#pragma once
// Test fixture for the planner: a workspace loaded from emcoctl documents
// (the shared upstream flows or documents written by a test), with chart and
// profile packages built in a temporary directory.

#include <filesystem>
#include <memory>
#include <string>

#include "core/appcontext/appcontext.hpp"
#include "core/plan/plan.hpp"
#include "core/store/store.hpp"

namespace emco::test {

namespace fs = std::filesystem;

// ../shared/emco-flows (EMCO_FLOWS overrides); empty path when absent.
fs::path flows_dir();

class Workspace {
public:
  Workspace();
  ~Workspace();
  store::Store& store() { return *m_store; }
  const fs::path& dir() const { return m_dir; }
  // Writes `text` to dir()/name and returns the path.
  fs::path write(const std::string& name, const std::string& text);
  // gzip tar of `src`'s contents (entries "./..."), written to dir()/name.
  fs::path pack(const fs::path& src, const std::string& name);
  // Applies the declarative documents of `file` (lifecycle anchors skipped),
  // rendering it with the values file first when given.
  void apply(const fs::path& file, const fs::path& values = {});
  void apply_text(const std::string& yaml);

private:
  fs::path m_dir;
  std::unique_ptr<store::Store> m_store;
};

// Planner options with the built-in controllers (plugins/builtin.cpp).
plan::Options plan_options();

// A deterministic text form of a context: meta, apps, clusters with groups,
// resources in order with hooks, and every distinct content once.
std::string dump(const appcontext::AppContext& ctx);

// Compares `actual` with tests/plan/golden/<name>; EMCO_UPDATE_GOLDEN=1 rewrites it.
void check_golden(const std::string& name, const std::string& actual);

}  // namespace emco::test
