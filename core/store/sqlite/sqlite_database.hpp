#pragma once
// The SQLite backend of store::Database (core/store/database.hpp): the only
// code that includes SQLite's headers.
//
// A file database runs in WAL mode (readers never wait for the writer) with
// synchronous=NORMAL and foreign keys on, and is read through a mapping of
// its file: a read error there (the file truncated under emco, a disk's
// read error) is SIGBUS, on which emco writes its storage error naming the
// database and exits 6; a write transaction is BEGIN
// IMMEDIATE, and a connection waits up to ten minutes for another one's lock
// (the busy timeout) instead of reporting "database is locked".

#include <memory>
#include <string>

#include "core/store/database.hpp"

namespace emco::store::sqlite {

// Opens (creating) the database file at `path`, or a private in-memory
// database for ":memory:". Throws DatabaseError.
std::unique_ptr<Database> open(const std::string& path);

}  // namespace emco::store::sqlite
