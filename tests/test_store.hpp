#pragma once
// Which workspace backend a test run uses. ctest registers the suites that
// keep workspaces twice (tests/CMakeLists.txt): labelled store-sqlite, and
// labelled store-postgresql with EMCO_TEST_STORE set to the base URL of the
// throwaway server the ctest fixture "pg" starts
// (scripts/pg-test-server.sh). Fixtures ask fresh_store() for the location
// of each new workspace: "" (SQLite, the default) or that URL naming a
// schema of its own, so tests never share rows.
//
// When EMCO_TEST_STORE is set but its server's socket is absent
// (PostgreSQL not installed, the fixture not run), the whole test binary
// says so and exits with k_skip (ctest's SKIP_RETURN_CODE): skipped, not
// passed. Header-only; no libpq (core/store/postgresql alone includes it).
// open_test_store() and init_test_workspace() are for suites linking
// emco_store; the rest needs nothing of emco's.

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <memory>
#include <string>

#include "core/store/store.hpp"
#include "core/store/workspace.hpp"

namespace emco::test {

constexpr int k_skip = 77;

// EMCO_TEST_STORE, or "" when the run is SQLite's.
inline std::string test_store_base() {
  const char* v = std::getenv("EMCO_TEST_STORE");
  return v ? v : "";
}

inline bool testing_postgresql() { return !test_store_base().empty(); }

// `url` with `param=value` added to its query.
inline std::string with_param(const std::string& url, const std::string& param) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + param;
}

// A new workspace location: "" for SQLite, else the base URL with a search
// path naming a schema no other test uses (the backend creates it).
inline std::string fresh_store() {
  const std::string base = test_store_base();
  if (base.empty()) return "";
  static std::atomic<int> n{0};
  static const unsigned salt = std::random_device{}();
  const std::string schema = "t" + std::to_string(::getpid()) + "_" + std::to_string(salt % 100000) + "_" +
                             std::to_string(++n);
  return with_param(base, "options=-csearch_path%3D" + schema);
}

// A private store: Store::open_memory() on SQLite, a fresh schema on
// PostgreSQL (its module files in a directory of this process's).
inline std::unique_ptr<store::Store> open_test_store() {
  const std::string where = fresh_store();
  if (where.empty()) return store::Store::open_memory();
  return store::Store::open_location(
      where, std::filesystem::temp_directory_path() / ("emco-memory-" + std::to_string(::getpid())));
}

// A new workspace in `dir` on the run's backend (init_workspace).
inline store::Workspace init_test_workspace(const std::filesystem::path& dir, bool& created) {
  return store::init_workspace(dir, created, fresh_store());
}

// A shell command printing "ok" when the workspace database at `root`
// (a workspace directory) is sound: SQLite's integrity_check; on
// PostgreSQL, no row of the tables the schema ties together (references,
// contents, parents, AppContext children) names a row that is gone.
inline std::string integrity_command(const std::filesystem::path& root) {
  if (!std::filesystem::exists(root / ".emco" / "store"))
    return "sqlite3 '" + (root / ".emco" / "emco.db").string() + "' 'PRAGMA integrity_check'";
  return "psql -qAt -d \"$(cat '" + (root / ".emco" / "store").string() +
         "')\" -c \"SELECT CASE WHEN "
         "(SELECT count(*) FROM refs f LEFT JOIN resources t ON t.id = f.to_id LEFT JOIN resources o ON o.id = "
         "f.from_id WHERE t.id IS NULL OR o.id IS NULL) + "
         "(SELECT count(*) FROM contents c LEFT JOIN resources r ON r.id = c.resource_id WHERE r.id IS NULL) + "
         "(SELECT count(*) FROM resources r LEFT JOIN resources p ON p.id = r.parent_id WHERE r.parent_id IS NOT "
         "NULL AND p.id IS NULL) + "
         "(SELECT count(*) FROM ac_apps a LEFT JOIN ac_contexts c ON c.id = a.ctx WHERE c.id IS NULL) = 0 "
         "THEN 'ok' ELSE 'orphaned rows' END\"";
}

namespace detail {

// The socket the base URL's host= names (the fixture's server listens only there).
inline bool server_present(const std::string& url) {
  const auto at = url.find("host=");
  if (at == std::string::npos) return true;  // a server elsewhere: let the connection say
  std::string host = url.substr(at + 5, url.find('&', at) - (at + 5));
  std::string port = "5432";
  if (const auto p = url.find("port="); p != std::string::npos) port = url.substr(p + 5, url.find('&', p) - (p + 5));
  return std::filesystem::exists(host + "/.s.PGSQL." + port);
}

inline bool check_server() {
  const std::string base = test_store_base();
  // Anything else would open as a SQLite file named like the URL, in the
  // current directory.
  if (!base.empty() && base.rfind("postgresql://", 0) != 0 && base.rfind("postgres://", 0) != 0) {
    std::fprintf(stderr, "EMCO_TEST_STORE=%s is not a postgresql:// URL (ctest's store-postgresql entries set it)\n",
                 base.c_str());
    std::fflush(stderr);
    ::_exit(2);
  }
  if (!base.empty() && !server_present(base)) {
    std::fprintf(stderr,
                 "SKIPPED: EMCO_TEST_STORE=%s but no PostgreSQL server listens there (install postgresql and "
                 "libpq-dev, or run ctest -L store-sqlite)\n",
                 base.c_str());
    std::fflush(stderr);
    ::_exit(k_skip);
  }
  return true;
}

// Checked once per test binary, before any test runs.
inline const bool k_server_checked = check_server();

}  // namespace detail

}  // namespace emco::test
