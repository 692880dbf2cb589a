// store::Database's contract (core/store/database.hpp), case by case, for
// every backend in backends(): a new backend adds its entry there and must
// pass every case unchanged.

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/store/database.hpp"
#include "tests/test_store.hpp"

using namespace emco::store;
namespace fs = std::filesystem;

namespace {

// How a backend is tested: where a new, empty database is (two open_database
// calls on one location are two connections to it), and the tables the cases
// use in the backend's dialect:
//   kv(k TEXT key, s TEXT, i 64-bit integer, r double, b blob): every type;
//   ids(id auto-assigned integer key, v TEXT): RETURNING id;
//   counter(n 64-bit integer): one row, the concurrent writers' sum.
struct Backend {
  const char* name;
  std::string (*fresh_location)();
  const char* schema;
};

// The SQLite files of one run, removed when the run ends.
struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("emco-database-test-" + std::to_string(::getpid()));
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string fresh_sqlite_file() {
  static ScratchDir dir;
  static int n = 0;
  return (dir.path / ("db" + std::to_string(++n) + ".sqlite")).string();
}

// A database of its own for each case: a fresh schema of the test server.
std::string fresh_postgresql_schema() { return emco::test::fresh_store(); }

// SQLite's tables are written in SQLite's dialect: the PostgreSQL backend's
// exec() translates them (INTEGER, REAL, BLOB, INTEGER PRIMARY KEY), as it
// does the migrations. The store-postgresql run (EMCO_TEST_STORE) checks
// PostgreSQL, the default run SQLite.
std::vector<Backend> backends() {
  static const char* k_schema =
      "CREATE TABLE kv(k TEXT PRIMARY KEY, s TEXT, i INTEGER, r REAL, b BLOB);"
      "CREATE TABLE ids(id INTEGER PRIMARY KEY, v TEXT NOT NULL);"
      "CREATE TABLE counter(n INTEGER NOT NULL); INSERT INTO counter(n) VALUES(0);";
  if (emco::test::testing_postgresql()) return {{"postgresql", fresh_postgresql_schema, k_schema}};
  return {{"sqlite", fresh_sqlite_file, k_schema}};
}

std::unique_ptr<Database> fresh(const Backend& b, std::string* location = nullptr) {
  std::string where = b.fresh_location();
  if (location) *location = where;
  auto db = open_database(where);
  db->exec(b.schema);
  return db;
}

// Every row of kv, as text, for before/after comparisons.
std::string rows(Database& db) {
  std::string out;
  auto& s = db.statement("SELECT k, s, i, r, b FROM kv ORDER BY k");
  while (s.step()) {
    out += s.str(0) + "|" + (s.is_null(1) ? "NULL" : s.str(1)) + "|" + std::to_string(s.int64(2)) + "|" +
           std::to_string(s.real(3)) + "|" + std::string(s.blob(4)) + "\n";
  }
  return out;
}

void put(Database& db, const std::string& k, const std::string& v) {
  auto& s = db.statement("INSERT INTO kv(k, s) VALUES(?, ?) ON CONFLICT(k) DO UPDATE SET s = excluded.s");
  s.bind(1, k);
  s.bind(2, v);
  s.exec();
}

int64_t counter(Database& db) {
  auto& s = db.statement("SELECT n FROM counter");
  REQUIRE(s.step());
  int64_t n = s.int64(0);
  s.reset();
  return n;
}

// One read-modify-write of the counter: correct only when write
// transactions exclude each other.
void increment(Database& db) {
  db.transaction([&] {
    const int64_t n = counter(db);
    auto& u = db.statement("UPDATE counter SET n = ?");
    u.bind(1, n + 1);
    u.exec();
  });
}

}  // namespace

