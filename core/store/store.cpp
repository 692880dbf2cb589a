#include "core/store/store.hpp"

#include <unistd.h>

#include <chrono>
#include <set>
#include <unordered_map>
#include <thread>

#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include "core/resource/references.hpp"
#include "core/store/plan_codec.hpp"
#include "core/store/store_impl.hpp"
#include "core/util/error.hpp"
#include "core/util/sha256.hpp"
#include "core/util/strings.hpp"

namespace emco::store {

using resource::Key;
using resource::Kind;

namespace {

void plans_from_rows(SQLite::Database& db);

// Forward migrations: entry i moves a database from version i to i+1: its
// SQL, then (when set) a conversion of the data in C++.
struct Migration {
  const char* sql;
  void (*convert)(SQLite::Database&) = nullptr;
};
const std::vector<Migration> k_migrations = {
    {R"sql(
CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE resources(
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  key TEXT NOT NULL UNIQUE,
  key_json TEXT NOT NULL,
  key_id TEXT NOT NULL,
  parent_id INTEGER REFERENCES resources(id) ON DELETE RESTRICT,
  data TEXT NOT NULL,
  state_info TEXT NOT NULL DEFAULT ''
);
CREATE INDEX resources_kind ON resources(kind, key);
CREATE INDEX resources_parent ON resources(parent_id);
CREATE TABLE contents(
  resource_id INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
  ord INTEGER NOT NULL,
  name TEXT NOT NULL,
  filename TEXT NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY(resource_id, ord)
);
CREATE TABLE refs(
  from_id INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
  to_id INTEGER NOT NULL REFERENCES resources(id) ON DELETE RESTRICT,
  field TEXT NOT NULL,
  PRIMARY KEY(from_id, to_id, field)
);
CREATE INDEX refs_to ON refs(to_id);
)sql"},
    // 2: AppContexts (core/appcontext): the plan (contexts, apps, clusters,
    // resources pointing at content stored once per hash) and the deploy state
    // the sync engine keeps (resource/cluster status, event queue, active set).
    {R"sql(
CREATE TABLE ac_contexts(
  id TEXT PRIMARY KEY,
  owner_kind TEXT NOT NULL,
  owner_key TEXT NOT NULL,
  meta TEXT NOT NULL,
  status TEXT NOT NULL,
  desired TEXT NOT NULL DEFAULT '',
  parent_id TEXT REFERENCES ac_contexts(id) ON DELETE RESTRICT,
  children TEXT NOT NULL DEFAULT '[]',
  status_ctx TEXT NOT NULL DEFAULT '',
  stop_flag INTEGER NOT NULL DEFAULT 0,
  pending_terminate INTEGER NOT NULL DEFAULT 0,
  revision INTEGER NOT NULL DEFAULT 0,
  created TEXT NOT NULL,
  seq INTEGER NOT NULL
);
CREATE INDEX ac_contexts_owner ON ac_contexts(owner_key, seq);
CREATE INDEX ac_contexts_parent ON ac_contexts(parent_id);
CREATE TABLE ac_contents(hash TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE ac_apps(
  ctx TEXT NOT NULL REFERENCES ac_contexts(id) ON DELETE CASCADE,
  ord INTEGER NOT NULL,
  app TEXT NOT NULL,
  deps TEXT NOT NULL DEFAULT '[]',
  PRIMARY KEY(ctx, ord)
);
CREATE TABLE ac_clusters(
  id INTEGER PRIMARY KEY,
  ctx TEXT NOT NULL REFERENCES ac_contexts(id) ON DELETE CASCADE,
  app TEXT NOT NULL,
  cluster TEXT NOT NULL,
  grp INTEGER NOT NULL,
  UNIQUE(ctx, app, cluster)
);
CREATE TABLE ac_resources(
  cluster_id INTEGER NOT NULL REFERENCES ac_clusters(id) ON DELETE CASCADE,
  ord INTEGER NOT NULL,
  hook TEXT NOT NULL,
  name TEXT NOT NULL,
  hash TEXT NOT NULL,
  PRIMARY KEY(cluster_id, ord)
);
CREATE INDEX ac_resources_hash ON ac_resources(hash);
CREATE TABLE ac_resource_status(
  ctx TEXT NOT NULL,
  app TEXT NOT NULL,
  cluster TEXT NOT NULL,
  resource TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'Pending',
  message TEXT NOT NULL DEFAULT '',
  time TEXT NOT NULL DEFAULT '',
  ready TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(ctx, app, cluster, resource)
);
CREATE TABLE ac_cluster_status(
  ctx TEXT NOT NULL,
  app TEXT NOT NULL,
  cluster TEXT NOT NULL,
  connectivity TEXT NOT NULL DEFAULT 'Unknown',
  readback TEXT NOT NULL DEFAULT '',
  time TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(ctx, app, cluster)
);
CREATE TABLE ac_queue(
  ctx TEXT NOT NULL REFERENCES ac_contexts(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  event TEXT NOT NULL,
  ucid TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'Pending',
  message TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(ctx, seq)
);
CREATE TABLE ac_active(ctx TEXT PRIMARY KEY REFERENCES ac_contexts(id) ON DELETE CASCADE);
)sql"},
    // 3: credentials emco issues (core/lifecycle/credentials.hpp): the
    // kubeconfig of a logical cloud's user, per cluster.
    {R"sql(
CREATE TABLE credentials(
  owner TEXT NOT NULL,
  cluster TEXT NOT NULL,
  kubeconfig TEXT NOT NULL,
  created TEXT NOT NULL,
  PRIMARY KEY(owner, cluster)
);
)sql"},
    // 4: an app's plan in a context is one row addressed by its digest
    // (core/store/plan_codec.hpp), shared by every context that plans the app
    // the same way, instead of a row per cluster and per resource: an update
    // stores only what changed. ac_plan_contents lists the contents a plan
    // uses, so unused content can be dropped. ac_apps.inputs: the digest of
    // what decided an app's plan (core/plan), so an update can reuse it.
    {R"sql(
CREATE TABLE ac_plans(digest TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE ac_plan_contents(
  plan TEXT NOT NULL REFERENCES ac_plans(digest) ON DELETE CASCADE,
  hash TEXT NOT NULL,
  PRIMARY KEY(plan, hash)
) WITHOUT ROWID;
CREATE INDEX ac_plan_contents_hash ON ac_plan_contents(hash);
ALTER TABLE ac_apps ADD COLUMN plan TEXT NOT NULL DEFAULT '';
ALTER TABLE ac_apps ADD COLUMN inputs TEXT NOT NULL DEFAULT '';
CREATE INDEX ac_apps_plan ON ac_apps(plan);
)sql",
     plans_from_rows},
};

// Version 3 kept a row per (app, cluster) and per resource: each app's rows
// become its plan, then those tables go.
void plans_from_rows(SQLite::Database& db) {
  SQLite::Statement apps(db, "SELECT ctx, ord, app FROM ac_apps");
  SQLite::Statement rows(db,
                         "SELECT c.cluster, c.grp, r.hook, r.name, r.hash FROM ac_clusters c LEFT JOIN ac_resources r "
                         "ON r.cluster_id = c.id WHERE c.ctx = ? AND c.app = ? ORDER BY c.id, r.ord");
  SQLite::Statement put_plan(db, "INSERT OR IGNORE INTO ac_plans(digest, data) VALUES(?, ?)");
  SQLite::Statement put_content(db, "INSERT OR IGNORE INTO ac_plan_contents(plan, hash) VALUES(?, ?)");
  SQLite::Statement set_plan(db, "UPDATE ac_apps SET plan = ? WHERE ctx = ? AND ord = ?");
  while (apps.executeStep()) {
    const std::string ctx = apps.getColumn(0).getString();
    const int ord = apps.getColumn(1).getInt();
    rows.bind(1, ctx);
    rows.bind(2, apps.getColumn(2).getString());
    PlanWriter plan;
    std::set<std::string> hashes;
    std::string cluster;
    bool first = true;
    while (rows.executeStep()) {
      std::string name = rows.getColumn(0).getString();
      if (first || name != cluster) plan.cluster(name, rows.getColumn(1).getInt());
      first = false;
      cluster = std::move(name);
      if (rows.getColumn(3).isNull()) continue;  // a cluster without resources
      std::string hash = rows.getColumn(4).getString();
      plan.resource(rows.getColumn(2).getString(), rows.getColumn(3).getString(), hash);
      hashes.insert(std::move(hash));
    }
    rows.reset();
    std::string data = plan.finish();
    std::string digest = sha256_hex(data);
    put_plan.bind(1, digest);
    put_plan.bind(2, data.data(), static_cast<int>(data.size()));
    put_plan.exec();
    put_plan.reset();
    for (const auto& h : hashes) {
      put_content.bind(1, digest);
      put_content.bind(2, h);
      put_content.exec();
      put_content.reset();
    }
    set_plan.bind(1, digest);
    set_plan.bind(2, ctx);
    set_plan.bind(3, ord);
    set_plan.exec();
    set_plan.reset();
  }
  db.exec("DROP TABLE ac_resources; DROP TABLE ac_clusters;");
}

constexpr int k_busy_timeout_ms = 600000;  // wait, never report "database is locked"

// A key range that selects every descendant of `prefix` ("a=b/..."):
// '/' + 1 == '0', so [prefix/, prefix0) covers exactly the keys below it.
std::pair<std::string, std::string> descendant_range(const Key& prefix) {
  std::string p = prefix.str();
  return {p + "/", p + "0"};
}

Resource row_to_resource(SQLite::Statement& s) {
  Resource r;
  r.id = s.getColumn(0).getInt64();
  r.kind = resource::find_kind(s.getColumn(1).getString());
  r.key = Key::parse(s.getColumn(2).getString());
  r.data = s.getColumn(3).getString();
  r.state_info = s.getColumn(4).getString();
  return r;
}

const char* k_select = "SELECT id, kind, key, data, state_info FROM resources ";

}  // namespace

const char* outcome_word(PutOutcome o) {
  switch (o) {
    case PutOutcome::created: return "created";
    case PutOutcome::configured: return "configured";
    case PutOutcome::unchanged: return "unchanged";
  }
  return "";
}

std::string describe(const Kind& k, const Key& key) {
  std::vector<std::string> values;
  for (const auto& p : key.parts) {
    bool fixed = false;
    for (const Kind* c : resource::lineage(k.id))
      for (const auto& f : c->fixed) fixed = fixed || f.first == p.first;
    if (!fixed) values.push_back(p.second);
  }
  return k.display + " '" + join(values, "/") + "'";
}

Store::Impl::Impl(const std::string& path)
    : db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLite::OPEN_FULLMUTEX) {
  db.setBusyTimeout(k_busy_timeout_ms);
}

SQLite::Statement& Store::Impl::stmt(const std::string& sql) {
  auto& slot = m_cache[sql];
  if (!slot) slot = std::make_unique<SQLite::Statement>(db, sql);
  slot->reset();
  slot->clearBindings();
  return *slot;
}

Store::Store(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Store::~Store() = default;

int Store::schema_version() { return static_cast<int>(k_migrations.size()); }

namespace {

std::unique_ptr<Store::Impl> open_impl(const std::string& path, bool memory) {
  std::unique_ptr<Store::Impl> impl;
  try {
    impl = std::make_unique<Store::Impl>(path);
    if (!memory) impl->db.exec("PRAGMA journal_mode=WAL");
    impl->db.exec("PRAGMA foreign_keys=ON");
    impl->db.exec("PRAGMA synchronous=NORMAL");
    // Migrations run under an immediate transaction so two processes opening
    // a fresh workspace at once cannot both migrate it.
    impl->db.exec("BEGIN IMMEDIATE");
    int version = impl->db.execAndGet("PRAGMA user_version").getInt();
    if (version > static_cast<int>(k_migrations.size())) {
      impl->db.exec("ROLLBACK");
      fail(ErrorKind::workspace,
           "workspace schema version " + std::to_string(version) + " is newer than this emco supports (" +
               std::to_string(k_migrations.size()) + ")",
           "use a newer emco with this workspace");
    }
    for (int v = version; v < static_cast<int>(k_migrations.size()); ++v) {
      const Migration& m = k_migrations[static_cast<size_t>(v)];
      impl->db.exec(m.sql);
      if (m.convert) m.convert(impl->db);
      impl->db.exec("PRAGMA user_version=" + std::to_string(v + 1));
    }
    impl->db.exec("COMMIT");
  } catch (const SQLite::Exception& e) {
    fail(ErrorKind::workspace, "cannot open workspace database '" + path + "': " + e.what(),
         "check that the file is an emco workspace and is readable");
  }
  return impl;
}

}  // namespace

std::unique_ptr<Store> Store::open(const Workspace& ws) {
  return std::unique_ptr<Store>(new Store(open_impl(ws.database().string(), false)));
}

std::unique_ptr<Store> Store::open_memory() { return std::unique_ptr<Store>(new Store(open_impl(":memory:", true))); }

void Store::write(const std::function<void()>& body) {
  if (m_impl->transaction_depth > 0) {
    body();
    return;
  }
  // A read statement left pending (a cached SELECT stepped but not reset)
  // pins an old snapshot, and BEGIN IMMEDIATE on an old snapshot fails at
  // once with "database is locked" when another process has written since
  // (SQLITE_BUSY_SNAPSHOT: the busy timeout does not apply). Outside a
  // transaction no caller may still be iterating one (see write()'s contract).
  sqlite3* db = m_impl->db.getHandle();
  for (sqlite3_stmt* s = sqlite3_next_stmt(db, nullptr); s; s = sqlite3_next_stmt(db, s))
    if (sqlite3_stmt_busy(s)) sqlite3_reset(s);
  m_impl->db.exec("BEGIN IMMEDIATE");
  m_impl->transaction_depth = 1;
  try {
    body();
    m_impl->db.exec("COMMIT");
    m_impl->transaction_depth = 0;
  } catch (...) {
    m_impl->transaction_depth = 0;
    try {
      m_impl->db.exec("ROLLBACK");
    } catch (const SQLite::Exception&) {
      // The transaction may already be gone (SQLite rolls back on some errors).
    }
    throw;
  }
}

std::optional<Resource> Store::get(const Key& key) const {
  auto& s = m_impl->stmt(std::string(k_select) + "WHERE key = ?");
  s.bind(1, key.str());
  if (!s.executeStep()) return std::nullopt;
  Resource r = row_to_resource(s);
  auto& c = m_impl->stmt("SELECT name, filename, data FROM contents WHERE resource_id = ? ORDER BY ord");
  c.bind(1, r.id);
  while (c.executeStep()) {
    auto blob = c.getColumn(2);
    r.contents.push_back({c.getColumn(0).getString(), c.getColumn(1).getString(),
                          std::string(static_cast<const char*>(blob.getBlob()), static_cast<size_t>(blob.getBytes()))});
  }
  return r;
}

std::vector<Resource> Store::list(const Kind& k, const Key& parent) const {
  std::vector<Resource> out;
  if (parent.parts.empty()) {
    auto& s = m_impl->stmt(std::string(k_select) + "WHERE kind = ? ORDER BY key");
    s.bind(1, k.id);
    while (s.executeStep()) out.push_back(row_to_resource(s));
  } else {
    auto [lo, hi] = descendant_range(parent);
    auto& s = m_impl->stmt(std::string(k_select) + "WHERE kind = ? AND key >= ? AND key < ? ORDER BY key");
    s.bind(1, k.id);
    s.bind(2, lo);
    s.bind(3, hi);
    while (s.executeStep()) out.push_back(row_to_resource(s));
  }
  return out;
}

std::vector<Resource> Store::list_with_contents(const Kind& k) const {
  std::vector<Resource> out = list(k);
  std::unordered_map<int64_t, Resource*> by_id;
  for (auto& r : out) by_id[r.id] = &r;
  auto& c = m_impl->stmt(
      "SELECT c.resource_id, c.name, c.filename, c.data FROM contents c JOIN resources r ON r.id = c.resource_id "
      "WHERE r.kind = ? ORDER BY c.resource_id, c.ord");
  c.bind(1, k.id);
  while (c.executeStep()) {
    auto it = by_id.find(c.getColumn(0).getInt64());
    if (it == by_id.end()) continue;
    auto blob = c.getColumn(3);
    it->second->contents.push_back(
        {c.getColumn(1).getString(), c.getColumn(2).getString(),
         std::string(static_cast<const char*>(blob.getBlob()), static_cast<size_t>(blob.getBytes()))});
  }
  c.reset();
  return out;
}

std::vector<Resource> Store::children(const Key& key) const {
  std::vector<Resource> out;
  auto& s = m_impl->stmt(std::string(k_select) +
                         "WHERE parent_id = (SELECT id FROM resources WHERE key = ?) ORDER BY key");
  s.bind(1, key.str());
  while (s.executeStep()) out.push_back(row_to_resource(s));
  return out;
}

std::vector<Resource> Store::referrers(const Key& key) const {
  std::vector<Resource> out;
  auto& s = m_impl->stmt(
      "SELECT DISTINCT r.id, r.kind, r.key, r.data, r.state_info FROM refs f JOIN resources r ON r.id = f.from_id "
      "WHERE f.to_id = (SELECT id FROM resources WHERE key = ?) ORDER BY r.key");
  s.bind(1, key.str());
  while (s.executeStep()) out.push_back(row_to_resource(s));
  return out;
}

namespace {

int64_t id_of(Store::Impl& impl, const Key& key) {
  auto& s = impl.stmt("SELECT id FROM resources WHERE key = ?");
  s.bind(1, key.str());
  return s.executeStep() ? s.getColumn(0).getInt64() : 0;
}

std::vector<Content> contents_of(Store::Impl& impl, int64_t id) {
  std::vector<Content> out;
  auto& c = impl.stmt("SELECT name, filename, data FROM contents WHERE resource_id = ? ORDER BY ord");
  c.bind(1, id);
  while (c.executeStep()) {
    auto blob = c.getColumn(2);
    out.push_back({c.getColumn(0).getString(), c.getColumn(1).getString(),
                   std::string(static_cast<const char*>(blob.getBlob()), static_cast<size_t>(blob.getBytes()))});
  }
  return out;
}

}  // namespace

PutOutcome Store::put(Resource r) {
  if (m_impl->transaction_depth == 0) fail(ErrorKind::internal, "Store::put outside a write transaction");
  const Kind& k = *r.kind;
  auto& impl = *m_impl;

  int64_t parent_id = 0;
  if (!k.parent.empty()) {
    const Kind& pk = resource::kind(k.parent);
    Key pkey = r.key.parent_prefix(resource::key_size(pk));
    parent_id = id_of(impl, pkey);
    if (!parent_id)
      fail(ErrorKind::not_found, describe(pk, pkey) + " does not exist",
           "create the " + pk.display + " first (anchor '" + resource::resource_anchor(pk, pkey) + "')");
  }

  // References: each must exist (a label reference: at least one cluster of
  // the provider carries the label).
  std::vector<std::pair<int64_t, std::string>> ref_ids;
  auto spec = nlohmann::json::parse(r.data).value("spec", nlohmann::json::object());
  for (const auto& t : resource::compute_references(k, r.key, spec)) {
    if (t.label_set) {
      auto& s = impl.stmt("SELECT id, key FROM resources WHERE kind = 'clusterLabel' AND key >= ? AND key < ?");
      auto [lo, hi] = descendant_range(t.key);
      const std::string suffix = "/clusterLabel=" + t.label;
      s.bind(1, lo);
      s.bind(2, hi);
      bool any = false;
      while (s.executeStep()) {
        if (!ends_with(s.getColumn(1).getString(), suffix)) continue;
        ref_ids.emplace_back(s.getColumn(0).getInt64(), t.field);
        any = true;
      }
      if (!any)
        fail(ErrorKind::not_found,
             "no cluster of cluster provider '" + t.key.parts[0].second + "' has label '" + t.label + "' (" + t.field + ")",
             "label a cluster first: emco cluster label add " + t.key.parts[0].second + "/<cluster>/" + t.label);
      continue;
    }
    int64_t id = id_of(impl, t.key);
    if (!id)
      fail(ErrorKind::not_found, describe(*t.kind, t.key) + " named in " + t.field + " does not exist",
           "create it first (anchor '" + resource::resource_anchor(*t.kind, t.key) + "')");
    ref_ids.emplace_back(id, t.field);
  }

  int64_t existing = id_of(impl, r.key);
  if (existing) {
    auto& s = impl.stmt("SELECT data FROM resources WHERE id = ?");
    s.bind(1, existing);
    s.executeStep();
    std::string old_data = s.getColumn(0).getString();
    if (old_data == r.data && contents_of(impl, existing) == r.contents) return PutOutcome::unchanged;
    auto& u = impl.stmt("UPDATE resources SET data = ? WHERE id = ?");
    u.bind(1, r.data);
    u.bind(2, existing);
    u.exec();
    auto& dc = impl.stmt("DELETE FROM contents WHERE resource_id = ?");
    dc.bind(1, existing);
    dc.exec();
    auto& dr = impl.stmt("DELETE FROM refs WHERE from_id = ?");
    dr.bind(1, existing);
    dr.exec();
    r.id = existing;
  } else {
    auto& s = impl.stmt(
        "INSERT INTO resources(kind, key, key_json, key_id, parent_id, data, state_info) VALUES(?,?,?,?,?,?,?)");
    s.bind(1, k.id);
    s.bind(2, r.key.str());
    s.bind(3, r.key.json());
    s.bind(4, r.key.key_id());
    if (parent_id) s.bind(5, parent_id);
    else s.bind(5);
    s.bind(6, r.data);
    s.bind(7, r.state_info);
    s.exec();
    r.id = impl.db.getLastInsertRowid();
  }
  int ord = 0;
  for (const auto& c : r.contents) {
    auto& s = impl.stmt("INSERT INTO contents(resource_id, ord, name, filename, data) VALUES(?,?,?,?,?)");
    s.bind(1, r.id);
    s.bind(2, ord++);
    s.bind(3, c.name);
    s.bind(4, c.filename);
    s.bind(5, c.data.data(), static_cast<int>(c.data.size()));
    s.exec();
  }
  for (const auto& [to, field] : ref_ids) {
    auto& s = impl.stmt("INSERT OR IGNORE INTO refs(from_id, to_id, field) VALUES(?,?,?)");
    s.bind(1, r.id);
    s.bind(2, to);
    s.bind(3, field);
    s.exec();
  }
  return existing ? PutOutcome::configured : PutOutcome::created;
}

void Store::remove(const Key& key) {
  if (m_impl->transaction_depth == 0) fail(ErrorKind::internal, "Store::remove outside a write transaction");
  auto r = get(key);
  if (!r) fail(ErrorKind::not_found, "no resource with key '" + key.str() + "'");
  const Kind& k = *r->kind;
  auto kids = children(key);
  if (!kids.empty()) {
    std::vector<std::string> names;
    for (size_t i = 0; i < kids.size() && i < 5; ++i) names.push_back(describe(*kids[i].kind, kids[i].key));
    if (kids.size() > 5) names.push_back("and " + std::to_string(kids.size() - 5) + " more");
    fail(ErrorKind::conflict,
         "cannot delete " + describe(k, key) + ": it still has " + std::to_string(kids.size()) +
             (kids.size() == 1 ? " child: " : " children: ") + join(names, ", "),
         "delete the children first (emco delete -f deletes a file's documents in reverse order)");
  }
  auto refs = referrers(key);
  if (!refs.empty()) {
    std::vector<std::string> names;
    for (size_t i = 0; i < refs.size() && i < 5; ++i) names.push_back(describe(*refs[i].kind, refs[i].key));
    if (refs.size() > 5) names.push_back("and " + std::to_string(refs.size() - 5) + " more");
    fail(ErrorKind::conflict, "cannot delete " + describe(k, key) + ": it is referenced by " + join(names, ", "),
         "delete or change the referring resources first");
  }
  auto& s = m_impl->stmt("DELETE FROM resources WHERE id = ?");
  s.bind(1, r->id);
  s.exec();
}

void Store::set_state_info(const Key& key, const std::string& state_info) {
  auto& s = m_impl->stmt("UPDATE resources SET state_info = ? WHERE key = ?");
  s.bind(1, state_info);
  s.bind(2, key.str());
  if (s.exec() != 1) fail(ErrorKind::not_found, "no resource with key '" + key.str() + "'");
}

std::optional<std::string> Store::meta(const std::string& name) const {
  auto& s = m_impl->stmt("SELECT value FROM meta WHERE name = ?");
  s.bind(1, name);
  if (!s.executeStep()) return std::nullopt;
  return s.getColumn(0).getString();
}

void Store::set_meta(const std::string& name, const std::string& value) {
  auto& s = m_impl->stmt("INSERT INTO meta(name, value) VALUES(?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value");
  s.bind(1, name);
  s.bind(2, value);
  s.exec();
}

std::filesystem::path Store::data_dir() const {
  std::string db = m_impl->db.getFilename();
  if (db.empty() || db == ":memory:")
    return std::filesystem::temp_directory_path() / ("emco-memory-" + std::to_string(::getpid()));
  return std::filesystem::path(db).parent_path();
}

std::string Store::dump() const {
  std::string out;
  auto& s = m_impl->stmt("SELECT id, kind, key, data, state_info FROM resources ORDER BY id");
  while (s.executeStep()) {
    out += "resource " + s.getColumn(0).getString() + " " + s.getColumn(1).getString() + " " + s.getColumn(2).getString() +
           "\n  data " + s.getColumn(3).getString() + "\n  state " + s.getColumn(4).getString() + "\n";
  }
  auto& c = m_impl->stmt("SELECT resource_id, ord, name, filename, length(data), hex(substr(data, 1, 32)) FROM contents ORDER BY resource_id, ord");
  while (c.executeStep()) {
    out += "content " + c.getColumn(0).getString() + " " + c.getColumn(1).getString() + " " + c.getColumn(2).getString() +
           " " + c.getColumn(3).getString() + " " + c.getColumn(4).getString() + " " + c.getColumn(5).getString() + "\n";
  }
  auto& r = m_impl->stmt("SELECT from_id, to_id, field FROM refs ORDER BY from_id, to_id, field");
  while (r.executeStep()) {
    out += "ref " + r.getColumn(0).getString() + " -> " + r.getColumn(1).getString() + " " + r.getColumn(2).getString() + "\n";
  }
  auto& m = m_impl->stmt("SELECT name, value FROM meta ORDER BY name");
  while (m.executeStep()) out += "meta " + m.getColumn(0).getString() + " = " + m.getColumn(1).getString() + "\n";
  return out;
}

}  // namespace emco::store
