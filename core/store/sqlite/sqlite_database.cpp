#include "core/store/sqlite/sqlite_database.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
// SQLite's C API: prepared statements (SqliteStatement says why), and what
// SQLiteCpp has no wrapper for: walking a connection's statements
// (begin_write), asking whether a transaction is open (rollback).
#include <sqlite3.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

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

// A prepared statement on SQLite's C API. SQLiteCpp's Statement reads a
// column through a Column object holding a shared_ptr copy of the statement
// (an atomic reference count up and down per value read) and binds text
// through a std::string copy: about 260 instructions per text value read,
// which was a quarter of reading 30,000 resource states for the status
// summary. The checks SQLiteCpp makes are kept: no column without a row, a
// column index in range, no step after the last row without a reset.
class SqliteStatement final : public Statement {
public:
  SqliteStatement(const SQLite::Database& db, std::string_view sql) : m_db(db.getHandle()) {
    check(sqlite3_prepare_v2(m_db, sql.data(), static_cast<int>(sql.size()), &m_stmt, nullptr));  // null on error
    m_columns = sqlite3_column_count(m_stmt);
  }
  ~SqliteStatement() override { sqlite3_finalize(m_stmt); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  void bind_text(int param, std::string_view text) override {
    check(sqlite3_bind_text64(m_stmt, param, text.empty() ? "" : text.data(), text.size(), SQLITE_TRANSIENT,
                              SQLITE_UTF8));
  }
  void bind_int64(int param, int64_t value) override { check(sqlite3_bind_int64(m_stmt, param, value)); }
  void bind_double(int param, double value) override { check(sqlite3_bind_double(m_stmt, param, value)); }
  void bind_blob(int param, std::string_view bytes) override {
    // A zero-length blob with a null pointer would bind NULL.
    check(sqlite3_bind_blob64(m_stmt, param, bytes.empty() ? "" : bytes.data(), bytes.size(), SQLITE_TRANSIENT));
  }
  void bind_null(int param) override { check(sqlite3_bind_null(m_stmt, param)); }

  bool step() override {
    if (m_done) raise(SQLite::Exception("Statement needs to be reseted", SQLITE_MISUSE), m_db);
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW) {
      m_row = true;
      return true;
    }
    m_row = false;
    if (rc == SQLITE_DONE) {
      m_done = true;
      return false;
    }
    // The error is the statement's; resetting keeps it from pinning a read
    // snapshot (see begin_write()). The reset repeats the step's error code,
    // which is reported here.
    SQLite::Exception e(m_db, rc);
    sqlite3_reset(m_stmt);
    raise(e, m_db);
  }
  int64_t exec() override {
    while (step()) {
    }
    return sqlite3_changes64(m_db);
  }
  void reset() override {
    // The last step's error code repeats here; step() reported it.
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
    m_row = m_done = false;
  }

  bool is_null(int column) override { return sqlite3_column_type(m_stmt, checked(column)) == SQLITE_NULL; }
  int64_t int64(int column) override { return sqlite3_column_int64(m_stmt, checked(column)); }
  double real(int column) override { return sqlite3_column_double(m_stmt, checked(column)); }
  std::string_view text(int column) override {
    // The length after the text: the bytes of the value as read.
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, checked(column)));
    if (!p) return {};
    return {p, static_cast<size_t>(sqlite3_column_bytes(m_stmt, column))};
  }
  std::string_view blob(int column) override {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(m_stmt, checked(column)));
    if (!p) return {};
    return {p, static_cast<size_t>(sqlite3_column_bytes(m_stmt, column))};
  }

private:
  void check(int rc) {
    if (rc != SQLITE_OK) raise(SQLite::Exception(m_db, rc), m_db);
  }
  int checked(int column) const {
    if (!m_row)
      raise(SQLite::Exception("No row to get a column from. executeStep() was not called, or returned false."), m_db);
    if (column < 0 || column >= m_columns) raise(SQLite::Exception("Column index out of range."), m_db);
    return column;
  }
  sqlite3* m_db;
  sqlite3_stmt* m_stmt = nullptr;
  int m_columns = 0;
  bool m_row = false;   // the last step gave a row
  bool m_done = false;  // the last step ran to the end: reset before the next
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

