#include "core/store/sqlite/sqlite_database.hpp"

#include <sqlite3.h>

namespace emco::store::sqlite {

namespace {

constexpr int k_busy_timeout_ms = 600000;  // wait, never report "database is locked"

[[noreturn]] void fail_with(sqlite3* db) { throw DatabaseError(sqlite3_errmsg(db)); }

class SqliteStatement final : public Statement {
public:
  SqliteStatement(sqlite3* db, std::string_view sql) : m_db(db) {
    if (sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &m_stmt,
                           nullptr) != SQLITE_OK)
      fail_with(db);
    if (!m_stmt) throw DatabaseError("empty SQL statement");
  }
  ~SqliteStatement() override { sqlite3_finalize(m_stmt); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  void bind_text(int param, std::string_view text) override {
    check(sqlite3_bind_text64(m_stmt, param, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  }
  void bind_int64(int param, int64_t value) override { check(sqlite3_bind_int64(m_stmt, param, value)); }
  void bind_double(int param, double value) override { check(sqlite3_bind_double(m_stmt, param, value)); }
  void bind_blob(int param, std::string_view bytes) override {
    // A zero-length blob with a null pointer would bind NULL.
    check(sqlite3_bind_blob64(m_stmt, param, bytes.empty() ? "" : bytes.data(), bytes.size(), SQLITE_TRANSIENT));
  }
  void bind_null(int param) override { check(sqlite3_bind_null(m_stmt, param)); }

  bool step() override {
    switch (sqlite3_step(m_stmt)) {
      case SQLITE_ROW: return true;
      case SQLITE_DONE: return false;
      default: {
        // The error is the statement's; resetting keeps it from pinning a
        // read snapshot (see begin_write()).
        DatabaseError e(sqlite3_errmsg(m_db));
        sqlite3_reset(m_stmt);
        throw e;
      }
    }
  }
  int64_t exec() override {
    while (step()) {
    }
    return sqlite3_changes64(m_db);
  }
  void reset() override {
    // sqlite3_reset repeats the last step's error code; step() reported it.
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
  }

  bool is_null(int column) override { return sqlite3_column_type(m_stmt, column) == SQLITE_NULL; }
  int64_t int64(int column) override { return sqlite3_column_int64(m_stmt, column); }
  double real(int column) override { return sqlite3_column_double(m_stmt, column); }
  std::string_view text(int column) override {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, column));
    if (!p) return {};
    return {p, static_cast<size_t>(sqlite3_column_bytes(m_stmt, column))};
  }
  std::string_view blob(int column) override {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(m_stmt, column));
    if (!p) return {};
    return {p, static_cast<size_t>(sqlite3_column_bytes(m_stmt, column))};
  }

private:
  void check(int rc) {
    if (rc != SQLITE_OK) fail_with(m_db);
  }
  sqlite3* m_db;
  sqlite3_stmt* m_stmt = nullptr;
};

class SqliteDatabase final : public Database {
public:
  explicit SqliteDatabase(const std::string& path) {
    // One connection per Database, used by one thread at a time
    // (database.hpp): no mutex of SQLite's is needed.
    const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    if (sqlite3_open_v2(path.c_str(), &m_db, flags, nullptr) != SQLITE_OK) {
      DatabaseError e(m_db ? sqlite3_errmsg(m_db) : "out of memory");
      sqlite3_close(m_db);
      throw e;
    }
    try {
      sqlite3_extended_result_codes(m_db, 1);
      sqlite3_busy_timeout(m_db, k_busy_timeout_ms);
      if (path != ":memory:") exec("PRAGMA journal_mode=WAL");
      exec("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL");
    } catch (...) {
      sqlite3_close(m_db);
      throw;
    }
  }
  // The cached statements are finalized after this (they belong to the
  // base class): close_v2 closes the connection when the last one goes.
  ~SqliteDatabase() override { sqlite3_close_v2(m_db); }

  void exec(std::string_view script) override {
    const std::string sql(script);  // sqlite3_exec reads up to a NUL
    char* message = nullptr;
    if (sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
      DatabaseError e(message ? message : sqlite3_errmsg(m_db));
      sqlite3_free(message);
      throw e;
    }
  }

  int schema_version() override {
    auto& s = statement("PRAGMA user_version");
    s.step();
    int v = static_cast<int>(s.int64(0));
    s.reset();
    return v;
  }
  void set_schema_version(int version) override { exec("PRAGMA user_version=" + std::to_string(version)); }

protected:
  std::unique_ptr<Statement> prepare(std::string_view sql) override {
    return std::make_unique<SqliteStatement>(m_db, sql);
  }

  void begin_write() override {
    // A read statement left pending (a cached SELECT stepped but not reset)
    // pins an old snapshot, and BEGIN IMMEDIATE on an old snapshot fails at
    // once with "database is locked" when another process has written since
    // (SQLITE_BUSY_SNAPSHOT: the busy timeout does not apply). Outside a
    // transaction no caller may still be iterating one (database.hpp).
    for (sqlite3_stmt* s = sqlite3_next_stmt(m_db, nullptr); s; s = sqlite3_next_stmt(m_db, s))
      if (sqlite3_stmt_busy(s)) sqlite3_reset(s);
    exec("BEGIN IMMEDIATE");
  }
  void commit() override { exec("COMMIT"); }
  void rollback() noexcept override {
    // SQLite ends the transaction itself on some errors; then there is
    // nothing to roll back.
    if (!sqlite3_get_autocommit(m_db)) sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
  }

private:
  sqlite3* m_db = nullptr;
};

}  // namespace

std::unique_ptr<Database> open(const std::string& path) { return std::make_unique<SqliteDatabase>(path); }

}  // namespace emco::store::sqlite