TEST_CASE("database: binds and reads every type, NULL and blobs with NUL bytes", "[database]") {
  for (const auto& b : backends()) {
    DYNAMIC_SECTION(b.name) {
      auto db = fresh(b);
      const std::string bytes("a\0b\0\xff\x01", 6);
      auto& ins = db->statement("INSERT INTO kv(k, s, i, r, b) VALUES(?, ?, ?, ?, ?)");
      ins.bind(1, "full");
      ins.bind(2, "h\xc3\xa9llo");  // UTF-8 text
      ins.bind(3, std::numeric_limits<int64_t>::min());
      ins.bind(4, 2.5);
      ins.bind_blob(5, bytes);
      CHECK(ins.exec() == 1);
      auto& ins2 = db->statement("INSERT INTO kv(k, s, i, r, b) VALUES(?, ?, ?, ?, ?)");
      ins2.bind(1, "empty");
      ins2.bind(2, "");
      ins2.bind(3, std::numeric_limits<int64_t>::max());
      ins2.bind(4, -0.125);
      ins2.bind_blob(5, "");
      CHECK(ins2.exec() == 1);
      auto& nul = db->statement("INSERT INTO kv(k, s, i, r, b) VALUES(?, ?, ?, ?, ?)");
      nul.bind(1, "null");
      for (int p = 2; p <= 5; ++p) nul.bind_null(p);
      CHECK(nul.exec() == 1);

      auto& s = db->statement("SELECT s, i, r, b FROM kv WHERE k = ?");
      s.bind(1, "full");
      REQUIRE(s.step());
      CHECK(s.text(0) == "h\xc3\xa9llo");
      CHECK(s.int64(1) == std::numeric_limits<int64_t>::min());
      CHECK(s.text(1) == std::to_string(std::numeric_limits<int64_t>::min()));  // a number's text
      CHECK(s.real(2) == 2.5);
      CHECK(s.blob(3) == bytes);
      CHECK_FALSE(s.is_null(3));
      CHECK_FALSE(s.step());

      auto& e = db->statement("SELECT s, i, r, b FROM kv WHERE k = ?");
      e.bind(1, "empty");
      REQUIRE(e.step());
      CHECK(e.text(0).empty());
      CHECK_FALSE(e.is_null(0));  // '' is not NULL
      CHECK(e.int64(1) == std::numeric_limits<int64_t>::max());
      CHECK(e.real(2) == -0.125);
      CHECK(e.blob(3).empty());
      CHECK_FALSE(e.is_null(3));  // an empty blob is not NULL

      auto& n = db->statement("SELECT s, i, r, b FROM kv WHERE k = ?");
      n.bind(1, "null");
      REQUIRE(n.step());
      for (int c = 0; c < 4; ++c) CHECK(n.is_null(c));
      CHECK(n.text(0).empty());
      CHECK(n.int64(1) == 0);
      CHECK(n.real(2) == 0.0);
      CHECK(n.blob(3).empty());
    }
  }
}

TEST_CASE("database: statements are cached, and taking one resets it and its parameters", "[database]") {
  for (const auto& b : backends()) {
    DYNAMIC_SECTION(b.name) {
      auto db = fresh(b);
      for (const char* k : {"a", "b", "c"}) put(*db, k, k);
      const char* sql = "SELECT k FROM kv WHERE k >= ? ORDER BY k";
      auto& s = db->statement(sql);
      s.bind(1, "b");
      REQUIRE(s.step());
      CHECK(s.text(0) == "b");
      // Taken again mid-iteration: the same statement, from the start, unbound.
      auto& again = db->statement(sql);
      CHECK(&again == &s);
      CHECK_FALSE(again.step());  // k >= NULL matches nothing
      auto& third = db->statement(sql);
      third.bind(1, "a");
      std::vector<std::string> keys;
      while (third.step()) keys.push_back(third.str(0));
      CHECK(keys == std::vector<std::string>{"a", "b", "c"});
      CHECK_THROWS_AS(db->statement("SELECT nothing FROM nowhere"), DatabaseError);
    }
  }
}

