#pragma once
// The PostgreSQL backend of store::Database (core/store/database.hpp), for
// team workspaces (issue 21): the only code that includes libpq's headers.
//
// Why libpq and not libpqxx: emco needs a handful of calls (connect,
// prepare, execute with parameters, read text results, error fields), which
// libpq's one stable C API gives directly; libpq is already a named
// dependency of the project (libpq-dev), while libpqxx would add a second
// library and its exception hierarchy on top of the same calls.
//
// Location: a libpq URL, "postgresql://[user@][host][:port]/dbname[?...]"
// (or "postgres://"). Everything libpq reads besides it applies: PGHOST,
// PGPORT, PGUSER, PGPASSWORD, ~/.pgpass, PGSERVICE and service files,
// PGSSLMODE / sslmode=verify-full with sslrootcert. A URL carrying a
// password is refused (it would be written into the workspace): credentials
// come only from libpq's environment and files.
//
// Schema: the first schema of the connection's search_path, set in the URL
// (options=-csearch_path%3Dteam1) or PGOPTIONS, holds emco's tables; it is
// created when absent. Without one, libpq's default ("$user", public).
//
// Transactions: a write transaction is BEGIN ISOLATION LEVEL SERIALIZABLE;
// a serialization failure or deadlock (SQLSTATE 40001, 40P01) is reported
// to Database::transaction, which re-runs the outermost body. Statements
// outside a transaction run in autocommit at READ COMMITTED.
//
// Schema version: the one-row table emco_schema_version in that schema,
// created at open under a session advisory lock; schema_version() inside a
// transaction first takes pg_advisory_xact_lock (keyed by the schema) and
// reads the row FOR UPDATE, so that two processes migrating at once run one
// after the other (the second's snapshot predates the first's commit: it
// gets a serialization failure and re-runs with a fresh one).
//
// DDL: exec() translates the SQLite-only constructs of CREATE TABLE and
// ALTER TABLE (database.hpp's list): INTEGER PRIMARY KEY -> BIGINT GENERATED
// BY DEFAULT AS IDENTITY PRIMARY KEY, INTEGER -> BIGINT, REAL -> DOUBLE
// PRECISION, BLOB -> BYTEA, TEXT -> TEXT COLLATE "C", WITHOUT ROWID dropped.

#include <memory>
#include <string>
#include <string_view>

#include "core/store/database.hpp"

namespace emco::store::postgresql {

// Connects to the database named by `url`. Throws DatabaseError (storage():
// the server could not be reached or refused the connection) and for a URL
// with a password.
std::unique_ptr<Database> open(const std::string& url);

// `sql` with its '?' parameters numbered $1..$n (outside string literals,
// quoted identifiers and comments), and their count.
std::string number_parameters(std::string_view sql, int& count);
// A script with the SQLite-only DDL of its CREATE TABLE / ALTER TABLE
// statements in PostgreSQL's terms (see above); other statements unchanged.
std::string translate_ddl(std::string_view script);

}  // namespace emco::store::postgresql
