#include "core/store/postgresql/postgresql_database.hpp"

#include <libpq-fe.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace emco::store::postgresql {

namespace {

// Type OIDs (pg_type.h, stable across releases) of the result columns read
// specially: bytea arrives hex-encoded, bool as "t"/"f".
constexpr Oid k_bool = 16;
constexpr Oid k_bytea = 17;

// One lexical pass over SQL: calls `plain(i)` for every character outside
// string literals, quoted identifiers and comments, `other(i)` for the rest.
template <class Plain, class Other>
void scan(std::string_view sql, Plain&& plain, Other&& other) {
  size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    size_t end = i + 1;
    if (c == '\'' || c == '"') {
      // '' (or "") inside doubles the quote and stays inside.
      while (end < sql.size() && (sql[end] != c || (end + 1 < sql.size() && sql[end + 1] == c && ++end))) ++end;
      end = std::min(end + 1, sql.size());
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      end = sql.find('\n', i);
      end = end == std::string_view::npos ? sql.size() : end;
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      end = sql.find("*/", i + 2);
      end = end == std::string_view::npos ? sql.size() : end + 2;
    } else {
      plain(i);
      ++i;
      continue;
    }
    for (; i < end; ++i) other(i);
  }
}

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The SQLSTATE classes with which the server's environment, not emco's SQL,
// failed: connection (08), resources such as a full disk (53), operator
// intervention (57), system errors (58).
bool storage_state(std::string_view state) {
  return state.substr(0, 2) == "08" || state.substr(0, 2) == "53" || state.substr(0, 2) == "57" ||
         state.substr(0, 2) == "58";
}

std::string trimmed(const char* message) {
  std::string m = message ? message : "";
  while (!m.empty() && std::isspace(static_cast<unsigned char>(m.back()))) m.pop_back();
  return m;
}

class PgDatabase;

class PgStatement final : public Statement {
public:
  PgStatement(PgDatabase& db, std::string name, int params) : m_db(db), m_name(std::move(name)) {
    m_values.resize(static_cast<size_t>(params));
    m_null.assign(static_cast<size_t>(params), 1);
    m_binary.assign(static_cast<size_t>(params), 0);
  }
  ~PgStatement() override { clear(); }

  void bind_text(int param, std::string_view text) override { set(param, std::string(text), false); }
  void bind_int64(int param, int64_t value) override { set(param, std::to_string(value), false); }
  void bind_double(int param, double value) override {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", value);
    set(param, buf, false);
  }
  void bind_blob(int param, std::string_view bytes) override { set(param, std::string(bytes), true); }
  void bind_null(int param) override {
    slot(param);
    m_null[static_cast<size_t>(param - 1)] = 1;
  }

  bool step() override;
  int64_t exec() override;
  void exec_later() override;
  void reset() override {
    clear();
    for (size_t i = 0; i < m_values.size(); ++i) {
      m_values[i].clear();
      m_null[i] = 1;
      m_binary[i] = 0;
    }
  }

  bool is_null(int column) override { return PQgetisnull(m_result, m_row, column) == 1; }
  int64_t int64(int column) override {
    if (is_null(column)) return 0;
    const char* v = PQgetvalue(m_result, m_row, column);
    if (PQftype(m_result, column) == k_bool) return v[0] == 't' ? 1 : 0;
    return std::strtoll(v, nullptr, 10);
  }
  double real(int column) override {
    if (is_null(column)) return 0.0;
    return std::strtod(PQgetvalue(m_result, m_row, column), nullptr);
  }
  std::string_view text(int column) override { return blob(column); }
  std::string_view blob(int column) override {
    if (is_null(column)) return {};
    const char* v = PQgetvalue(m_result, m_row, column);
    const size_t n = static_cast<size_t>(PQgetlength(m_result, m_row, column));
    if (PQftype(m_result, column) != k_bytea) return {v, n};
    // bytea_output = hex (set at connect): "\x" then two digits a byte.
    auto& out = m_decoded[static_cast<size_t>(column)];
    out.clear();
    auto digit = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
    for (size_t i = 2; i + 1 < n; i += 2) out += static_cast<char>(digit(v[i]) << 4 | digit(v[i + 1]));
    return out;
  }

private:
  void slot(int param) {
    if (param < 1 || param > static_cast<int>(m_values.size()))
      throw DatabaseError("parameter " + std::to_string(param) + " out of range (the statement has " +
                          std::to_string(m_values.size()) + ")");
  }
  void set(int param, std::string value, bool binary) {
    slot(param);
    const auto i = static_cast<size_t>(param - 1);
    m_values[i] = std::move(value);
    m_null[i] = 0;
    m_binary[i] = binary ? 1 : 0;
  }
  // The parameters as libpq takes them; valid until the next bind or reset.
  struct Params {
    std::vector<const char*> values;
    std::vector<int> lengths;
  };
  Params params() const;
  void run();
  void clear() {
    if (m_result) PQclear(m_result);
    m_result = nullptr;
    m_row = -1;
  }