TEST_CASE("database: exec counts changed rows, RETURNING gives new ids", "[database]") {
  for (const auto& b : backends()) {
    DYNAMIC_SECTION(b.name) {
      auto db = fresh(b);
      for (const char* k : {"a", "b", "c"}) put(*db, k, "old");
      auto& u = db->statement("UPDATE kv SET s = ? WHERE k <> ?");
      u.bind(1, "new");
      u.bind(2, "a");
      CHECK(u.exec() == 2);
      auto& none = db->statement("DELETE FROM kv WHERE k = ?");
      none.bind(1, "zzz");
      CHECK(none.exec() == 0);
      std::vector<int64_t> ids;
      for (const char* v : {"x", "y"}) {
        auto& ins = db->statement("INSERT INTO ids(v) VALUES(?) RETURNING id");
        ins.bind(1, v);
        REQUIRE(ins.step());
        ids.push_back(ins.int64(0));
        CHECK_FALSE(ins.step());
      }
      CHECK(ids[0] != ids[1]);
      auto& s = db->statement("SELECT v FROM ids WHERE id = ?");
      s.bind(1, ids[1]);
      REQUIRE(s.step());
      CHECK(s.text(0) == "y");
    }
  }
}

TEST_CASE("database: a transaction commits on return and rolls back on an exception", "[database]") {
  for (const auto& b : backends()) {
    DYNAMIC_SECTION(b.name) {
      std::string where;
      auto db = fresh(b, &where);
      CHECK_FALSE(db->in_transaction());
      db->transaction([&] {
        CHECK(db->in_transaction());
        put(*db, "kept", "1");
      });
      CHECK_FALSE(db->in_transaction());
      CHECK_THROWS_AS(db->transaction([&] {
        put(*db, "gone", "1");
        put(*db, "kept", "changed");
        throw std::runtime_error("body failed");
      }),
                      std::runtime_error);
      CHECK_FALSE(db->in_transaction());
      CHECK(rows(*db) == "kept|1|0|0.000000|\n");
      // Committed means visible to another connection.
      auto other = open_database(where);
      CHECK(rows(*other) == rows(*db));
    }
  }
}

TEST_CASE("database: a nested transaction that fails undoes only its own writes", "[database]") {
  for (const auto& b : backends()) {
    DYNAMIC_SECTION(b.name) {
      auto db = fresh(b);
      db->transaction([&] {
        put(*db, "outer", "1");
        try {
          db->transaction([&] {
            put(*db, "inner", "1");
            put(*db, "outer", "overwritten");
            db->transaction([&] { put(*db, "innermost", "1"); });  // succeeds, joins "inner"
            throw std::runtime_error("inner failed");
          });
          FAIL("the inner exception did not propagate");
        } catch (const std::runtime_error&) {
        }
        CHECK(db->in_transaction());
        db->transaction([&] { put(*db, "second", "1"); });
      });
      CHECK(rows(*db) == "outer|1|0|0.000000|\nsecond|1|0|0.000000|\n");

      // Uncaught, a nested failure takes the whole transaction with it.
      const std::string before = rows(*db);
      CHECK_THROWS_AS(db->transaction([&] {
        put(*db, "x", "1");
        db->transaction([&] {
          put(*db, "y", "1");
          throw std::runtime_error("inner failed");
        });
      }),
                      std::runtime_error);
      CHECK(rows(*db) == before);
      CHECK_FALSE(db->in_transaction());
    }
  }
}

TEST_CASE("database: a failing statement leaves the database as it was", "[database]") {
  for (const auto& b : backends()) {
    DYNAMIC_SECTION(b.name) {
      auto db = fresh(b);
      put(*db, "a", "1");
      const std::string before = rows(*db);
      auto duplicate = [&] {
        auto& s = db->statement("INSERT INTO kv(k, s) VALUES(?, ?)");
        s.bind(1, "a");
        s.bind(2, "dup");
        s.exec();
      };
      CHECK_THROWS_AS(db->transaction([&] {
        put(*db, "b", "1");
        duplicate();  // a UNIQUE violation
        put(*db, "c", "1");
      }),
                      DatabaseError);
      CHECK(rows(*db) == before);
      CHECK_FALSE(db->in_transaction());
      // Outside a transaction, too; and the connection goes on working.
      CHECK_THROWS_AS(duplicate(), DatabaseError);
      CHECK_THROWS_AS(db->exec("INSERT INTO nowhere VALUES(1)"), DatabaseError);
      CHECK(rows(*db) == before);
      db->transaction([&] { put(*db, "b", "2"); });
      CHECK(rows(*db) == before + "b|2|0|0.000000|\n");
    }
  }
}

