#pragma once
// The workspace: a directory holding `.emco/` (like git's `.git/`), where
// the workspace database is kept:
//   * SQLite (the default): the file `.emco/emco.db`;
//   * a database server (team workspaces, issue 21): `.emco/store` holds its
//     URL ("postgresql://..."), one line, never a password (the backend
//     refuses a URL with one; libpq reads credentials from PGPASSWORD,
//     ~/.pgpass or a service file). Everything else of the workspace is in
//     that database; `.emco/` keeps only files that are local by nature (the
//     GitOps caches).
// `.emco/` is mode 0700 and everything in it 0600 (the process umask is
// 077; see cli/main.cpp).

#include <filesystem>
#include <optional>
#include <string>

namespace emco::store {

struct Workspace {
  std::filesystem::path root;  // the directory that contains .emco/
  std::filesystem::path dir() const { return root / ".emco"; }
  std::filesystem::path database() const { return dir() / "emco.db"; }
  std::filesystem::path store_file() const { return dir() / "store"; }
  // Where the workspace database is: the URL in .emco/store, else the
  // SQLite file's path.
  std::string location() const;
};

// True when `location` names a database server ("scheme://...") rather than
// a SQLite file.
bool is_server_location(const std::string& location);
// True when a server URL has a password in it (user:password@ or
// password=): emco refuses such a URL rather than keep it.
bool carries_password(const std::string& location);
// `location` fit for a message: a URL with a password shows its scheme only.
std::string redacted(const std::string& location);

// Creates `<dir>/.emco/` and an empty, migrated database: a SQLite file when
// `store` is empty, else the database at the URL `store` (recorded in
// .emco/store). Re-running on an existing workspace is harmless and returns
// it (like `git init`); `created` tells which happened. Throws
// Error(workspace) when `store` differs from the store the workspace
// already has.
Workspace init_workspace(const std::filesystem::path& dir, bool& created, const std::string& store = {});

// Finds the workspace: `explicit_dir` (from --workspace) if given, else
// $EMCO_WORKSPACE, else the nearest ancestor of `cwd` holding `.emco/`
// with a database or a store URL. Throws Error(workspace) with a hint to run
// `emco init` when there is none.
Workspace find_workspace(const std::optional<std::string>& explicit_dir, const std::filesystem::path& cwd);

}  // namespace emco::store
