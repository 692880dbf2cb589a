#pragma once
// The workspace: a directory holding `.emco/` (like git's `.git/`), with the
// SQLite database `.emco/emco.db`. `.emco/` is mode 0700 and everything in it
// 0600 (the process umask is 077; see cli/main.cpp).

#include <filesystem>
#include <optional>
#include <string>

namespace emco::store {

struct Workspace {
  std::filesystem::path root;  // the directory that contains .emco/
  std::filesystem::path dir() const { return root / ".emco"; }
  std::filesystem::path database() const { return dir() / "emco.db"; }
};

// Creates `<dir>/.emco/` and an empty, migrated database. Re-running on an
// existing workspace is harmless and returns it (like `git init`); `created`
// tells which happened.
Workspace init_workspace(const std::filesystem::path& dir, bool& created);

// Finds the workspace: `explicit_dir` (from --workspace) if given, else
// $EMCO_WORKSPACE, else the nearest ancestor of `cwd` holding `.emco/`.
// Throws Error(workspace) with a hint to run `emco init` when there is none.
Workspace find_workspace(const std::optional<std::string>& explicit_dir, const std::filesystem::path& cwd);

}  // namespace emco::store
