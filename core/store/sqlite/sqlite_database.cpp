#include "core/store/sqlite/sqlite_database.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>
// SQLiteCpp has no wrapper for walking a connection's statements
// (begin_write) or asking whether a transaction is open (rollback).
#include <sqlite3.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace emco::store::sqlite {

namespace {

constexpr int k_busy_timeout_ms = 600000;  // wait, never report "database is locked"

// SQLite's error as a DatabaseError, marking the codes with which the file
// system refused (see DatabaseError::storage) and adding the system's own
// word for it ("disk I/O error (No space left on device)").
[[noreturn]] void raise(const SQLite::Exception& e, sqlite3* db) {
  switch (e.getErrorCode() & 0xff) {
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: {
      std::string message = e.what();
      if (int err = db ? sqlite3_system_errno(db) : 0) message += std::string(" (") + std::strerror(err) + ")";
      throw DatabaseError(message, true);
    }
    default:
      throw DatabaseError(e.what());
  }
}

class SqliteStatement final : public Statement {
public:
  SqliteStatement(const SQLite::Database& db, std::string_view sql) try : m_db(db), m_stmt(db, std::string(sql)) {
  } catch (const SQLite::Exception& e) {
    raise(e, db.getHandle());
  }

  void bind_text(int param, std::string_view text) override {
    guard([&] { m_stmt.bind(param, std::string(text)); });
  }
  void bind_int64(int param, int64_t value) override {
    guard([&] { m_stmt.bind(param, static_cast<int64_t>(value)); });
  }
  void bind_double(int param, double value) override {
    guard([&] { m_stmt.bind(param, value); });
  }
  void bind_blob(int param, std::string_view bytes) override {
    // A zero-length blob with a null pointer would bind NULL.
    guard([&] { m_stmt.bind(param, bytes.empty() ? "" : bytes.data(), static_cast<int>(bytes.size())); });
  }
  void bind_null(int param) override {
    guard([&] { m_stmt.bind(param); });
  }

  bool step() override {
    try {
      return m_stmt.executeStep();
    } catch (const SQLite::Exception& e) {
      // The error is the statement's; resetting keeps it from pinning a
      // read snapshot (see begin_write()). tryReset: reset() would throw the
      // same error again.
      m_stmt.tryReset();
      raise(e, m_db.getHandle());
    }
  }
  int64_t exec() override {
    while (step()) {
    }
    return sqlite3_changes64(m_db.getHandle());
  }
  void reset() override {
    // tryReset: the last step's error code repeats here; step() reported it.
    m_stmt.tryReset();
    m_stmt.clearBindings();
  }

  bool is_null(int column) override { return m_stmt.isColumnNull(column); }
  int64_t int64(int column) override { return m_stmt.getColumn(column).getInt64(); }
  double real(int column) override { return m_stmt.getColumn(column).getDouble(); }
  std::string_view text(int column) override {
    SQLite::Column c = m_stmt.getColumn(column);
    if (c.isNull()) return {};
    // getBytes after getText: the length of the text as read.
    const char* p = c.getText();
    return {p, static_cast<size_t>(c.getBytes())};
  }
  std::string_view blob(int column) override {
    SQLite::Column c = m_stmt.getColumn(column);
    const auto* p = static_cast<const char*>(c.getBlob());
    if (!p) return {};
    return {p, static_cast<size_t>(c.getBytes())};
  }

private:
  template <class F>
  void guard(F&& bind) {
    try {
      bind();
    } catch (const SQLite::Exception& e) {
      raise(e, m_db.getHandle());
    }
  }
  const SQLite::Database& m_db;
  SQLite::Statement m_stmt;
};

// Why the file system will not let `path` be opened for writing: " (Read-only
// file system)", " (Permission denied)", or "" when it would.
std::string write_refusal(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd >= 0) {
    ::close(fd);
    return "";
  }
  return std::string(" (") + std::strerror(errno) + ")";
}

SQLite::Database open_connection(const std::string& path) {
  try {
    // One connection per Database, used by one thread at a time
    // (database.hpp): no mutex of SQLite's is needed.
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLITE_OPEN_NOMUTEX, k_busy_timeout_ms);
    // SQLite falls back to reading when it may not write; emco writes on
    // nearly every command (and a WAL database cannot even be read without
    // writing its -shm file), so say it here rather than at the first write.
    if (path != ":memory:" && sqlite3_db_readonly(db.getHandle(), "main") == 1)
      throw DatabaseError("the database file is read-only" + write_refusal(path), true);
    return db;
  } catch (const SQLite::Exception& e) {
    // The connection is gone: ask the file system why ("unable to open
    // database file" alone says nothing).
    throw DatabaseError(e.what() + write_refusal(path), true);
  }
}

class SqliteDatabase final : public Database {
public:
  explicit SqliteDatabase(const std::string& path) : m_db(open_connection(path)) {
    sqlite3_extended_result_codes(m_db.getHandle(), 1);
    if (path != ":memory:") {
      exec("PRAGMA journal_mode=WAL");
      // The -wal and -shm files stay when the last connection closes: made
      // and unlinked again by every command, they were a tenth of a short
      // command's time (`emco get`). A size limit makes the close truncate
      // the -wal file to nothing (SQLite's walLimitSize at close), so no
      // stale pages outlive the command.
      int persist = 1;
      sqlite3_file_control(m_db.getHandle(), "main", SQLITE_FCNTL_PERSIST_WAL, &persist);
      exec("PRAGMA journal_size_limit=67108864");
    }
    exec("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL");
  }
  // The cached statements (the base's) go before the connection closes.
  ~SqliteDatabase() override { release_statements(); }

  void exec(std::string_view script) override {
    try {
      m_db.exec(std::string(script));
    } catch (const SQLite::Exception& e) {
      raise(e, m_db.getHandle());
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
    sqlite3* h = m_db.getHandle();
    for (sqlite3_stmt* s = sqlite3_next_stmt(h, nullptr); s; s = sqlite3_next_stmt(h, s))
      if (sqlite3_stmt_busy(s)) sqlite3_reset(s);
    exec("BEGIN IMMEDIATE");
  }
  void commit() override { exec("COMMIT"); }
  void rollback() noexcept override {
    // SQLite ends the transaction itself on some errors; then there is
    // nothing to roll back.
    sqlite3* h = m_db.getHandle();
    if (!sqlite3_get_autocommit(h)) sqlite3_exec(h, "ROLLBACK", nullptr, nullptr, nullptr);
  }

private:
  SQLite::Database m_db;
};

}  // namespace

std::unique_ptr<Database> open(const std::string& path) {
  // SQLite's memory statistics put a global mutex and counters around every
  // allocation it makes (thousands when it parses the schema at each
  // connection's start); emco never reads them. Configured once, before the
  // library initialises (sqlite3_config refuses afterwards).
  static const bool configured = [] {
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    return true;
  }();
  (void)configured;
  return std::make_unique<SqliteDatabase>(path);
}

}  // namespace emco::store::sqlite
