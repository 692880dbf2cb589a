#include "core/store/store.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/resource/references.hpp"
#include "core/store/database.hpp"
#include "core/store/plan_codec.hpp"
#include "core/store/status_codec.hpp"
#include "core/store/vault.hpp"
#include "core/util/error.hpp"
#include "core/util/sha256.hpp"
#include "core/util/strings.hpp"

namespace emco::store {

using resource::Key;
using resource::Kind;

namespace {

void plans_from_rows(Database& db);
void status_from_rows(Database& db);

// Forward migrations: entry i moves a database from version i to i+1: its
// SQL, then (when set) a conversion of the data in C++.
struct Migration {
  const char* sql;
  void (*convert)(Database&) = nullptr;
};
constexpr Migration k_migrations[] = {
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
    // 5: distributed delivery (issue 21, core/appcontext/job_rows.hpp): the
    // (app, cluster) jobs of a running event that delivery workers on any
    // machine claim. Only PostgreSQL workspaces use it; the table is the
    // same on both backends so that a version number means one schema.
    {R"sql(
CREATE TABLE sync_jobs(
  id INTEGER PRIMARY KEY,
  ctx TEXT NOT NULL REFERENCES ac_contexts(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  job INTEGER NOT NULL,
  app TEXT NOT NULL,
  cluster TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'ready',
  worker TEXT NOT NULL DEFAULT '',
  lease_until INTEGER NOT NULL DEFAULT 0,
  coordinator TEXT NOT NULL DEFAULT '',
  collected INTEGER NOT NULL DEFAULT 0,
  message TEXT NOT NULL DEFAULT '',
  steps INTEGER NOT NULL DEFAULT 0,
  claims INTEGER NOT NULL DEFAULT 0,
  UNIQUE(ctx, seq, job)
);
CREATE INDEX sync_jobs_claim ON sync_jobs(state, id);
CREATE INDEX sync_jobs_worker ON sync_jobs(worker);
)sql"},
    // 6: resource states clustered by their key (WITHOUT ROWID on SQLite):
    // reading a context's states walks one b-tree instead of an index plus a
    // table lookup per row, which was a sixth of `emco dig update`'s
    // instructions at 30,000 resources (the status summary counts them all).
    {R"sql(
CREATE TABLE ac_resource_status_by_key(
  ctx TEXT NOT NULL,
  app TEXT NOT NULL,
  cluster TEXT NOT NULL,
  resource TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'Pending',
  message TEXT NOT NULL DEFAULT '',
  time TEXT NOT NULL DEFAULT '',
  ready TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(ctx, app, cluster, resource)
) WITHOUT ROWID;
INSERT INTO ac_resource_status_by_key(ctx, app, cluster, resource, status, message, time, ready)
  SELECT ctx, app, cluster, resource, status, message, time, ready FROM ac_resource_status;
DROP TABLE ac_resource_status;
ALTER TABLE ac_resource_status_by_key RENAME TO ac_resource_status;
)sql"},
    // 7: the last `emco cluster check` of each cluster
    // (core/store/cluster_checks.hpp), removed with the cluster.
    {R"sql(
CREATE TABLE cluster_checks(
  resource_id INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
  time TEXT NOT NULL,
  reachable INTEGER NOT NULL,
  error TEXT NOT NULL DEFAULT '',
  version TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(resource_id)
);
)sql"},
    // 8: the child contexts a DIG context owes once it is delivered
    // (core/appcontext/children_rows.hpp), recorded with the operation so
    // that whichever process finishes the delivery makes them. Contexts made
    // before have no row: they owe nothing.
    {R"sql(
CREATE TABLE ac_owed_children(
  ctx TEXT PRIMARY KEY REFERENCES ac_contexts(id) ON DELETE CASCADE,
  replaced TEXT NOT NULL DEFAULT '[]',
  error TEXT NOT NULL DEFAULT ''
);
)sql"},
    // 9: deploy status as one row per (app, cluster) holding its resources'
    // states (core/store/status_codec.hpp) instead of a row per
    // resource keyed by the context, app, cluster and resource names: a third
    // of a GitOps instantiate was writing those rows (10,000 clusters: 400,000
    // rows, ~140 bytes of each the repeated key and commit message).
    // connectivity NULL: only resource states are recorded for the cluster.
    {R"sql(
CREATE TABLE ac_status(
  ctx TEXT NOT NULL,
  app TEXT NOT NULL,
  cluster TEXT NOT NULL,
  connectivity TEXT,
  time TEXT NOT NULL DEFAULT '',
  resources BLOB,
  readback TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(ctx, app, cluster)
) WITHOUT ROWID;
)sql",
     status_from_rows},
};

// Version 3 kept a row per (app, cluster) and per resource: each app's rows
// become its plan, then those tables go.
void plans_from_rows(Database& db) {
  auto& apps = db.statement("SELECT ctx, ord, app FROM ac_apps");
  auto& rows = db.statement(
      "SELECT c.cluster, c.grp, r.hook, r.name, r.hash FROM ac_clusters c LEFT JOIN ac_resources r "
      "ON r.cluster_id = c.id WHERE c.ctx = ? AND c.app = ? ORDER BY c.id, r.ord");
  auto& put_plan = db.statement("INSERT INTO ac_plans(digest, data) VALUES(?, ?) ON CONFLICT DO NOTHING");
  auto& put_content = db.statement("INSERT INTO ac_plan_contents(plan, hash) VALUES(?, ?) ON CONFLICT DO NOTHING");
  auto& set_plan = db.statement("UPDATE ac_apps SET plan = ? WHERE ctx = ? AND ord = ?");
  while (apps.step()) {
    const std::string ctx = apps.str(0);
    const int ord = static_cast<int>(apps.int64(1));
    rows.bind(1, ctx);
    rows.bind(2, apps.str(2));
    PlanWriter plan;
    std::set<std::string> hashes;
    std::string cluster;
    bool first = true;
    while (rows.step()) {
      std::string name = rows.str(0);
      if (first || name != cluster) plan.cluster(name, static_cast<int>(rows.int64(1)));
      first = false;
      cluster = std::move(name);
      if (rows.is_null(3)) continue;  // a cluster without resources
      std::string hash = rows.str(4);
      plan.resource(rows.str(2), rows.str(3), hash);
      hashes.insert(std::move(hash));
    }
    rows.reset();
    std::string data = plan.finish();
    std::string digest = sha256_hex(data);
    put_plan.bind(1, digest);
    put_plan.bind_blob(2, data);
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

// Version 8 kept a row per resource state beside the (app, cluster) rows:
// each cluster's states become its row's encoding (equal keys are adjacent
// in the key order on either backend), then those tables go.
void status_from_rows(Database& db) {
  db.exec(
      "INSERT INTO ac_status(ctx, app, cluster, connectivity, time, readback) "
      "SELECT ctx, app, cluster, connectivity, time, readback FROM ac_cluster_status;");
  auto& rows = db.statement(
      "SELECT ctx, app, cluster, resource, status, message, time, ready FROM ac_resource_status "
      "ORDER BY ctx, app, cluster, resource");
  auto& put = db.statement(
      "INSERT INTO ac_status(ctx, app, cluster, resources) VALUES(?,?,?,?) "
      "ON CONFLICT(ctx, app, cluster) DO UPDATE SET resources = excluded.resources");
  std::string ctx, app, cluster;
  std::vector<std::array<std::string, 5>> states;  // resource, status, message, time, ready
  auto flush = [&] {
    if (states.empty()) return;
    // The server's collation may order names otherwise: the encoding is bytewise.
    std::sort(states.begin(), states.end(), [](const auto& a, const auto& b) { return a[0] < b[0]; });
    std::vector<ResourceStateView> views;
    views.reserve(states.size());
    for (const auto& f : states) views.push_back({f[0], f[1], f[2], f[3], f[4]});
    put.bind(1, ctx);
    put.bind(2, app);
    put.bind(3, cluster);
    put.bind_blob(4, encode_resource_states(views));
    put.exec();
    put.reset();
    states.clear();
  };
  while (rows.step()) {
    if (rows.text(0) != ctx || rows.text(1) != app || rows.text(2) != cluster) {
      flush();
      ctx = rows.text(0);
      app = rows.text(1);
      cluster = rows.text(2);
    }
    states.push_back({rows.str(3), rows.str(4), rows.str(5), rows.str(6), rows.str(7)});
  }
  rows.reset();
  flush();
  db.exec("DROP TABLE ac_resource_status; DROP TABLE ac_cluster_status;");
}

// A key range that selects every descendant of `prefix` ("a=b/..."):
// '/' + 1 == '0', so [prefix/, prefix0) covers exactly the keys below it.
std::pair<std::string, std::string> descendant_range(const Key& prefix) {
  std::string p = prefix.str();
  return {p + "/", p + "0"};
}

Resource row_to_resource(Statement& s) {
  Resource r;
  r.id = s.int64(0);
  r.kind = resource::find_kind(s.str(1));
  r.key = Key::parse(s.str(2));
  r.data = s.str(3);
  r.state_info = s.str(4);
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

// What the running write transaction knows about resources, by key text:
// `resources` holds rows read or written in full (nullopt: known absent),
// `ids` the ids id_of() looked up (0: absent); and `meta` the meta values
// read or written (nullopt: absent). Cleared when the outermost write()
// ends or runs its body again, when a nested one fails (its savepoint
// undid writes this remembers), and by forget_remembered().
struct Store::Known {
  std::unordered_map<std::string, std::optional<Resource>> resources;
  std::unordered_map<std::string, int64_t> ids;
  std::unordered_map<std::string, std::optional<std::string>> meta;
  void clear() {
    resources.clear();
    ids.clear();
    meta.clear();
  }
};

Store::Store(std::unique_ptr<Database> db, std::string location, std::filesystem::path data_dir)
    : m_db(std::move(db)),
      m_location(std::move(location)),
      m_data_dir(std::move(data_dir)),
      m_known(std::make_unique<Known>()) {}
Store::~Store() = default;

int Store::schema_version() { return static_cast<int>(std::size(k_migrations)); }

namespace {

std::unique_ptr<Database> open_migrated(const std::string& location) {
  std::unique_ptr<Database> db;
  try {
    db = open_database(location);
    // A workspace at this emco's version is only read: no write transaction
    // (its locks and commit) at every command's start. Migrations run in one
    // write transaction, which reads the version again, so two processes
    // opening a fresh workspace at once cannot both migrate it.
    if (db->schema_version() == static_cast<int>(std::size(k_migrations))) return db;
    db->transaction([&] {
      const int version = db->schema_version();
      if (version > static_cast<int>(std::size(k_migrations)))
        fail(ErrorKind::workspace,
             "workspace schema version " + std::to_string(version) + " is newer than this emco supports (" +
                 std::to_string(std::size(k_migrations)) + ")",
             "use a newer emco with this workspace");
      for (int v = version; v < static_cast<int>(std::size(k_migrations)); ++v) {
        const Migration& m = k_migrations[static_cast<size_t>(v)];
        db->exec(m.sql);
        if (m.convert) m.convert(*db);
        db->set_schema_version(v + 1);
      }
    });
  } catch (const DatabaseError& e) {
    if (is_server_location(location))
      fail(ErrorKind::workspace, "cannot open workspace database '" + redacted(location) + "': " + e.what(),
           "check that the server is running and reachable, and the credentials libpq finds (PGUSER, PGPASSWORD, "
           "~/.pgpass, PGSERVICE, PGSSLMODE)");
    fail(ErrorKind::workspace, "cannot open workspace database '" + location + "': " + e.what(),
         e.storage() ? "emco needs to read and write the workspace: check the permissions of the directory and its "
                       "files, a read-only mount, and free space"
                     : "check that the file is an emco workspace");
  }
  return db;
}

}  // namespace

std::unique_ptr<Store> Store::open(const Workspace& ws) { return open_location(ws.location(), ws.dir()); }

std::unique_ptr<Store> Store::open_location(const std::string& location, const std::filesystem::path& data_dir) {
  return std::unique_ptr<Store>(new Store(open_migrated(location), location, data_dir));
}

std::unique_ptr<Store> Store::open_memory() {
  return std::unique_ptr<Store>(
      new Store(open_migrated(":memory:"), ":memory:",
                std::filesystem::temp_directory_path() / ("emco-memory-" + std::to_string(::getpid()))));
}

void Store::write(const std::function<void()>& body) {
  const bool outermost = m_write_depth == 0;
  struct Depth {
    Store& st;
    bool outermost;
    ~Depth() {
      --st.m_write_depth;
      if (outermost) st.m_known->clear();
    }
  };
  ++m_write_depth;
  Depth depth{*this, outermost};
  m_db->transaction([&] {
    if (outermost) m_known->clear();  // a body run again starts afresh
    try {
      body();
    } catch (...) {
      m_known->clear();  // the savepoint (or transaction) undid what it knew
      throw;
    }
  });
}

uint64_t Store::round_trips() const { return m_db->round_trips(); }

void Store::leave_open_at_exit() {
  if (!m_db->close_frees_only()) return;
  // Reachable until the exit (no leak to LeakSanitizer), never destroyed.
  static auto& kept = *new std::vector<std::unique_ptr<Database>>;
  kept.push_back(std::move(m_db));
}

std::optional<Resource> Store::get(const Key& key) const {
  const bool remember = m_write_depth > 0;
  if (remember)
    if (auto it = m_known->resources.find(key.str()); it != m_known->resources.end()) return it->second;
  auto& s = m_db->statement(std::string(k_select) + "WHERE key = ?");
  s.bind(1, key.str());
  std::optional<Resource> out;
  if (s.step()) {
    Resource r = row_to_resource(s);
    auto& c = m_db->statement("SELECT name, filename, data FROM contents WHERE resource_id = ? ORDER BY ord");
    c.bind(1, r.id);
    while (c.step()) r.contents.push_back({c.str(0), c.str(1), std::string(c.blob(2))});
    out = opened(std::move(r));
  } else {
    s.reset();
  }
  if (remember) m_known->resources[key.str()] = out;
  return out;
}

void Store::prefetch(const std::vector<Key>& keys) const {
  if (m_write_depth == 0) return;
  std::vector<std::string> wanted;
  std::set<std::string> seen;
  for (const auto& k : keys) {
    std::string text = k.str();
    if (!m_known->resources.count(text) && seen.insert(text).second) wanted.push_back(std::move(text));
  }
  // Fixed-size chunks (the last padded with its own first key), so that the
  // database prepares one statement for them all.
  constexpr size_t k_chunk = 100;
  std::string in = "?";
  for (size_t i = 1; i < k_chunk; ++i) in += ",?";
  auto& s = m_db->statement(std::string(k_select) + "WHERE key IN (" + in + ")");
  auto& c = m_db->statement("SELECT c.resource_id, c.name, c.filename, c.data FROM contents c WHERE c.resource_id IN "
                            "(SELECT id FROM resources WHERE key IN (" + in + ")) ORDER BY c.resource_id, c.ord");
  for (size_t from = 0; from < wanted.size(); from += k_chunk) {
    std::unordered_map<int64_t, Resource> found;
    for (size_t i = 0; i < k_chunk; ++i) {
      const std::string& key = wanted[from + i < wanted.size() ? from + i : from];
      s.bind(static_cast<int>(i + 1), key);
      c.bind(static_cast<int>(i + 1), key);
    }
    while (s.step()) {
      Resource r = row_to_resource(s);
      found.emplace(r.id, std::move(r));
    }
    s.reset();
    if (!found.empty())
      while (c.step())
        if (auto it = found.find(c.int64(0)); it != found.end())
          it->second.contents.push_back({c.str(1), c.str(2), std::string(c.blob(3))});
    c.reset();
    for (size_t i = from; i < wanted.size() && i < from + k_chunk; ++i) m_known->resources[wanted[i]] = std::nullopt;
    for (auto& [id, r] : found) {
      std::string text = r.key.str();  // before r moves (the right side of = is evaluated first)
      m_known->resources[text] = opened(std::move(r));
    }
  }
}

std::vector<Resource> Store::list(const Kind& k, const Key& parent) const {
  std::vector<Resource> out;
  if (parent.parts.empty()) {
    auto& s = m_db->statement(std::string(k_select) + "WHERE kind = ? ORDER BY key");
    s.bind(1, k.id);
    while (s.step()) out.push_back(opened(row_to_resource(s)));
  } else {
    auto [lo, hi] = descendant_range(parent);
    auto& s = m_db->statement(std::string(k_select) + "WHERE kind = ? AND key >= ? AND key < ? ORDER BY key");
    s.bind(1, k.id);
    s.bind(2, lo);
    s.bind(3, hi);
    while (s.step()) out.push_back(opened(row_to_resource(s)));
  }
  return out;
}

std::vector<Resource> Store::list_with_contents(const Kind& k) const {
  std::vector<Resource> out = list(k);
  std::unordered_map<int64_t, Resource*> by_id;
  for (auto& r : out) by_id[r.id] = &r;
  auto& c = m_db->statement(
      "SELECT c.resource_id, c.name, c.filename, c.data FROM contents c JOIN resources r ON r.id = c.resource_id "
      "WHERE r.kind = ? ORDER BY c.resource_id, c.ord");
  c.bind(1, k.id);
  while (c.step()) {
    auto it = by_id.find(c.int64(0));
    if (it == by_id.end()) continue;
    it->second->contents.push_back({c.str(1), c.str(2), std::string(c.blob(3))});
  }
  c.reset();
  if (k.secret_file)
    for (auto& r : out) r = opened(std::move(r));
  return out;
}

std::vector<Resource> Store::children(const Key& key) const {
  std::vector<Resource> out;
  auto& s = m_db->statement(std::string(k_select) +
                         "WHERE parent_id = (SELECT id FROM resources WHERE key = ?) ORDER BY key");
  s.bind(1, key.str());
  while (s.step()) out.push_back(opened(row_to_resource(s)));
  return out;
}

std::vector<Resource> Store::referrers(const Key& key) const {
  std::vector<Resource> out;
  auto& s = m_db->statement(
      "SELECT DISTINCT r.id, r.kind, r.key, r.data, r.state_info FROM refs f JOIN resources r ON r.id = f.from_id "
      "WHERE f.to_id = (SELECT id FROM resources WHERE key = ?) ORDER BY r.key");
  s.bind(1, key.str());
  while (s.step()) out.push_back(opened(row_to_resource(s)));
  return out;
}

namespace {

int64_t id_of(Database& db, const Key& key) {
  auto& s = db.statement("SELECT id FROM resources WHERE key = ?");
  s.bind(1, key.str());
  const int64_t id = s.step() ? s.int64(0) : 0;
  s.reset();
  return id;
}

std::vector<Content> contents_of(Database& db, int64_t id) {
  std::vector<Content> out;
  auto& c = db.statement("SELECT name, filename, data FROM contents WHERE resource_id = ? ORDER BY ord");
  c.bind(1, id);
  while (c.step()) {
    out.push_back({c.str(0), c.str(1), std::string(c.blob(2))});
  }
  return out;
}

}  // namespace

PutOutcome Store::put(Resource r) {
  if (!m_db->in_transaction()) fail(ErrorKind::internal, "Store::put outside a write transaction");
  const Kind& k = *r.kind;
  auto& db = *m_db;
  const bool remember = m_write_depth > 0;
  auto id_known = [&](const Key& key) -> int64_t {
    if (!remember) return id_of(db, key);
    const std::string text = key.str();
    if (auto it = m_known->resources.find(text); it != m_known->resources.end()) return it->second ? it->second->id : 0;
    if (auto it = m_known->ids.find(text); it != m_known->ids.end()) return it->second;
    const int64_t id = id_of(db, key);
    m_known->ids[text] = id;
    return id;
  };

  int64_t parent_id = 0;
  if (!k.parent.empty()) {
    const Kind& pk = resource::kind(k.parent);
    Key pkey = r.key.parent_prefix(resource::key_size(pk));
    parent_id = id_known(pkey);
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
      auto& s = db.statement("SELECT id, key FROM resources WHERE kind = 'clusterLabel' AND key >= ? AND key < ?");
      auto [lo, hi] = descendant_range(t.key);
      const std::string suffix = "/clusterLabel=" + t.label;
      s.bind(1, lo);
      s.bind(2, hi);
      bool any = false;
      while (s.step()) {
        if (!ends_with(s.str(1), suffix)) continue;
        ref_ids.emplace_back(s.int64(0), t.field);
        any = true;
      }
      if (!any)
        fail(ErrorKind::not_found,
             "no cluster of cluster provider '" + t.key.parts[0].second + "' has label '" + t.label + "' (" + t.field + ")",
             "label a cluster first: emco cluster label add " + t.key.parts[0].second + "/<cluster>/" + t.label);
      continue;
    }
    int64_t id = id_known(t.key);
    if (!id && t.soft) continue;  // recorded only when it exists (the batch warns)
    if (!id)
      fail(ErrorKind::not_found, describe(*t.kind, t.key) + " named in " + t.field + " does not exist",
           "create it first (anchor '" + resource::resource_anchor(*t.kind, t.key) + "')");
    ref_ids.emplace_back(id, t.field);
  }

  const std::string key_text = r.key.str();
  std::optional<Resource>* before = nullptr;  // what this transaction knows of it (secrets opened)
  if (remember)
    if (auto it = m_known->resources.find(key_text); it != m_known->resources.end()) before = &it->second;
  const int64_t existing = before ? (*before ? (*before)->id : 0) : id_known(r.key);
  // Resources are compared, and remembered, as plaintext (sealing the same
  // secret twice gives different text); the secret parts are sealed for
  // the rows only.
  std::string plain_data;
  std::vector<Content> plain_contents;
  auto seal_parts = [&] {
    if (remember) {
      plain_data = r.data;
      plain_contents = r.contents;
    }
    const std::string what = describe(k, r.key);
    if (k.secret_file)
      for (size_t i = 0; i < r.contents.size(); ++i)
        r.contents[i].data = seal_secret(r.contents[i].data, content_identity(r.key, i, r.contents[i].name),
                                         "the " + (k.file_what.empty() ? std::string("file") : k.file_what) + " of " + what);
    if (k.secret_spec && encrypted()) {
      auto data = nlohmann::json::parse(r.data);
      auto* kv = data.contains("spec") && data["spec"].is_object() && data["spec"].contains("kv") ? &data["spec"]["kv"] : nullptr;
      if (kv && kv->is_array()) {
        for (size_t i = 0; i < kv->size(); ++i)
          if ((*kv)[i].is_object())
            for (auto it = (*kv)[i].begin(); it != (*kv)[i].end(); ++it)
              if (it.value().is_string() && !is_sealed(it.value().get_ref<const std::string&>()))
                it.value() = seal_secret(it.value().get_ref<const std::string&>(), kv_identity(r.key, i, it.key()),
                                         "kv '" + it.key() + "' of " + what);
        r.data = data.dump();
      }
    }
  };
  if (existing) {
    if (before) {
      if ((*before)->data == r.data && (*before)->contents == r.contents) return PutOutcome::unchanged;
    } else {
      auto& s = db.statement("SELECT data FROM resources WHERE id = ?");
      s.bind(1, existing);
      s.step();
      Resource old;
      old.kind = &k;
      old.key = r.key;
      old.data = s.str(0);
      s.reset();
      old.contents = contents_of(db, existing);
      old = opened(std::move(old));
      if (old.data == r.data && old.contents == r.contents) return PutOutcome::unchanged;
    }
    seal_parts();
    // The writes of a put wait for nothing: on a server they go in one
    // pipeline with the next puts' (exec_later()).
    auto& u = db.statement("UPDATE resources SET data = ? WHERE id = ?");
    u.bind(1, r.data);
    u.bind(2, existing);
    u.exec_later();
    auto& dc = db.statement("DELETE FROM contents WHERE resource_id = ?");
    dc.bind(1, existing);
    dc.exec_later();
    auto& dr = db.statement("DELETE FROM refs WHERE from_id = ?");
    dr.bind(1, existing);
    dr.exec_later();
    r.id = existing;
  } else {
    seal_parts();
    r.id = db.new_id("resources", "id");
    auto& s = db.statement(
        "INSERT INTO resources(id, kind, key, key_json, key_id, parent_id, data, state_info) VALUES(?,?,?,?,?,?,?,?)");
    s.bind(1, r.id);
    s.bind(2, k.id);
    s.bind(3, r.key.str());
    s.bind(4, r.key.json());
    s.bind(5, r.key.key_id());
    if (parent_id) s.bind(6, parent_id);
    else s.bind_null(6);
    s.bind(7, r.data);
    s.bind(8, r.state_info);
    s.exec_later();
  }
  int ord = 0;
  for (const auto& c : r.contents) {
    auto& s = db.statement("INSERT INTO contents(resource_id, ord, name, filename, data) VALUES(?,?,?,?,?)");
    s.bind(1, r.id);
    s.bind(2, ord++);
    s.bind(3, c.name);
    s.bind(4, c.filename);
    s.bind_blob(5, c.data);
    s.exec_later();
  }
  for (const auto& [to, field] : ref_ids) {
    auto& s = db.statement("INSERT INTO refs(from_id, to_id, field) VALUES(?,?,?) ON CONFLICT DO NOTHING");
    s.bind(1, r.id);
    s.bind(2, to);
    s.bind(3, field);
    s.exec_later();
  }
  if (remember) {
    r.data = std::move(plain_data);
    r.contents = std::move(plain_contents);
    if (!existing) {
      m_known->resources[key_text] = r;
    } else if (before) {
      (*before)->data = r.data;
      (*before)->contents = r.contents;
    } else {
      m_known->resources.erase(key_text);  // its state_info was not read
      m_known->ids[key_text] = existing;
    }
  }
  return existing ? PutOutcome::configured : PutOutcome::created;
}

void Store::remove(const Key& key) {
  if (!m_db->in_transaction()) fail(ErrorKind::internal, "Store::remove outside a write transaction");
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
  auto& s = m_db->statement("DELETE FROM resources WHERE id = ?");
  s.bind(1, r->id);
  s.exec();
  if (m_write_depth > 0) {
    m_known->resources[key.str()] = std::nullopt;
    m_known->ids.erase(key.str());
  }
}

void Store::set_state_info(const Key& key, const std::string& state_info) {
  auto& s = m_db->statement("UPDATE resources SET state_info = ? WHERE key = ?");
  s.bind(1, state_info);
  s.bind(2, key.str());
  if (s.exec() != 1) fail(ErrorKind::not_found, "no resource with key '" + key.str() + "'");
  if (m_write_depth > 0)
    if (auto it = m_known->resources.find(key.str()); it != m_known->resources.end() && it->second)
      it->second->state_info = state_info;
}

void Store::forget_remembered() { m_known->clear(); }

std::optional<std::string> Store::meta(const std::string& name) const {
  const bool remember = m_write_depth > 0;
  if (remember)
    if (auto it = m_known->meta.find(name); it != m_known->meta.end()) return it->second;
  auto& s = m_db->statement("SELECT value FROM meta WHERE name = ?");
  s.bind(1, name);
  std::optional<std::string> out;
  if (s.step()) out = s.str(0);
  else s.reset();
  if (remember) m_known->meta[name] = out;
  return out;
}

void Store::set_meta(const std::string& name, const std::string& value) {
  auto& s = m_db->statement("INSERT INTO meta(name, value) VALUES(?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value");
  s.bind(1, name);
  s.bind(2, value);
  s.exec();
  if (m_write_depth > 0) m_known->meta[name] = value;
}

std::filesystem::path Store::data_dir() const { return m_data_dir; }

namespace {

const char* k_vault_meta = "vault.key";

std::string key_hint(const std::string& id) {
  return "set EMCO_KEY_FILE to the workspace's key file (or EMCO_KEY to the key), the key with id " + id;
}

}  // namespace

bool Store::encrypted() const { return meta(k_vault_meta).has_value(); }

const VaultKey* Store::key() const {
  if (!m_key_read) {
    m_key_read = true;
    if (auto k = key_from_environment()) m_key = std::make_unique<VaultKey>(std::move(*k));
  }
  return m_key.get();
}

void Store::use_key(const VaultKey& key) {
  m_key = std::make_unique<VaultKey>(key);
  m_key_read = true;
}

std::string Store::seal_secret(std::string_view value, std::string_view identity, const std::string& what) const {
  auto id = meta(k_vault_meta);
  if (!id) return std::string(value);
  const VaultKey* k = key();
  if (!k)
    fail(ErrorKind::workspace, "cannot store " + what + ": the workspace is encrypted and no key is set", key_hint(*id));
  if (k->id != *id)
    fail(ErrorKind::workspace,
         "cannot store " + what + ": the key given (id " + k->id + ") is not the workspace's key (id " + *id + ")",
         key_hint(*id));
  return seal(*k, value, identity);
}

std::optional<std::string> Store::open_secret(std::string_view value, std::string_view identity) const {
  if (!is_sealed(value)) return std::string(value);
  const VaultKey* k = key();
  if (!k) return std::nullopt;
  return unseal(*k, value, identity);
}

void Store::fail_sealed(std::string_view value, const std::string& what) const {
  const std::string sealed_with = sealed_key_id(value);
  const VaultKey* k = key();
  if (!k)
    fail(ErrorKind::workspace, "cannot read " + what + ": it is encrypted and no workspace key is set",
         key_hint(sealed_with));
  if (k->id != sealed_with)
    fail(ErrorKind::workspace,
         "cannot read " + what + ": it was encrypted with key " + sealed_with + ", not with the key given (" + k->id + ")",
         key_hint(sealed_with));
  fail(ErrorKind::workspace,
       "cannot read " + what + ": its encrypted value does not open with key " + k->id +
           " (it was changed in the database, or copied from another row)",
       "store it again (apply the resource again, or instantiate the logical cloud or certificate again), or restore "
       "the database from a backup");
}

std::string Store::content_identity(const Key& key, size_t ord, const std::string& name) {
  return std::string("content", 8) + key.str() + '\0' + std::to_string(ord) + '\0' + name;
}

std::string Store::kv_identity(const Key& key, size_t index, const std::string& field) {
  return std::string("kv", 3) + key.str() + '\0' + std::to_string(index) + '\0' + field;
}

std::string Store::object_identity(std::string_view hash) { return std::string("object", 7) + std::string(hash); }

Resource Store::opened(Resource r) const {
  if (!r.kind) return r;
  if (r.kind->secret_file)
    for (size_t i = 0; i < r.contents.size(); ++i) {
      Content& c = r.contents[i];
      if (!is_sealed(c.data)) continue;
      if (auto plain = open_secret(c.data, content_identity(r.key, i, c.name))) c.data = std::move(*plain);
      else c.sealed = true;
    }
  if (r.kind->secret_spec && r.data.find("emco-sealed:") != std::string::npos) {
    auto data = nlohmann::json::parse(r.data);
    auto& kv = data["spec"]["kv"];
    for (size_t i = 0; kv.is_array() && i < kv.size(); ++i)
      for (auto it = kv[i].begin(); kv[i].is_object() && it != kv[i].end(); ++it)
        if (it.value().is_string())
          if (auto plain = open_secret(it.value().get_ref<const std::string&>(), kv_identity(r.key, i, it.key())))
            it.value() = std::move(*plain);
    r.data = data.dump();
  }
  return r;
}

std::string Store::dump() const {
  std::string out;
  auto& s = m_db->statement("SELECT id, kind, key, data, state_info FROM resources ORDER BY id");
  while (s.step()) {
    out += "resource " + s.str(0) + " " + s.str(1) + " " + s.str(2) +
           "\n  data " + s.str(3) + "\n  state " + s.str(4) + "\n";
  }
  // A content's size and its first 32 bytes in hex stand for its data.
  auto& c = m_db->statement("SELECT resource_id, ord, name, filename, data FROM contents ORDER BY resource_id, ord");
  while (c.step()) {
    const std::string_view data = c.blob(4);
    std::string hex;
    for (unsigned char b : data.substr(0, 32)) {
      hex += "0123456789ABCDEF"[b >> 4];
      hex += "0123456789ABCDEF"[b & 15];
    }
    out += "content " + c.str(0) + " " + c.str(1) + " " + c.str(2) + " " + c.str(3) + " " +
           std::to_string(data.size()) + " " + hex + "\n";
  }
  auto& r = m_db->statement("SELECT from_id, to_id, field FROM refs ORDER BY from_id, to_id, field");
  while (r.step()) {
    out += "ref " + r.str(0) + " -> " + r.str(1) + " " + r.str(2) + "\n";
  }
  auto& m = m_db->statement("SELECT name, value FROM meta ORDER BY name");
  while (m.step()) out += "meta " + m.str(0) + " = " + m.str(1) + "\n";
  return out;
}

std::optional<Error> storage_failure(const std::exception& e) {
  const auto* db = dynamic_cast<const DatabaseError*>(&e);
  if (!db || !db->storage()) return std::nullopt;
  return Error(ErrorKind::workspace, std::string("the workspace's storage failed: ") + e.what(),
               "free space or fix the file system, then run 'emco sync' to finish interrupted work (every change "
               "is one transaction: nothing was half-written)");
}

}  // namespace emco::store