  PgDatabase& m_db;
  std::string m_name;
  std::vector<std::string> m_values;
  std::vector<char> m_null;
  std::vector<int> m_binary;
  PGresult* m_result = nullptr;  // the executed statement's rows, all of them
  int m_row = -1;
  std::vector<std::string> m_decoded;  // bytea columns of the current row
};

class PgDatabase final : public Database {
public:
  explicit PgDatabase(const std::string& url);
  ~PgDatabase() override {
    release_statements();
    PQfinish(m_conn);
  }

  void exec(std::string_view script) override {
    flush_later();
    count_round_trip();
    PGresult* r = PQexec(m_conn, translate_ddl(script).c_str());
    check(r);
    PQclear(r);
  }

  int schema_version() override {
    if (in_transaction()) {
      statement("SELECT pg_advisory_xact_lock(2105, hashtext(COALESCE(current_schema(), '')))").exec();
      auto& s = statement("SELECT version FROM emco_schema_version FOR UPDATE");
      s.step();
      const int v = static_cast<int>(s.int64(0));
      s.reset();
      return v;
    }
    auto& s = statement("SELECT version FROM emco_schema_version");
    s.step();
    const int v = static_cast<int>(s.int64(0));
    s.reset();
    return v;
  }
  void set_schema_version(int version) override {
    auto& s = statement("UPDATE emco_schema_version SET version = ?");
    s.bind(1, version);
    s.exec();
  }

  void identity_follows(std::string_view table, std::string_view column) override {
    m_ids.clear();
    const std::string t(table), c(column);
    auto& s = statement("SELECT setval(pg_get_serial_sequence('" + t + "', '" + c + "'), COALESCE((SELECT MAX(" + c +
                        ") FROM " + t + "), 0) + 1, false)");
    s.step();
    s.reset();
  }

  // A failed result's SQLSTATE and message (copies: both live in `r`),
  // or the connection's message when there is no result.
  struct Failure {
    std::string code, message;
  };
  Failure failure_of(PGresult* r) {
    const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
    Failure f{state ? state : "", trimmed(r ? PQresultErrorMessage(r) : PQerrorMessage(m_conn))};
    if (f.message.empty()) f.message = trimmed(PQerrorMessage(m_conn));
    return f;
  }
  // Throws `f` as a DatabaseError; reports a conflict to the transaction first.
  [[noreturn]] void raise(const Failure& f) {
    if (f.code == "40001" || f.code == "40P01") conflicted();
    throw DatabaseError(f.message, storage_state(f.code) || PQstatus(m_conn) != CONNECTION_OK);
  }
  // Throws the DatabaseError of a failed result (and clears it).
  void check(PGresult* r) {
    const ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return;
    const Failure f = failure_of(r);
    if (r) PQclear(r);
    raise(f);
  }
  int64_t new_id(std::string_view table, std::string_view column) override;