// While a database file is mapped (PRAGMA mmap_size below), a read of the
// mapping the file no longer backs (the file was truncated under emco, or
// the disk failed to read it) arrives as SIGBUS rather than as SQLite's
// SQLITE_IOERR. The handler says so as emco says a storage failure, git
// style, naming the database, and exits with the workspace's exit code (6)
// instead of dying of the signal. It is async-signal-safe: write(2) of a
// message made beforehand, then _exit(2); nothing allocates. Nothing is
// left half-written by exiting there: SQLite writes through write(2) even
// with a mapping (it maps read-only), so a write transaction cut short is a
// crash like any other, which the next connection recovers from the WAL.
// The handler is installed while at least one connection (of any thread) is
// open and the previous one restored when the last closes.
class SigbusGuard {
public:
  explicit SigbusGuard(std::string path) : m_path(std::move(path)) {
    std::lock_guard lock(mutex());
    State& s = state();
    const bool first = s.open.empty();
    ++s.open[m_path];
    publish(s);
    if (first) {
      struct sigaction sa {};
      sa.sa_handler = on_sigbus;
      sigemptyset(&sa.sa_mask);
      sigaction(SIGBUS, &sa, &s.previous);
    }
  }
  ~SigbusGuard() {
    std::lock_guard lock(mutex());
    State& s = state();
    if (auto it = s.open.find(m_path); it != s.open.end() && --it->second == 0) s.open.erase(it);
    if (s.open.empty()) sigaction(SIGBUS, &s.previous, nullptr);
    else publish(s);
  }
  SigbusGuard(const SigbusGuard&) = delete;
  SigbusGuard& operator=(const SigbusGuard&) = delete;

private:
  struct State {
    std::map<std::string, int> open;  // connections by database path
    std::set<std::string> messages;   // every message published: the handler may still read one
    struct sigaction previous {};
  };
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static State& state() {
    static State s;
    return s;
  }
  // What the handler writes (a global: no initialisation guard to pass in it).
  static constinit inline std::atomic<const std::string*> s_message{nullptr};
  // The message for the databases open now: it names the database when
  // they are all one file.
  static void publish(State& s) {
    const std::string which =
        s.open.size() == 1 ? "the workspace database '" + s.open.begin()->first + "'" : "a workspace database";
    const std::string text = "emco: error: the workspace's storage failed: " + which +
                             " could not be read (SIGBUS: the file shrank under emco, or its disk failed to read "
                             "it)\nhint: check the file and the file system, then run 'emco sync' to finish "
                             "interrupted work (every change is one transaction: nothing was half-written)\n";
    s_message.store(&*s.messages.insert(text).first);
  }
  static void on_sigbus(int) {
    if (const std::string* m = s_message.load()) {
      for (size_t done = 0; done < m->size();) {
        const ssize_t n = ::write(2, m->data() + done, m->size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
    }
    ::_exit(6);  // ExitCode::workspace (core/util/error.hpp), which this library does not link
  }
  std::string m_path;
};

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
  explicit SqliteDatabase(const std::string& path)
      : m_sigbus(path == ":memory:" ? nullptr : std::make_unique<SigbusGuard>(path)), m_db(open_connection(path)) {
    sqlite3_extended_result_codes(m_db.getHandle(), 1);
    if (path != ":memory:") {
      // The database file's first 64 MiB are read from a mapping of it
      // instead of copied into page-cache buffers on the heap: a short
      // command touched a fresh heap page and made a pread per page it
      // read, while a mapping is filled from the kernel's cache many pages
      // at a fault. Not more: mapped pages count in the process's resident
      // size, and a fleet's database (0.86 GB at 100,000 clusters) mapped
      // whole added 0.3-0.5 GB to an instantiate's peak for no gain in time.
      // Writes still go through write(2), and pages in the -wal file are
      // still read. A read error under the mapping is SIGBUS: SigbusGuard
      // reports it. Set before journal_mode, whose statement reads the
      // schema's pages.
      exec("PRAGMA mmap_size=67108864");
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

  // A connection that wrote may owe the -wal file a checkpoint at its
  // close (the last connection's); one that only read leaves nothing.
  bool close_frees_only() const override {
    sqlite3* h = m_db.getHandle();
    return !m_wrote && sqlite3_total_changes64(h) == 0 && sqlite3_get_autocommit(h);
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
    m_wrote = true;
  }
  void commit() override { exec("COMMIT"); }
  void rollback() noexcept override {
    // SQLite ends the transaction itself on some errors; then there is
    // nothing to roll back.
    sqlite3* h = m_db.getHandle();
    if (!sqlite3_get_autocommit(h)) sqlite3_exec(h, "ROLLBACK", nullptr, nullptr, nullptr);
  }

private:
  std::unique_ptr<SigbusGuard> m_sigbus;  // declared first: installed before the mapping, removed after it
  SQLite::Database m_db;
  bool m_wrote = false;  // a write transaction began (schema changes are no "changes" to SQLite's count)
};

}  // namespace

std::unique_ptr<Database> open(const std::string& path) {
  // SQLite's memory statistics put a global mutex and counters around every
  // allocation it makes (thousands when it parses the schema at each
  // connection's start); emco never reads them. Configured once, before the
  // library initialises (sqlite3_config refuses afterwards).
  // The page cache's first bulk allocation (20 pages, its default) is
  // dropped too: setting up the bulk touched all of its ~86 KiB, a page fault
  // per 4 KiB, while a short command reads fewer pages than that; pages are
  // then allocated as they are read.
  static const bool configured = [] {
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3_config(SQLITE_CONFIG_PAGECACHE, nullptr, 0, 0);
    return true;
  }();
  (void)configured;
  return std::make_unique<SqliteDatabase>(path);
}

}  // namespace emco::store::sqlite