TEST_CASE("database: exec_later's writes are read back and commit with their transaction", "[database]") {
  for (const auto& b : backends()) {
    DYNAMIC_SECTION(b.name) {
      std::string where;
      auto db = fresh(b, &where);
      auto other = open_database(where);
      auto count = [](Database& d) {
        auto& s = d.statement("SELECT COUNT(*) FROM ids");
        s.step();
        const int64_t n = s.int64(0);
        s.reset();
        return n;
      };
      // More than a pipeline holds before it waits (512 on PostgreSQL).
      constexpr int k_rows = 1200;
      const uint64_t trips_before = db->round_trips();
      db->transaction([&] {
        for (int i = 0; i < k_rows; ++i) {
          auto& s = db->statement("INSERT INTO ids(id, v) VALUES(?, ?)");
          s.bind(1, int64_t{i + 1});
          s.bind(2, "v" + std::to_string(i));
          s.exec_later();
        }
        CHECK(count(*db) == k_rows);  // the transaction reads its own deferred writes
        CHECK(count(*other) == 0);
      });
      const uint64_t trips = db->round_trips() - trips_before;
      // Begin, three waits for the pipeline, the count, commit: not one a row.
      if (db->shared()) CHECK(trips <= 8);
      else CHECK(trips == 0);
      CHECK(count(*other) == k_rows);
      // Outside a transaction it runs at once.
      auto& s = db->statement("INSERT INTO ids(id, v) VALUES(?, ?)");
      s.bind(1, int64_t{k_rows + 1});
      s.bind(2, "alone");
      s.exec_later();
      CHECK(count(*other) == k_rows + 1);
    }
  }
}

TEST_CASE("database: a failing exec_later fails its transaction, a nested one by itself", "[database]") {
  for (const auto& b : backends()) {
    DYNAMIC_SECTION(b.name) {
      auto db = fresh(b);
      put(*db, "a", "1");
      const std::string before = rows(*db);
      auto duplicate_later = [&] {
        auto& s = db->statement("INSERT INTO kv(k, s) VALUES(?, ?)");
        s.bind(1, "a");
        s.bind(2, "dup");
        s.exec_later();  // a UNIQUE violation, maybe reported later
      };
      // Nothing follows it in the body: the failure still fails the transaction.
      CHECK_THROWS_AS(db->transaction([&] {
        put(*db, "b", "1");
        duplicate_later();
      }),
                      DatabaseError);
      CHECK(rows(*db) == before);
      CHECK_FALSE(db->in_transaction());

      // A nested body that returns normally after it fails by itself; the
      // outer body goes on and commits its own writes.
      bool inner_failed = false;
      db->transaction([&] {
        put(*db, "outer", "1");
        try {
          db->transaction([&] {
            put(*db, "inner", "1");
            duplicate_later();
          });
        } catch (const DatabaseError&) {
          inner_failed = true;
        }
        put(*db, "after", "1");
      });
      CHECK(inner_failed);
      CHECK(rows(*db) == "a|1|0|0.000000|\nafter|1|0|0.000000|\nouter|1|0|0.000000|\n");
    }
  }
}