  PGconn* conn() { return m_conn; }
  bool shared() const override { return true; }
  void sent() noexcept { count_round_trip(); }
  // Sends a prepared statement in the pipeline (exec_later()).
  void send_later(const std::string& name, int count, const char* const* values, const int* lengths,
                  const int* formats);
  void flush_later() override { drain_later(true); }

protected:
  std::unique_ptr<Statement> prepare(std::string_view sql) override {
    int params = 0;
    const std::string text = number_parameters(sql, params);
    std::string name = "emco" + std::to_string(++m_statements);
    flush_later();
    count_round_trip();
    PGresult* r = PQprepare(m_conn, name.c_str(), text.c_str(), 0, nullptr);
    check(r);  // clears `r` when it throws
    PQclear(r);
    return std::make_unique<PgStatement>(*this, std::move(name), params);
  }
  void begin_write() override {
    m_ids.clear();
    exec("BEGIN ISOLATION LEVEL SERIALIZABLE");
  }
  void commit() override {
    m_ids.clear();
    exec("COMMIT");
  }
  void rollback() noexcept override {
    m_ids.clear();
    drain_later(false);
    // ROLLBACK ends an aborted transaction too, and is a warning only when
    // none is open.
    if (PQtransactionStatus(m_conn) == PQTRANS_IDLE) return;
    count_round_trip();
    PQclear(PQexec(m_conn, "ROLLBACK"));
  }

private:
  void create_schema();
  // Ends the pipeline of exec_later() statements: sends a sync, reads every
  // result and leaves pipeline mode; throws the first failure when asked to.
  void drain_later(bool report);

  // How many exec_later() statements are in the pipeline; 0 when the
  // connection is not in pipeline mode. Waiting for them every so many
  // keeps the unread results well inside the socket's buffers: a server
  // blocked writing them would stop reading, and so block our sending.
  int m_later = 0;
  static constexpr int k_later_batch = 512;
  // Ids taken from a sequence for the running transaction, by "table.column".
  struct Ids {
    std::vector<int64_t> values;
    size_t next = 0;
  };
  std::unordered_map<std::string, Ids> m_ids;
  PGconn* m_conn = nullptr;
  int m_statements = 0;
};

void PgDatabase::send_later(const std::string& name, int count, const char* const* values, const int* lengths,
                            const int* formats) {
  if (!m_later && PQenterPipelineMode(m_conn) != 1)
    throw DatabaseError("cannot send statements in a pipeline: " + trimmed(PQerrorMessage(m_conn)),
                        PQstatus(m_conn) != CONNECTION_OK);
  if (PQsendQueryPrepared(m_conn, name.c_str(), count, values, lengths, formats, 0) != 1) {
    const std::string message = trimmed(PQerrorMessage(m_conn));
    if (!m_later) PQexitPipelineMode(m_conn);
    throw DatabaseError(message, PQstatus(m_conn) != CONNECTION_OK);
  }
  // libpq sends a pipeline's statements when 64 KiB have gathered; sending
  // every few lets the server work on them while the next are built.
  if (++m_later % 32 == 0) PQflush(m_conn);
  if (m_later >= k_later_batch) drain_later(true);
}

void PgDatabase::drain_later(bool report) {
  if (!m_later) return;
  m_later = 0;
  count_round_trip();
  std::optional<Failure> first;
  auto fail = [&](PGresult* r) {
    if (!first) first = failure_of(r);
  };
  if (PQpipelineSync(m_conn) != 1) {
    fail(nullptr);
  } else {
    // Each statement's results end with a null; the sync's result ends the
    // pipeline. Two nulls in a row, or a lost connection, end it early.
    int nulls = 0;
    for (;;) {
      PGresult* r = PQgetResult(m_conn);
      if (!r) {
        if (++nulls > 1 || PQstatus(m_conn) == CONNECTION_BAD) {
          fail(nullptr);
          break;
        }
        continue;
      }
      nulls = 0;
      const ExecStatusType st = PQresultStatus(r);
      if (st == PGRES_PIPELINE_SYNC) {
        PQclear(r);
        break;
      }
      // After a failure the server skips the rest (PGRES_PIPELINE_ABORTED).
      if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_PIPELINE_ABORTED) fail(r);
      PQclear(r);
    }
  }
  PQexitPipelineMode(m_conn);
  if (first && report) raise(*first);
}

int64_t PgDatabase::new_id(std::string_view table, std::string_view column) {
  const std::string t(table), c(column);
  Ids& ids = m_ids[t + "." + c];
  if (ids.next == ids.values.size()) {
    // A transaction that inserts many rows asks for more at a time: 8,
    // 32, 128, ... up to 1,024.
    const size_t block = std::min<size_t>(ids.values.empty() ? 8 : ids.values.size() * 4, 1024);
    auto& s = statement("SELECT nextval(pg_get_serial_sequence('" + t + "', '" + c + "')) FROM generate_series(1, ?)");
    s.bind(1, static_cast<int64_t>(block));
    ids.values.clear();
    ids.next = 0;
    while (s.step()) ids.values.push_back(s.int64(0));
    s.reset();
    if (ids.values.empty()) throw DatabaseError("no values from the sequence of " + t + "." + c);
  }
  return ids.values[ids.next++];
}

