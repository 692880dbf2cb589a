#pragma once
// Private to core/store and modules that keep their own tables in the
// workspace database: the SQLiteCpp handle and cached statements.

#include <map>
#include <memory>
#include <string>

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/store/store.hpp"

namespace emco::store {

class Store::Impl {
public:
  explicit Impl(const std::string& path);
  SQLite::Database db;
  int transaction_depth = 0;
  // A prepared statement cached by its SQL text, reset and unbound.
  SQLite::Statement& stmt(const std::string& sql);

private:
  std::map<std::string, std::unique_ptr<SQLite::Statement>> m_cache;
};

}  // namespace emco::store