TEST_CASE("database: new_id gives ids no row has, across transactions and connections", "[database]") {
  for (const auto& b : backends()) {
    DYNAMIC_SECTION(b.name) {
      std::string where;
      auto a = fresh(b, &where);
      auto c = open_database(where);
      std::vector<int64_t> ids;
      auto insert = [&](Database& d, int n) {
        d.transaction([&] {
          for (int i = 0; i < n; ++i) {
            const int64_t id = d.new_id("ids", "id");
            auto& s = d.statement("INSERT INTO ids(id, v) VALUES(?, ?)");
            s.bind(1, id);
            s.bind(2, "x");
            s.exec_later();
            ids.push_back(id);
          }
        });
      };
      insert(*a, 3);   // leaves ids of its block unused (PostgreSQL)
      insert(*c, 50);  // more than one block
      insert(*a, 2);
      // A sequence does not give a rolled-back transaction's id again
      // (SQLite's MAX + 1 does, which is as unique).
      int64_t rolled_back = 0;
      CHECK_THROWS_AS(a->transaction([&] {
        rolled_back = a->new_id("ids", "id");
        throw std::runtime_error("rolled back");
      }),
                      std::runtime_error);
      insert(*a, 1);
      if (a->shared()) CHECK(std::find(ids.begin(), ids.end(), rolled_back) == ids.end());
      // An insert that lets the column assign the id does not collide either.
      auto& r = c->statement("INSERT INTO ids(v) VALUES('auto') RETURNING id");
      REQUIRE(r.step());
      const int64_t assigned = r.int64(0);
      r.reset();
      std::vector<int64_t> sorted = ids;
      std::sort(sorted.begin(), sorted.end());
      CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
      CHECK(std::find(ids.begin(), ids.end(), assigned) == ids.end());
      auto& n = c->statement("SELECT COUNT(*) FROM ids");
      n.step();
      CHECK(n.int64(0) == 3 + 50 + 2 + 1 + 1);
      n.reset();
    }
  }
}

TEST_CASE("database: the schema version starts at 0 and is kept", "[database]") {
  for (const auto& b : backends()) {
    DYNAMIC_SECTION(b.name) {
      std::string where;
      auto db = fresh(b, &where);
      CHECK(db->schema_version() == 0);
      db->transaction([&] { db->set_schema_version(7); });
      CHECK(db->schema_version() == 7);
      CHECK(open_database(where)->schema_version() == 7);
    }
  }
}

TEST_CASE("database: a transaction's writes stay invisible to other connections until it commits",
          "[database]") {
  for (const auto& b : backends()) {
    DYNAMIC_SECTION(b.name) {
      std::string where;
      auto writer = fresh(b, &where);
      auto reader = open_database(where);
      put(*writer, "a", "1");
      writer->transaction([&] {
        put(*writer, "a", "2");
        CHECK(rows(*writer) == "a|2|0|0.000000|\n");  // its own writes
        CHECK(rows(*reader) == "a|1|0|0.000000|\n");  // a reader neither waits nor sees them
      });
      CHECK(rows(*reader) == "a|2|0|0.000000|\n");
    }
  }
}

TEST_CASE("database: a query left unfinished does not keep the connection from writing later", "[database]") {
  for (const auto& b : backends()) {
    DYNAMIC_SECTION(b.name) {
      std::string where;
      auto a = fresh(b, &where);
      auto other = open_database(where);
      for (const char* k : {"a", "b"}) put(*a, k, k);
      auto& s = a->statement("SELECT k FROM kv ORDER BY k");
      REQUIRE(s.step());  // abandoned after one row
      put(*other, "c", "written meanwhile");
      a->transaction([&] { put(*a, "d", "1"); });
      CHECK(rows(*other).find("d|1|") != std::string::npos);
    }
  }
}

TEST_CASE("database: only a connection that wrote nothing may be left unclosed at exit", "[database]") {
  for (const auto& b : backends()) {
    DYNAMIC_SECTION(b.name) {
      std::string where;
      auto made = fresh(b, &where);
      CHECK_FALSE(made->close_frees_only());  // its schema and first row
      // SQLite's connection that only read owes its close nothing; a
      // server's is always closed.
      const bool embedded = std::string(b.name) == "sqlite";
      auto reader = open_database(where);
      CHECK(counter(*reader) == 0);
      auto& pending = reader->statement("SELECT k FROM kv");
      pending.step();  // a read still open
      CHECK(reader->close_frees_only() == embedded);
      auto writer = open_database(where);
      put(*writer, "a", "1");
      CHECK_FALSE(writer->close_frees_only());
      auto migrator = open_database(where);
      migrator->transaction([&] { migrator->set_schema_version(3); });
      CHECK_FALSE(migrator->close_frees_only());
    }
  }
}