PgStatement::Params PgStatement::params() const {
  Params p;
  p.values.resize(m_values.size());
  p.lengths.resize(m_values.size());
  for (size_t i = 0; i < m_values.size(); ++i) {
    p.values[i] = m_null[i] ? nullptr : m_values[i].data();
    p.lengths[i] = static_cast<int>(m_values[i].size());
  }
  return p;
}

void PgStatement::run() {
  const Params p = params();
  m_db.flush_later();
  m_db.sent();
  PGresult* r = PQexecPrepared(m_db.conn(), m_name.c_str(), static_cast<int>(p.values.size()), p.values.data(),
                               p.lengths.data(), m_binary.data(), 0);
  m_db.check(r);
  m_result = r;
  m_row = -1;
  m_decoded.assign(static_cast<size_t>(PQnfields(r)), std::string());
}

bool PgStatement::step() {
  if (!m_result) run();
  if (m_row + 1 >= PQntuples(m_result)) {
    m_row = PQntuples(m_result);
    return false;
  }
  ++m_row;
  return true;
}

int64_t PgStatement::exec() {
  if (!m_result) run();
  m_row = PQntuples(m_result);
  const char* n = PQcmdTuples(m_result);
  return n && *n ? std::strtoll(n, nullptr, 10) : 0;
}

void PgStatement::exec_later() {
  if (!m_db.in_transaction()) {
    exec();
  } else {
    const Params p = params();
    m_db.send_later(m_name, static_cast<int>(p.values.size()), p.values.data(), p.lengths.data(), m_binary.data());
  }
  reset();
}

// A URL with a password would put it into the workspace's .emco/store.
void refuse_password(const std::string& url) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(url.c_str(), &err);
  if (!opts) {
    std::string m = trimmed(err);
    PQfreemem(err);
    throw DatabaseError("invalid PostgreSQL URL: " + m);
  }
  bool password = false;
  for (PQconninfoOption* o = opts; o->keyword; ++o)
    if (std::strcmp(o->keyword, "password") == 0 && o->val && *o->val) password = true;
  PQconninfoFree(opts);
  if (password)
    throw DatabaseError(
        "the PostgreSQL URL carries a password, which emco would keep in the workspace: give it with PGPASSWORD, "
        "~/.pgpass or a service file (PGSERVICE) instead");
}

PgDatabase::PgDatabase(const std::string& url) {
  refuse_password(url);
  const char* keys[] = {"dbname", "fallback_application_name", nullptr};
  const char* vals[] = {url.c_str(), "emco", nullptr};
  m_conn = PQconnectdbParams(keys, vals, 1);
  if (PQstatus(m_conn) != CONNECTION_OK) {
    std::string m = trimmed(PQerrorMessage(m_conn));
    PQfinish(m_conn);
    m_conn = nullptr;
    throw DatabaseError("cannot connect to PostgreSQL: " + m, true);
  }
  // libpq prints the server's notices ("relation ... already exists,
  // skipping") on stderr by default; emco's output is its own.
  PQsetNoticeProcessor(m_conn, [](void*, const char*) {}, nullptr);
  try {
    exec("SET client_encoding = 'UTF8'; SET bytea_output = 'hex'; SET client_min_messages = 'warning'");
    create_schema();
  } catch (...) {
    PQfinish(m_conn);
    m_conn = nullptr;
    throw;
  }
}

