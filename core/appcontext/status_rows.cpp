#include "core/appcontext/status_rows.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/appcontext/rows.hpp"
#include "core/store/status_codec.hpp"
#include "core/store/database.hpp"
#include "core/util/error.hpp"

namespace emco::appcontext {

using store::encode_resource_states;
using store::ResourceStateView;
using store::visit_resource_states;

namespace {

// Clusters whose rows one statement reads (put_status_changes).
constexpr size_t k_read_chunk = 32;

// Reads the states stored for one (app, cluster), naming it if they are damaged.
void visit_states(std::string_view data, std::string_view ctx, std::string_view app, std::string_view cluster,
                  const std::function<void(const ResourceStateView&)>& fn) {
  try {
    visit_resource_states(data, fn);
  } catch (const store::MalformedStates& e) {
    fail(ErrorKind::internal,
         "the stored resource states of context '" + std::string(ctx) + "', app '" + std::string(app) +
             "', cluster '" + std::string(cluster) + "' are malformed at byte " + std::to_string(e.at),
         "the workspace database is damaged; restore it from a backup");
  }
}

const std::string& chunk_query() {
  static const std::string sql = [] {
    // IN (VALUES ...) alone would make SQLite search by ctx only and test
    // each of the context's rows against the list; through a subquery it
    // searches the whole key.
    std::string s =
        "SELECT app, cluster, connectivity, time, resources FROM ac_status WHERE ctx = ? AND (app, cluster) IN "
        "(SELECT column1, column2 FROM (VALUES ";
    for (size_t i = 0; i < k_read_chunk; ++i) s += i ? ",(?,?)" : "(?,?)";
    return s + ") AS v)";
  }();
  return sql;
}

// One (app, cluster)'s row as put_status_changes rewrites it. Its views
// point at the changes or at the row's stored values, which stay in place
// (rows are not added to once reading begins).
struct Row {
  std::string_view app, cluster;
  bool recorded = false;  // connectivity recorded (NULL in the row until then)
  std::string_view connectivity, time;
  std::vector<ResourceStateView> resources;
  std::string stored_connectivity, stored_time, stored_resources;
  std::vector<const StatusChange*> changes;
};

ResourceStateView& resource_in(Row& row, std::string_view name) {
  auto& v = row.resources;
  auto it = std::lower_bound(v.begin(), v.end(), name,
                             [](const ResourceStateView& s, std::string_view n) { return s.resource < n; });
  if (it == v.end() || it->resource != name) {
    ResourceStateView fresh;
    fresh.resource = name;
    fresh.status = resource_status::pending;
    it = v.insert(it, fresh);
  }
  return *it;
}

void apply(Row& row) {
  for (const StatusChange* c : row.changes) switch (c->what) {
      case StatusChange::What::connectivity:
        row.recorded = true;
        row.connectivity = c->value;
        row.time = c->time;
        break;
      case StatusChange::What::status: {
        auto& r = resource_in(row, c->resource);
        r.status = c->value;
        r.message = c->message;
        r.time = c->time;
        break;
      }
      case StatusChange::What::ready: resource_in(row, c->resource).ready = c->value; break;
    }
}

void write_row(store::Database& db, const std::string& ctx, const Row& row) {
  auto& s = db.statement(
      "INSERT INTO ac_status(ctx, app, cluster, connectivity, time, resources, readback) VALUES(?,?,?,?,?,?,'') "
      "ON CONFLICT(ctx, app, cluster) DO UPDATE SET connectivity = excluded.connectivity, time = excluded.time, "
      "resources = excluded.resources");
  s.bind(1, ctx);
  s.bind(2, row.app);
  s.bind(3, row.cluster);
  if (row.recorded) s.bind(4, row.connectivity);
  else s.bind_null(4);
  s.bind(5, row.time);
  s.bind_blob(6, encode_resource_states(row.resources));
  // Callers record a batch in one transaction: on a server the rows go in
  // one pipeline (store::Statement::exec_later).
  s.exec_later();
}

void read_into(Row& row, store::Statement& s, const std::string& ctx) {
  row.recorded = !s.is_null(2);
  row.stored_connectivity = row.recorded ? s.text(2) : std::string_view();
  row.connectivity = row.stored_connectivity;
  row.stored_time = s.text(3);
  row.time = row.stored_time;
  row.stored_resources = s.blob(4);
  row.resources.clear();
  visit_states(row.stored_resources, ctx, row.app, row.cluster,
               [&](const ResourceStateView& v) { row.resources.push_back(v); });
}

struct RowKeyHash {
  size_t operator()(const std::pair<std::string_view, std::string_view>& k) const {
    const size_t h = std::hash<std::string_view>()(k.first);
    return h ^ (std::hash<std::string_view>()(k.second) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  }
};

}  // namespace

void put_status_changes(store::Store& st, const std::string& ctx, const std::vector<StatusChange>& changes) {
  std::vector<Row> rows;
  using Key = std::pair<std::string_view, std::string_view>;  // (app, cluster), viewing the changes
  std::unordered_map<Key, size_t, RowKeyHash> index;
  for (const auto& c : changes) {
    // A cluster's changes usually come together: the last row first.
    if (!rows.empty() && rows.back().app == c.app && rows.back().cluster == c.cluster) {
      rows.back().changes.push_back(&c);
      continue;
    }
    auto [it, added] = index.try_emplace(Key(c.app, c.cluster), rows.size());
    if (added) {
      rows.emplace_back();
      rows.back().app = c.app;
      rows.back().cluster = c.cluster;
    }
    rows[it->second].changes.push_back(&c);
  }
  auto& db = st.database();
  for (size_t from = 0; from < rows.size(); from += k_read_chunk) {
    const size_t to = std::min(rows.size(), from + k_read_chunk);
    if (to - from == 1) {
      auto& s = db.statement(
          "SELECT app, cluster, connectivity, time, resources FROM ac_status WHERE ctx = ? AND app = ? AND cluster = ?");
      s.bind(1, ctx);
      s.bind(2, rows[from].app);
      s.bind(3, rows[from].cluster);
      if (s.step()) read_into(rows[from], s, ctx);
      s.reset();
    } else {
      // A short chunk repeats its first cluster: one statement for any size.
      auto& s = db.statement(chunk_query());
      s.bind(1, ctx);
      for (size_t i = 0; i < k_read_chunk; ++i) {
        const Row& r = rows[from + i < to ? from + i : from];
        s.bind(static_cast<int>(2 + 2 * i), r.app);
        s.bind(static_cast<int>(3 + 2 * i), r.cluster);
      }
      while (s.step()) read_into(rows[index.at(Key(s.text(0), s.text(1)))], s, ctx);
      s.reset();
    }
    for (size_t i = from; i < to; ++i) {
      apply(rows[i]);
      write_row(db, ctx, rows[i]);
    }
  }
}

namespace {
// One change in a write of its own.
void write_one(store::Store& st, const std::string& ctx, const StatusChange& c) {
  st.write([&] { put_status_changes(st, ctx, {c}); });
}
}  // namespace

void set_resource_status(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                         const std::string& resource, const std::string& status, const std::string& message,
                         const std::string& time) {
  write_one(st, ctx, StatusChange::of_status(app, cluster, resource, status, message, time));
}

void set_resource_ready(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                        const std::string& resource, const std::string& ready) {
  write_one(st, ctx, StatusChange::of_ready(app, cluster, resource, ready));
}

namespace {

// Appends the states of one (app, cluster) row to `out`.
void append_states(std::vector<ResourceState>& out, std::string_view data, std::string_view ctx, std::string_view app,
                   std::string_view cluster) {
  visit_states(data, ctx, app, cluster, [&](const ResourceStateView& v) {
    out.push_back({std::string(app), std::string(cluster), std::string(v.resource), std::string(v.status),
                   std::string(v.message), std::string(v.time), std::string(v.ready)});
  });
}

}  // namespace

std::vector<ResourceState> resource_states(store::Store& st, const std::string& ctx) {
  std::vector<ResourceState> out;
  auto& s = st.database().statement("SELECT app, cluster, resources FROM ac_status WHERE ctx = ? ORDER BY app, cluster");
  s.bind(1, ctx);
  while (s.step()) append_states(out, s.blob(2), ctx, s.text(0), s.text(1));
  return out;
}

std::optional<ResourceState> resource_state(store::Store& st, const std::string& ctx, const std::string& app,
                                            const std::string& cluster, const std::string& resource) {
  auto& s = st.database().statement("SELECT resources FROM ac_status WHERE ctx = ? AND app = ? AND cluster = ?");
  s.bind(1, ctx);
  s.bind(2, app);
  s.bind(3, cluster);
  std::optional<ResourceState> out;
  if (s.step())
    visit_states(s.blob(0), ctx, app, cluster, [&](const ResourceStateView& v) {
      if (v.resource == resource)
        out = ResourceState{app,           cluster,         resource, std::string(v.status), std::string(v.message),
                            std::string(v.time), std::string(v.ready)};
    });
  s.reset();
  return out;
}

void for_each_resource_status(store::Store& st, const std::string& ctx, const std::string& app,
                              const std::function<void(std::string_view cluster, std::string_view resource,
                                                       std::string_view status)>& fn) {
  auto& s = st.database().statement("SELECT cluster, resources FROM ac_status WHERE ctx = ? AND app = ? ORDER BY cluster");
  s.bind(1, ctx);
  s.bind(2, app);
  while (s.step()) {
    const std::string_view cluster = s.text(0);
    visit_states(s.blob(1), ctx, app, cluster, [&](const ResourceStateView& v) { fn(cluster, v.resource, v.status); });
  }
  s.reset();
}

void set_cluster_state(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                       const std::string& conn, const std::string& time) {
  write_one(st, ctx, StatusChange::of_connectivity(app, cluster, conn, time));
}

void set_cluster_readback(store::Store& st, const std::string& ctx, const std::string& app,
                          const std::string& cluster, const std::string& readback, const std::string& time) {
  st.write([&] {
    // A read-back records the cluster: its connectivity, unless recorded,
    // becomes Unknown.
    auto& s = st.database().statement(
        "INSERT INTO ac_status(ctx, app, cluster, connectivity, time, resources, readback) VALUES(?,?,?,?,?,NULL,?) "
        "ON CONFLICT(ctx, app, cluster) DO UPDATE SET readback = excluded.readback, time = excluded.time, "
        "connectivity = COALESCE(ac_status.connectivity, excluded.connectivity)");
    s.bind(1, ctx);
    s.bind(2, app);
    s.bind(3, cluster);
    s.bind(4, std::string_view(connectivity::unknown));
    s.bind(5, time);
    s.bind(6, readback);
    s.exec();
  });
}

States states(store::Store& st, const std::string& ctx) {
  // One statement for both (the status query wants both): a second to
  // prepare cost more than reading the same rows twice.
  States out;
  auto& s = st.database().statement(
      "SELECT app, cluster, resources, connectivity, readback, time FROM ac_status WHERE ctx = ? ORDER BY app, cluster");
  s.bind(1, ctx);
  while (s.step()) {
    append_states(out.resources, s.blob(2), ctx, s.text(0), s.text(1));
    if (!s.is_null(3)) out.clusters.push_back({s.str(0), s.str(1), s.str(3), s.str(4), s.str(5)});
  }
  return out;
}

void clear_states(store::Store& st, const std::string& ctx) {
  st.write([&] {
    auto& s = st.database().statement("DELETE FROM ac_status WHERE ctx = ?");
    s.bind(1, ctx);
    s.exec();
  });
}

}  // namespace emco::appcontext