TEST_CASE("database: writers in two processes serialise and lose nothing", "[database]") {
  for (const auto& b : backends()) {
    DYNAMIC_SECTION(b.name) {
      std::string where;
      fresh(b, &where);  // the schema, then each process opens its own connection
      constexpr int rounds = 200;
      const pid_t child = ::fork();
      REQUIRE(child >= 0);
      if (child == 0) {
        int rc = 0;
        try {
          auto db = open_database(where);
          for (int i = 0; i < rounds; ++i) increment(*db);
        } catch (...) {
          rc = 1;
        }
        ::_exit(rc);  // no Catch2 teardown in the child
      }
      std::atomic<int> failures{0};
      try {
        auto db = open_database(where);
        for (int i = 0; i < rounds; ++i) increment(*db);
      } catch (...) {
        ++failures;
      }
      int status = 0;
      REQUIRE(::waitpid(child, &status, 0) == child);
      CHECK(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 0);
      CHECK(failures == 0);
      CHECK(counter(*open_database(where)) == 2 * rounds);
    }
  }
}

// SQLite's case: its write lock is the database's. (PostgreSQL's open
// writes the version row if missing, so it waits for a writer of that row.)
TEST_CASE("store: opening a workspace at this version only reads it: a writer meanwhile does not hold it up",
          "[database][sqlite]") {
  const std::string where = fresh_sqlite_file();
  Store::open_location(where, fs::temp_directory_path());  // creates and migrates it
  auto writer = open_database(where);
  writer->transaction([&] {
    writer->set_schema_version(Store::schema_version());  // SQLite's write lock is held until the commit
    // An open that began a write transaction would wait here for the busy
    // timeout (ten minutes) and then fail.
    auto st = Store::open_location(where, fs::temp_directory_path());
    CHECK_FALSE(st->meta("no such key"));
  });
}

// SQLite reads the file through a mapping of it (sqlite_database.cpp): a
// file truncated under a reader is SIGBUS when the reader reaches the pages
// it lost, which emco reports as a storage error naming the database, with
// the workspace's exit code, instead of dying of the signal.
TEST_CASE("database: a database file truncated under a reader is emco's storage error and exit 6",
          "[database][sqlite]") {
  const std::string where = fresh_sqlite_file();
  {
    auto db = open_database(where);
    db->exec("CREATE TABLE big(n INTEGER PRIMARY KEY, b BLOB)");
    const std::string blob(64 * 1024, 'x');
    for (int i = 0; i < 32; ++i) {
      auto& s = db->statement("INSERT INTO big(n, b) VALUES(?, ?)");
      s.bind(1, int64_t{i});
      s.bind_blob(2, blob);
      s.exec();
    }
  }  // the last connection's close copies the rows into the file
  REQUIRE(fs::file_size(where) > 2 * 1024 * 1024);
  const std::string err = where + ".stderr";
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ::dup2(fd, 2) < 0) ::_exit(90);
    try {
      auto db = open_database(where);
      auto& s = db->statement("SELECT n, b FROM big ORDER BY n");
      if (!s.step()) ::_exit(91);
      if (::truncate(where.c_str(), 4096) != 0) ::_exit(92);  // the rows' pages are gone
      while (s.step()) (void)s.blob(1);
    } catch (...) {
      ::_exit(93);  // SQLite noticed: not what this case is about
    }
    ::_exit(94);  // read every row: the pages were not read through the mapping
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 6);
  std::ifstream in(err);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "emco: error: the workspace's storage failed: the workspace database '" + where +
                    "' could not be read (SIGBUS: the file shrank under emco, or its disk failed to read it)\n"
                    "hint: check the file and the file system, then run 'emco sync' to finish interrupted work "
                    "(every change is one transaction: nothing was half-written)\n");
  // While a database is open the handler is emco's; once none is, the action
  // before it is back (compared, not raised: under ASan the action before is
  // the sanitizer's own report).
  struct sigaction before {}, during {}, after {};
  REQUIRE(::sigaction(SIGBUS, nullptr, &before) == 0);
  {
    auto db = open_database(where + ".other");
    REQUIRE(::sigaction(SIGBUS, nullptr, &during) == 0);
  }
  REQUIRE(::sigaction(SIGBUS, nullptr, &after) == 0);
  CHECK(reinterpret_cast<void*>(during.sa_handler) != reinterpret_cast<void*>(before.sa_handler));
  CHECK(reinterpret_cast<void*>(after.sa_handler) == reinterpret_cast<void*>(before.sa_handler));
  CHECK(after.sa_flags == before.sa_flags);
}

