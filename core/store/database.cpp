#include "core/store/database.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "core/store/postgresql/postgresql_database.hpp"
#include "core/store/sqlite/sqlite_database.hpp"

namespace emco::store {

Statement& Database::statement(std::string_view sql) {
  auto it = m_cache.find(sql);
  if (it == m_cache.end()) it = m_cache.emplace(std::string(sql), prepare(sql)).first;
  Statement& s = *it->second;
  s.reset();
  return s;
}

void Database::transaction(const std::function<void()>& body) {
  if (m_depth == 0) {
    for (int attempt = 1;; ++attempt) {
      begin_write();
      m_depth = 1;
      m_conflict = false;
      try {
        body();
        flush_later();
        commit();
      } catch (...) {
        m_depth = 0;
        rollback();
        if (!m_conflict || attempt == k_conflict_attempts) throw;
        m_conflict = false;
        // Two transactions that conflicted once would conflict again if
        // retried in step: a random pause, its bound doubling up to 64 ms.
        thread_local std::minstd_rand rng(std::random_device{}());
        const int bound = 1 << std::min(attempt, 6);
        std::this_thread::sleep_for(std::chrono::microseconds(1000 * (rng() % static_cast<unsigned>(bound)) + 100));
        continue;
      }
      m_depth = 0;
      return;
    }
  }
  // Savepoint names need only be unique along the nesting, so the depth is
  // the name; both SQLite and PostgreSQL take this syntax. The statements
  // are cached like any other: a nested write is a hot path (the sync
  // engine records each resource's status in one).
  const std::string name = "emco_sp" + std::to_string(m_depth);
  statement("SAVEPOINT " + name).exec();
  ++m_depth;
  try {
    body();
    flush_later();
  } catch (...) {
    --m_depth;
    try {
      statement("ROLLBACK TO " + name).exec();
      statement("RELEASE " + name).exec();
    } catch (const DatabaseError&) {
      // The engine ended the whole transaction on the error (SQLite does on
      // I/O errors and full disks); the outermost call rolls back.
    }
    throw;
  }
  --m_depth;
  statement("RELEASE " + name).exec();
}

int64_t Database::new_id(std::string_view table, std::string_view column) {
  const std::string c(column);
  auto& s = statement("SELECT COALESCE(MAX(" + c + "), 0) + 1 FROM " + std::string(table));
  s.step();
  const int64_t id = s.int64(0);
  s.reset();
  return id;
}

namespace {

// The backends by the scheme of their location; "" takes every location
// that has no "scheme://" (a file path or ":memory:").
struct Backend {
  std::string_view scheme;
  std::unique_ptr<Database> (*open)(const std::string& location);
};
constexpr Backend k_backends[] = {
    {"", sqlite::open},
    {"postgresql", postgresql::open},
    {"postgres", postgresql::open},
};

}  // namespace

std::unique_ptr<Database> open_database(const std::string& location) {
  const auto colon = location.find("://");
  const std::string_view scheme =
      colon == std::string::npos ? std::string_view() : std::string_view(location).substr(0, colon);
  for (const auto& b : k_backends)
    if (b.scheme == scheme) return b.open(location);
  throw DatabaseError("no workspace backend for '" + std::string(scheme) + "://' locations");
}

}  // namespace emco::store