// The first schema of search_path (the user's choice) and the version table
// in it, both created when absent. The session advisory lock keeps two
// processes opening a fresh database from both creating them.
void PgDatabase::create_schema() {
  exec("SELECT pg_advisory_lock(2105, 0)");
  try {
    std::string first;
    {
      auto& s = statement("SELECT current_setting('search_path')");
      s.step();
      std::string path = s.str(0);
      s.reset();
      first = path.substr(0, path.find(','));
      while (!first.empty() && first.front() == ' ') first.erase(0, 1);
      while (!first.empty() && first.back() == ' ') first.pop_back();
      if (first.size() >= 2 && first.front() == '"' && first.back() == '"') first = first.substr(1, first.size() - 2);
    }
    if (!first.empty() && first != "$user") {
      char* ident = PQescapeIdentifier(m_conn, first.data(), first.size());
      if (!ident) throw DatabaseError(trimmed(PQerrorMessage(m_conn)));
      std::string sql = std::string("CREATE SCHEMA IF NOT EXISTS ") + ident;
      PQfreemem(ident);
      exec(sql);
    }
    exec("CREATE TABLE IF NOT EXISTS emco_schema_version(one INTEGER PRIMARY KEY CHECK (one = 1), "
         "version INTEGER NOT NULL);"
         "INSERT INTO emco_schema_version VALUES(1, 0) ON CONFLICT DO NOTHING");
  } catch (...) {
    PQclear(PQexec(m_conn, "SELECT pg_advisory_unlock(2105, 0)"));
    throw;
  }
  exec("SELECT pg_advisory_unlock(2105, 0)");
}

}  // namespace

std::string number_parameters(std::string_view sql, int& count) {
  std::string out;
  out.reserve(sql.size() + 16);
  count = 0;
  scan(
      sql,
      [&](size_t i) {
        if (sql[i] == '?') out += "$" + std::to_string(++count);
        else out += sql[i];
      },
      [&](size_t i) { out += sql[i]; });
  return out;
}

std::string translate_ddl(std::string_view script) {
  // Statement by statement: only CREATE TABLE and ALTER TABLE change.
  std::vector<std::pair<size_t, size_t>> statements;
  size_t begin = 0;
  scan(
      script,
      [&](size_t i) {
        if (script[i] == ';') {
          statements.emplace_back(begin, i + 1);
          begin = i + 1;
        }
      },
      [](size_t) {});
  if (begin < script.size()) statements.emplace_back(begin, script.size());

  std::string out;
  for (const auto& [from, to] : statements) {
    const std::string_view stmt = script.substr(from, to - from);
    // Its words outside literals, with their positions.
    std::vector<std::pair<size_t, size_t>> words;
    scan(
        stmt,
        [&](size_t i) {
          if (!word_char(stmt[i])) return;
          if (!words.empty() && words.back().first + words.back().second == i) ++words.back().second;
          else words.emplace_back(i, 1);
        },
        [](size_t) {});
    auto word = [&](size_t k) {
      return k < words.size() ? stmt.substr(words[k].first, words[k].second) : std::string_view();
    };
    auto upper_eq = [](std::string_view w, std::string_view u) {
      if (w.size() != u.size()) return false;
      for (size_t i = 0; i < w.size(); ++i)
        if (std::toupper(static_cast<unsigned char>(w[i])) != u[i]) return false;
      return true;
    };
    const bool ddl = (upper_eq(word(0), "CREATE") || upper_eq(word(0), "ALTER")) && upper_eq(word(1), "TABLE");
    if (!ddl) {
      out += stmt;
      continue;
    }
    size_t at = 0;
    for (size_t k = 0; k < words.size(); ++k) {
      const std::string_view w = word(k);
      std::string_view with;
      size_t last = k;  // the last word replaced
      if (w == "INTEGER" && word(k + 1) == "PRIMARY" && word(k + 2) == "KEY") with = "BIGINT GENERATED BY DEFAULT AS IDENTITY";
      else if (w == "INTEGER") with = "BIGINT";
      else if (w == "REAL") with = "DOUBLE PRECISION";
      else if (w == "BLOB") with = "BYTEA";
      else if (w == "TEXT") with = "TEXT COLLATE \"C\"";
      else if (w == "WITHOUT" && word(k + 1) == "ROWID") last = k + 1;
      else continue;
      out += stmt.substr(at, words[k].first - at);
      out += with;
      at = words[last].first + words[last].second;
      k = last;
    }
    out += stmt.substr(at);
  }
  return out;
}

std::unique_ptr<Database> open(const std::string& url) { return std::make_unique<PgDatabase>(url); }

}  // namespace emco::store::postgresql