TEST_CASE("database: a location with a scheme no backend has is refused", "[database]") {
  CHECK_THROWS_AS(open_database("nosuchdb://host/x"), DatabaseError);
}

// The PostgreSQL backend's own pieces and behaviour beyond the shared
// contract.

#include "core/store/store.hpp"

TEST_CASE("postgresql: '?' is a parameter outside literals, identifiers and comments", "[database][postgresql]") {
  auto db = open_database(emco::test::fresh_store());
  auto& s = db->statement("SELECT '?', ? AS \"is it?\", 'it''s ?' -- ?\n , ? /* ? */");
  s.bind(1, "one");
  s.bind(2, "two");
  REQUIRE(s.step());
  CHECK(s.str(0) == "?");
  CHECK(s.str(1) == "one");
  CHECK(s.str(2) == "it's ?");
  CHECK(s.str(3) == "two");
}

TEST_CASE("postgresql: the SQLite-only DDL of CREATE/ALTER TABLE is translated, other statements are not",
          "[database][postgresql]") {
  auto db = open_database(emco::test::fresh_store());
  db->exec("CREATE TABLE t(id INTEGER PRIMARY KEY, n INTEGER NOT NULL, b BLOB, s TEXT DEFAULT 'TEXT', r REAL);"
           "CREATE TABLE p(a TEXT, b TEXT, PRIMARY KEY(a, b)) WITHOUT ROWID;"
           "ALTER TABLE t ADD COLUMN plan TEXT NOT NULL DEFAULT 'INTEGER';");
  auto& s = db->statement(
      "SELECT column_name, data_type, COALESCE(collation_name, ''), is_identity, COALESCE(column_default, '') "
      "FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 't' "
      "ORDER BY ordinal_position");
  std::vector<std::string> cols;
  while (s.step()) cols.push_back(s.str(0) + " " + s.str(1) + " " + s.str(2) + " " + s.str(3) + " " + s.str(4));
  CHECK(cols == std::vector<std::string>{"id bigint  YES ", "n bigint  NO ", "b bytea  NO ",
                                         "s text C NO 'TEXT'::text", "r double precision  NO ",
                                         "plan text C NO 'INTEGER'::text"});
  // Text compares by bytes ('/' + 1 == '0': emco's key ranges rely on it).
  auto& ins = db->statement("INSERT INTO t(n, s) VALUES(1, ?), (2, ?), (3, ?) RETURNING id");
  ins.bind(1, "a/b");
  ins.bind(2, "a0");
  ins.bind(3, "a-b");
  ins.exec();
  auto& order = db->statement("SELECT s FROM t ORDER BY s");
  std::string seen;
  while (order.step()) seen += order.str(0) + " ";
  CHECK(seen == "a-b a/b a0 ");
}

TEST_CASE("postgresql: a URL with a password is refused", "[database]") {
  CHECK_THROWS_WITH(open_database("postgresql://emco:secret@localhost/db"),
                    Catch::Contains("PGPASSWORD") && !Catch::Contains("secret"));
  CHECK_THROWS_WITH(open_database("postgresql://localhost/db?password=secret"), Catch::Contains("~/.pgpass"));
}

TEST_CASE("postgresql: the search_path's first schema is created and holds the tables", "[database][postgresql]") {
  const std::string where = emco::test::fresh_store();
  const std::string schema = where.substr(where.find("%3D") + 3);
  auto db = open_database(where);
  db->exec("CREATE TABLE here(x INTEGER)");
  auto& s = db->statement("SELECT table_schema FROM information_schema.tables WHERE table_name = 'here'");
  REQUIRE(s.step());
  CHECK(s.str(0) == schema);
  CHECK_FALSE(s.step());
}

TEST_CASE("postgresql: a transaction that conflicts with a committed one runs its body again, invisibly",
          "[database][postgresql]") {
  std::string where = emco::test::fresh_store();
  auto a = open_database(where);
  a->exec("CREATE TABLE counter(n INTEGER NOT NULL); INSERT INTO counter(n) VALUES(0);");
  auto b = open_database(where);
  int runs = 0;
  a->transaction([&] {
    ++runs;
    const int64_t n = counter(*a);  // the snapshot is taken here
    // The first time only: another connection changes the row meanwhile;
    // a's update then cannot serialize (40001) and its body runs again.
    if (runs == 1) increment(*b);
    auto& u = a->statement("UPDATE counter SET n = ?");
    u.bind(1, n + 10);
    u.exec();
  });
  CHECK(runs == 2);
  CHECK(counter(*b) == 11);
}

TEST_CASE("postgresql: a conflict reported by a deferred statement runs the body again, invisibly",
          "[database][postgresql]") {
  std::string where = emco::test::fresh_store();
  auto a = open_database(where);
  a->exec("CREATE TABLE counter(n INTEGER NOT NULL); INSERT INTO counter(n) VALUES(0);");
  auto b = open_database(where);
  int runs = 0;
  a->transaction([&] {
    ++runs;
    const int64_t n = counter(*a);
    if (runs == 1) increment(*b);
    auto& u = a->statement("UPDATE counter SET n = ?");
    u.bind(1, n + 10);
    u.exec_later();  // its 40001 arrives when the body has returned
  });
  CHECK(runs == 2);
  CHECK(counter(*b) == 11);
}

TEST_CASE("postgresql: processes opening a fresh workspace at once migrate it once", "[database][postgresql]") {
  const std::string where = emco::test::fresh_store();
  constexpr int k = 4;
  std::vector<pid_t> kids;
  for (int i = 0; i < k; ++i) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      int rc = 0;
      try {
        Store::open_location(where, fs::temp_directory_path());
      } catch (...) {
        rc = 1;
      }
      ::_exit(rc);
    }
    kids.push_back(child);
  }
  for (pid_t c : kids) {
    int status = 0;
    REQUIRE(::waitpid(c, &status, 0) == c);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  CHECK(open_database(where)->schema_version() == Store::schema_version());
}

namespace {

// The test server's socket directory (its CA is in <host>/tls/ca.crt) and
// port, from EMCO_TEST_STORE.
std::string server_param(const std::string& name) {
  const std::string base = emco::test::test_store_base();
  const auto at = base.find(name + "=");
  REQUIRE(at != std::string::npos);
  const auto from = at + name.size() + 1;
  return base.substr(from, base.find('&', from) - from);
}

// The test server over TCP, with `query` added.
std::string tcp_url(const std::string& query) {
  return "postgresql://localhost:" + server_param("port") + "/postgres?user=postgres&" + query;
}

}  // namespace

TEST_CASE("postgresql: sslmode=verify-full reaches the server over TLS and refuses a certificate it cannot verify",
          "[database][postgresql]") {
  const std::string ca = server_param("host") + "/tls/ca.crt";
  auto db = open_database(tcp_url("sslmode=verify-full&sslrootcert=" + ca));
  auto& s = db->statement("SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()");
  REQUIRE(s.step());
  CHECK(s.int64(0) == 1);
  CHECK(s.str(1).rfind("TLS", 0) == 0);
  // The system's CAs did not sign the test server's certificate.
  CHECK_THROWS_WITH(open_database(tcp_url("sslmode=verify-full&sslrootcert=/etc/ssl/certs/ca-certificates.crt")),
                    Catch::Contains("certificate verify failed"));
  // Without TLS the server lets no TCP client in (hostssl only).
  CHECK_THROWS_AS(open_database(tcp_url("sslmode=disable")), DatabaseError);
}
