#include "core/appcontext/appcontext.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include "core/store/store_impl.hpp"
#include "core/util/error.hpp"

namespace emco::appcontext {

using nlohmann::json;

const std::vector<std::string>& hook_group_order() {
  static const std::vector<std::string> order = {"crd-install", "pre-install",  "post-install", "pre-delete",
                                                 "post-delete", "pre-upgrade", "post-upgrade", "pre-rollback",
                                                 "post-rollback"};
  return order;
}

std::string sha256_hex(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1)
    fail(ErrorKind::internal, "sha256 digest failed");
  static const char* hex = "0123456789abcdef";
  std::string out(len * 2, '0');
  for (unsigned int i = 0; i < len; ++i) {
    out[2 * i] = hex[md[i] >> 4];
    out[2 * i + 1] = hex[md[i] & 15];
  }
  return out;
}

ContentRef make_content(std::string text) {
  auto c = std::make_shared<Content>();
  c->hash = sha256_hex(text);
  c->text = std::move(text);
  return c;
}

Resource* Cluster::find(const std::string& resource_name) {
  for (auto& r : resources)
    if (r.name == resource_name) return &r;
  for (auto& g : hooks)
    for (auto& r : g.resources)
      if (r.name == resource_name) return &r;
  return nullptr;
}

const Resource* Cluster::find(const std::string& resource_name) const {
  return const_cast<Cluster*>(this)->find(resource_name);
}

void Cluster::put(Resource r) {
  for (auto& existing : resources) {
    if (existing.name == r.name) {
      existing.content = std::move(r.content);
      return;
    }
  }
  resources.push_back(std::move(r));
}

Cluster* App::find_cluster(const std::string& cluster) {
  for (auto& c : clusters)
    if (c.name == cluster) return &c;
  return nullptr;
}

const Cluster* App::find_cluster(const std::string& cluster) const {
  return const_cast<App*>(this)->find_cluster(cluster);
}

App* AppContext::find_app(const std::string& app) {
  for (auto& a : apps)
    if (a.name == app) return &a;
  return nullptr;
}

const App* AppContext::find_app(const std::string& app) const { return const_cast<AppContext*>(this)->find_app(app); }

ContentRef AppContext::intern(std::string text) {
  std::string hash = sha256_hex(text);
  auto it = m_interned.find(hash);
  if (it != m_interned.end()) {
    if (auto live = it->second.lock()) return live;
  }
  auto c = std::make_shared<Content>();
  c->hash = hash;
  c->text = std::move(text);
  m_interned[std::move(hash)] = c;
  return c;
}

size_t AppContext::resource_count() const {
  size_t n = 0;
  for (const auto& a : apps)
    for (const auto& c : a.clusters) {
      n += c.resources.size();
      for (const auto& g : c.hooks) n += g.resources.size();
    }
  return n;
}

// ---- persistence ----------------------------------------------------------

namespace {

std::string blob_text(const SQLite::Column& c) {
  return std::string(static_cast<const char*>(c.getBlob()), static_cast<size_t>(c.getBytes()));
}

json meta_json(const std::map<std::string, std::string>& meta) {
  json j = json::object();
  for (const auto& [k, v] : meta) j[k] = v;
  return j;
}

std::map<std::string, std::string> meta_from(const std::string& text) {
  std::map<std::string, std::string> out;
  json j = json::parse(text);
  for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
  return out;
}

std::vector<std::string> strings_from(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& v : json::parse(text)) out.push_back(v.get<std::string>());
  return out;
}

bool exists_impl(store::Store::Impl& impl, const std::string& id) {
  auto& s = impl.stmt("SELECT 1 FROM ac_contexts WHERE id = ?");
  s.bind(1, id);
  return s.executeStep();
}

[[noreturn]] void no_context(const std::string& id) {
  fail(ErrorKind::not_found, "appcontext '" + id + "' not found");
}

void add_child_impl(store::Store::Impl& impl, const std::string& parent, const std::string& child) {
  std::string children;
  {
    auto& s = impl.stmt("SELECT children FROM ac_contexts WHERE id = ?");
    s.bind(1, parent);
    if (!s.executeStep()) no_context(parent);
    children = s.getColumn(0).getString();
  }
  json j = json::parse(children);
  for (const auto& v : j)
    if (v == child) return;
  j.push_back(child);
  auto& u = impl.stmt("UPDATE ac_contexts SET children = ? WHERE id = ?");
  u.bind(1, j.dump());
  u.bind(2, parent);
  u.exec();
}

}  // namespace

void save(store::Store& st, const AppContext& ctx) {
  auto& impl = st.impl();
  st.write([&] {
    if (exists_impl(impl, ctx.id)) fail(ErrorKind::conflict, "appcontext '" + ctx.id + "' already exists");
    if (!ctx.parent.empty() && !exists_impl(impl, ctx.parent))
      fail(ErrorKind::not_found, "parent appcontext '" + ctx.parent + "' of '" + ctx.id + "' not found");
    int64_t seq = impl.db.execAndGet("SELECT COALESCE(MAX(seq), 0) + 1 FROM ac_contexts").getInt64();
    {
      auto& s = impl.stmt(
          "INSERT INTO ac_contexts(id, owner_kind, owner_key, meta, status, desired, parent_id, children, status_ctx, "
          "stop_flag, pending_terminate, revision, created, seq) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
      s.bind(1, ctx.id);
      s.bind(2, ctx.owner.kind);
      s.bind(3, ctx.owner.key.str());
      s.bind(4, meta_json(ctx.meta).dump());
      s.bind(5, ctx.status);
      s.bind(6, ctx.desired);
      if (ctx.parent.empty())
        s.bind(7);
      else
        s.bind(7, ctx.parent);
      s.bind(8, json(ctx.children).dump());
      s.bind(9, ctx.status_context);
      s.bind(10, ctx.stop ? 1 : 0);
      s.bind(11, ctx.pending_terminate ? 1 : 0);
      s.bind(12, static_cast<int64_t>(ctx.revision));
      s.bind(13, ctx.created);
      s.bind(14, seq);
      s.exec();
    }
    if (!ctx.parent.empty()) add_child_impl(impl, ctx.parent, ctx.id);

    std::set<std::string> written;  // content hashes already inserted by this save
    auto put_content = [&](const Content& c) {
      if (!written.insert(c.hash).second) return;
      auto& s = impl.stmt("INSERT OR IGNORE INTO ac_contents(hash, data) VALUES(?, ?)");
      s.bind(1, c.hash);
      s.bind(2, c.text.data(), static_cast<int>(c.text.size()));
      s.exec();
    };
    int ord = 0;
    for (const auto& app : ctx.apps) {
      json deps = json::array();
      for (const auto& d : app.dependencies) deps.push_back({{"app", d.app}, {"opStatus", d.op_status}, {"wait", d.wait}});
      auto& sa = impl.stmt("INSERT INTO ac_apps(ctx, ord, app, deps) VALUES(?,?,?,?)");
      sa.bind(1, ctx.id);
      sa.bind(2, ord++);
      sa.bind(3, app.name);
      sa.bind(4, deps.dump());
      sa.exec();
      for (const auto& cl : app.clusters) {
        auto& sc = impl.stmt("INSERT INTO ac_clusters(ctx, app, cluster, grp) VALUES(?,?,?,?)");
        sc.bind(1, ctx.id);
        sc.bind(2, app.name);
        sc.bind(3, cl.name);
        sc.bind(4, cl.group);
        sc.exec();
        int64_t cluster_id = impl.db.getLastInsertRowid();
        int rord = 0;
        auto put_resource = [&](const std::string& hook, const Resource& r) {
          put_content(*r.content);
          auto& sr = impl.stmt("INSERT INTO ac_resources(cluster_id, ord, hook, name, hash) VALUES(?,?,?,?,?)");
          sr.bind(1, cluster_id);
          sr.bind(2, rord++);
          sr.bind(3, hook);
          sr.bind(4, r.name);
          sr.bind(5, r.content->hash);
          sr.exec();
        };
        for (const auto& r : cl.resources) put_resource("", r);
        for (const auto& g : cl.hooks)
          for (const auto& r : g.resources) put_resource(g.event, r);
      }
    }
  });
}

bool exists(store::Store& st, const std::string& id) { return exists_impl(st.impl(), id); }

Header header(store::Store& st, const std::string& id) {
  auto& s = st.impl().stmt(
      "SELECT owner_kind, owner_key, meta, status, desired, COALESCE(parent_id, ''), children, status_ctx, stop_flag, "
      "pending_terminate, revision, created FROM ac_contexts WHERE id = ?");
  s.bind(1, id);
  if (!s.executeStep()) no_context(id);
  Header h;
  h.id = id;
  h.owner_kind = s.getColumn(0).getString();
  h.owner_key = s.getColumn(1).getString();
  h.meta = meta_from(s.getColumn(2).getString());
  h.status = s.getColumn(3).getString();
  h.desired = s.getColumn(4).getString();
  h.parent = s.getColumn(5).getString();
  h.children = strings_from(s.getColumn(6).getString());
  h.status_context = s.getColumn(7).getString();
  h.stop = s.getColumn(8).getInt() != 0;
  h.pending_terminate = s.getColumn(9).getInt() != 0;
  h.revision = s.getColumn(10).getInt64();
  h.created = s.getColumn(11).getString();
  s.reset();
  return h;
}

AppContext load(store::Store& st, const std::string& id) {
  auto& impl = st.impl();
  Header h = header(st, id);
  AppContext ctx;
  ctx.id = h.id;
  ctx.owner.kind = h.owner_kind;
  ctx.owner.key = resource::Key::parse(h.owner_key);
  ctx.meta = std::move(h.meta);
  ctx.status = h.status;
  ctx.desired = h.desired;
  ctx.parent = h.parent;
  ctx.children = std::move(h.children);
  ctx.status_context = h.status_context;
  ctx.stop = h.stop;
  ctx.pending_terminate = h.pending_terminate;
  ctx.revision = h.revision;
  ctx.created = h.created;

  {
    auto& s = impl.stmt("SELECT app, deps FROM ac_apps WHERE ctx = ? ORDER BY ord");
    s.bind(1, id);
    while (s.executeStep()) {
      App a;
      a.name = s.getColumn(0).getString();
      for (const auto& d : json::parse(s.getColumn(1).getString()))
        a.dependencies.push_back({d.at("app").get<std::string>(), d.at("opStatus").get<std::string>(),
                                  d.at("wait").get<int>()});
      ctx.apps.push_back(std::move(a));
    }
  }
  std::unordered_map<std::string, ContentRef> contents;
  {
    // Every distinct content of the context once.
    auto& s = impl.stmt(
        "SELECT hash, data FROM ac_contents WHERE hash IN (SELECT r.hash FROM ac_resources r JOIN ac_clusters c ON "
        "c.id = r.cluster_id WHERE c.ctx = ?)");
    s.bind(1, id);
    while (s.executeStep()) {
      auto c = std::make_shared<Content>();
      c->hash = s.getColumn(0).getString();
      c->text = blob_text(s.getColumn(1));
      contents.emplace(c->hash, c);
    }
  }
  std::unordered_map<std::string, App*> by_name;
  for (auto& a : ctx.apps) by_name[a.name] = &a;
  {
    auto& s = impl.stmt(
        "SELECT c.app, c.cluster, c.grp, r.hook, r.name, r.hash FROM ac_clusters c LEFT JOIN ac_resources r ON "
        "r.cluster_id = c.id WHERE c.ctx = ? ORDER BY c.id, r.ord");
    s.bind(1, id);
    Cluster* current = nullptr;
    std::string current_app;
    while (s.executeStep()) {
      std::string app = s.getColumn(0).getString();
      std::string cluster = s.getColumn(1).getString();
      if (!current || current_app != app || current->name != cluster) {
        auto it = by_name.find(app);
        if (it == by_name.end()) fail(ErrorKind::internal, "appcontext '" + id + "' has a cluster of unknown app '" + app + "'");
        it->second->clusters.push_back(Cluster{cluster, s.getColumn(2).getInt(), {}, {}});
        current = &it->second->clusters.back();
        current_app = app;
      }
      if (s.getColumn(4).isNull()) continue;  // a cluster without resources
      std::string hook = s.getColumn(3).getString();
      std::string hash = s.getColumn(5).getString();
      auto ct = contents.find(hash);
      if (ct == contents.end()) fail(ErrorKind::internal, "appcontext '" + id + "' lacks content " + hash);
      Resource r{s.getColumn(4).getString(), ct->second};
      if (hook.empty()) {
        current->resources.push_back(std::move(r));
      } else {
        if (current->hooks.empty() || current->hooks.back().event != hook) current->hooks.push_back({hook, {}});
        current->hooks.back().resources.push_back(std::move(r));
      }
    }
  }
  return ctx;
}

void remove(store::Store& st, const std::string& id) {
  auto& impl = st.impl();
  st.write([&] {
    Header h = header(st, id);
    // Children first: terminate/delete of a parent never leaves orphans.
    std::vector<std::string> kids;
    {
      auto& s = impl.stmt("SELECT id FROM ac_contexts WHERE parent_id = ? ORDER BY seq");
      s.bind(1, id);
      while (s.executeStep()) kids.push_back(s.getColumn(0).getString());
    }
    for (const auto& k : kids) remove(st, k);
    for (const char* sql : {"DELETE FROM ac_resource_status WHERE ctx = ?", "DELETE FROM ac_cluster_status WHERE ctx = ?",
                            "DELETE FROM ac_resources WHERE cluster_id IN (SELECT id FROM ac_clusters WHERE ctx = ?)",
                            "DELETE FROM ac_contexts WHERE id = ?"}) {
      auto& s = impl.stmt(sql);
      s.bind(1, id);
      s.exec();
    }
    if (!h.parent.empty() && exists_impl(impl, h.parent)) {
      Header p = header(st, h.parent);
      auto& kids_of_parent = p.children;
      kids_of_parent.erase(std::remove(kids_of_parent.begin(), kids_of_parent.end(), id), kids_of_parent.end());
      auto& u = impl.stmt("UPDATE ac_contexts SET children = ? WHERE id = ?");
      u.bind(1, json(kids_of_parent).dump());
      u.bind(2, h.parent);
      u.exec();
    }
    impl.db.exec("DELETE FROM ac_contents WHERE hash NOT IN (SELECT hash FROM ac_resources)");
  });
}

std::vector<std::string> cluster_names(store::Store& st, const std::string& id) {
  auto& s = st.impl().stmt("SELECT DISTINCT cluster FROM ac_clusters WHERE ctx = ? ORDER BY cluster");
  s.bind(1, id);
  std::vector<std::string> out;
  while (s.executeStep()) out.push_back(s.getColumn(0).getString());
  s.reset();
  return out;
}

std::vector<std::string> list(store::Store& st, const resource::Key& owner) {
  std::vector<std::string> out;
  auto& s = st.impl().stmt("SELECT id FROM ac_contexts WHERE owner_key = ? ORDER BY seq");
  s.bind(1, owner.str());
  while (s.executeStep()) out.push_back(s.getColumn(0).getString());
  return out;
}

namespace {

void update_column(store::Store& st, const std::string& id, const std::string& sql, const std::string& value) {
  st.write([&] {
    auto& s = st.impl().stmt(sql);
    s.bind(1, value);
    s.bind(2, id);
    if (s.exec() == 0) no_context(id);
  });
}

void update_flag(store::Store& st, const std::string& id, const std::string& sql, bool value) {
  st.write([&] {
    auto& s = st.impl().stmt(sql);
    s.bind(1, value ? 1 : 0);
    s.bind(2, id);
    if (s.exec() == 0) no_context(id);
  });
}

}  // namespace

void set_status(store::Store& st, const std::string& id, const std::string& current) {
  update_column(st, id, "UPDATE ac_contexts SET status = ? WHERE id = ?", current);
}
void set_desired(store::Store& st, const std::string& id, const std::string& desired) {
  update_column(st, id, "UPDATE ac_contexts SET desired = ? WHERE id = ?", desired);
}
void set_stop(store::Store& st, const std::string& id, bool stop) {
  update_flag(st, id, "UPDATE ac_contexts SET stop_flag = ? WHERE id = ?", stop);
}
void set_pending_terminate(store::Store& st, const std::string& id, bool flag) {
  update_flag(st, id, "UPDATE ac_contexts SET pending_terminate = ? WHERE id = ?", flag);
}
void set_meta(store::Store& st, const std::string& id, const std::string& name, const std::string& value) {
  st.write([&] {
    Header h = header(st, id);
    h.meta[name] = value;
    update_column(st, id, "UPDATE ac_contexts SET meta = ? WHERE id = ?", meta_json(h.meta).dump());
  });
}
void add_child(store::Store& st, const std::string& parent, const std::string& child) {
  st.write([&] { add_child_impl(st.impl(), parent, child); });
}

// ---- deploy status ----------------------------------------------------------

void set_resource_status(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                         const std::string& resource, const std::string& status, const std::string& message,
                         const std::string& time) {
  st.write([&] {
    auto& s = st.impl().stmt(
        "INSERT INTO ac_resource_status(ctx, app, cluster, resource, status, message, time) VALUES(?,?,?,?,?,?,?) "
        "ON CONFLICT(ctx, app, cluster, resource) DO UPDATE SET status = excluded.status, message = "
        "excluded.message, time = excluded.time");
    s.bind(1, ctx);
    s.bind(2, app);
    s.bind(3, cluster);
    s.bind(4, resource);
    s.bind(5, status);
    s.bind(6, message);
    s.bind(7, time);
    s.exec();
  });
}

void set_resource_ready(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                        const std::string& resource, const std::string& ready) {
  st.write([&] {
    auto& s = st.impl().stmt(
        "INSERT INTO ac_resource_status(ctx, app, cluster, resource, ready) VALUES(?,?,?,?,?) "
        "ON CONFLICT(ctx, app, cluster, resource) DO UPDATE SET ready = excluded.ready");
    s.bind(1, ctx);
    s.bind(2, app);
    s.bind(3, cluster);
    s.bind(4, resource);
    s.bind(5, ready);
    s.exec();
  });
}

namespace {
ResourceState resource_state_row(SQLite::Statement& s) {
  ResourceState r;
  r.app = s.getColumn(0).getString();
  r.cluster = s.getColumn(1).getString();
  r.resource = s.getColumn(2).getString();
  r.status = s.getColumn(3).getString();
  r.message = s.getColumn(4).getString();
  r.time = s.getColumn(5).getString();
  r.ready = s.getColumn(6).getString();
  return r;
}
}  // namespace

std::vector<ResourceState> resource_states(store::Store& st, const std::string& ctx) {
  std::vector<ResourceState> out;
  auto& s = st.impl().stmt(
      "SELECT app, cluster, resource, status, message, time, ready FROM ac_resource_status WHERE ctx = ? "
      "ORDER BY app, cluster, resource");
  s.bind(1, ctx);
  while (s.executeStep()) out.push_back(resource_state_row(s));
  return out;
}

std::optional<ResourceState> resource_state(store::Store& st, const std::string& ctx, const std::string& app,
                                            const std::string& cluster, const std::string& resource) {
  auto& s = st.impl().stmt(
      "SELECT app, cluster, resource, status, message, time, ready FROM ac_resource_status WHERE ctx = ? AND app = ? "
      "AND cluster = ? AND resource = ?");
  s.bind(1, ctx);
  s.bind(2, app);
  s.bind(3, cluster);
  s.bind(4, resource);
  if (!s.executeStep()) return std::nullopt;
  ResourceState r = resource_state_row(s);
  s.reset();
  return r;
}

void set_cluster_state(store::Store& st, const std::string& ctx, const std::string& app, const std::string& cluster,
                       const std::string& conn, const std::string& time) {
  st.write([&] {
    auto& s = st.impl().stmt(
        "INSERT INTO ac_cluster_status(ctx, app, cluster, connectivity, time) VALUES(?,?,?,?,?) "
        "ON CONFLICT(ctx, app, cluster) DO UPDATE SET connectivity = excluded.connectivity, time = excluded.time");
    s.bind(1, ctx);
    s.bind(2, app);
    s.bind(3, cluster);
    s.bind(4, conn);
    s.bind(5, time);
    s.exec();
  });
}

void set_cluster_readback(store::Store& st, const std::string& ctx, const std::string& app,
                          const std::string& cluster, const std::string& readback, const std::string& time) {
  st.write([&] {
    auto& s = st.impl().stmt(
        "INSERT INTO ac_cluster_status(ctx, app, cluster, readback, time) VALUES(?,?,?,?,?) "
        "ON CONFLICT(ctx, app, cluster) DO UPDATE SET readback = excluded.readback, time = excluded.time");
    s.bind(1, ctx);
    s.bind(2, app);
    s.bind(3, cluster);
    s.bind(4, readback);
    s.bind(5, time);
    s.exec();
  });
}

std::vector<ClusterState> cluster_states(store::Store& st, const std::string& ctx) {
  std::vector<ClusterState> out;
  auto& s = st.impl().stmt(
      "SELECT app, cluster, connectivity, readback, time FROM ac_cluster_status WHERE ctx = ? ORDER BY app, cluster");
  s.bind(1, ctx);
  while (s.executeStep())
    out.push_back({s.getColumn(0).getString(), s.getColumn(1).getString(), s.getColumn(2).getString(),
                   s.getColumn(3).getString(), s.getColumn(4).getString()});
  return out;
}

void clear_states(store::Store& st, const std::string& ctx) {
  st.write([&] {
    for (const char* sql : {"DELETE FROM ac_resource_status WHERE ctx = ?", "DELETE FROM ac_cluster_status WHERE ctx = ?"}) {
      auto& s = st.impl().stmt(sql);
      s.bind(1, ctx);
      s.exec();
    }
  });
}

// ---- queue ----------------------------------------------------------------

int64_t enqueue(store::Store& st, const std::string& ctx, const std::string& ev, const std::string& ucid) {
  int64_t seq = 0;
  st.write([&] {
    auto& impl = st.impl();
    if (!exists_impl(impl, ctx)) no_context(ctx);
    {
      auto& s = impl.stmt("SELECT COALESCE(MAX(seq), 0) + 1 FROM ac_queue WHERE ctx = ?");
      s.bind(1, ctx);
      s.executeStep();
      seq = s.getColumn(0).getInt64();
      s.reset();
    }
    auto& s = impl.stmt("INSERT INTO ac_queue(ctx, seq, event, ucid) VALUES(?,?,?,?)");
    s.bind(1, ctx);
    s.bind(2, seq);
    s.bind(3, ev);
    s.bind(4, ucid);
    s.exec();
    auto& a = impl.stmt("INSERT OR IGNORE INTO ac_active(ctx) VALUES(?)");
    a.bind(1, ctx);
    a.exec();
  });
  return seq;
}

namespace {
QueueEntry queue_row(SQLite::Statement& s) {
  return {s.getColumn(0).getInt64(), s.getColumn(1).getString(), s.getColumn(2).getString(),
          s.getColumn(3).getString(), s.getColumn(4).getString()};
}
}  // namespace

std::optional<QueueEntry> next_pending(store::Store& st, const std::string& ctx) {
  auto& s = st.impl().stmt(
      "SELECT seq, event, ucid, status, message FROM ac_queue WHERE ctx = ? AND status = 'Pending' ORDER BY seq LIMIT 1");
  s.bind(1, ctx);
  if (!s.executeStep()) return std::nullopt;
  QueueEntry e = queue_row(s);
  s.reset();
  return e;
}

void mark(store::Store& st, const std::string& ctx, int64_t seq, const std::string& status,
          const std::string& message) {
  st.write([&] {
    auto& s = st.impl().stmt("UPDATE ac_queue SET status = ?, message = ? WHERE ctx = ? AND seq = ?");
    s.bind(1, status);
    s.bind(2, message);
    s.bind(3, ctx);
    s.bind(4, seq);
    if (s.exec() == 0)
      fail(ErrorKind::not_found, "queue element " + std::to_string(seq) + " of appcontext '" + ctx + "' not found");
  });
}

std::vector<QueueEntry> queue(store::Store& st, const std::string& ctx) {
  std::vector<QueueEntry> out;
  auto& s = st.impl().stmt("SELECT seq, event, ucid, status, message FROM ac_queue WHERE ctx = ? ORDER BY seq");
  s.bind(1, ctx);
  while (s.executeStep()) out.push_back(queue_row(s));
  return out;
}

std::vector<std::string> active_contexts(store::Store& st) {
  std::vector<std::string> out;
  auto& s = st.impl().stmt("SELECT a.ctx FROM ac_active a JOIN ac_contexts c ON c.id = a.ctx ORDER BY c.seq");
  while (s.executeStep()) out.push_back(s.getColumn(0).getString());
  return out;
}

void deactivate(store::Store& st, const std::string& ctx) {
  st.write([&] {
    auto& s = st.impl().stmt("DELETE FROM ac_active WHERE ctx = ?");
    s.bind(1, ctx);
    s.exec();
  });
}

// ---- diff -----------------------------------------------------------------

namespace {

// Resource name → hash in a cluster, main list then hooks, in order.
std::vector<std::pair<std::string, const std::string*>> entries(const Cluster& c) {
  std::vector<std::pair<std::string, const std::string*>> out;
  for (const auto& r : c.resources) out.emplace_back(r.name, &r.content->hash);
  for (const auto& g : c.hooks)
    for (const auto& r : g.resources) out.emplace_back(r.name, &r.content->hash);
  return out;
}

ClusterDiff diff_cluster(const std::string& app, const std::string& name, const Cluster* o, const Cluster* n) {
  ClusterDiff d;
  d.app = app;
  d.cluster = name;
  d.presence = !o ? ClusterDiff::Presence::added : !n ? ClusterDiff::Presence::removed : ClusterDiff::Presence::both;
  std::unordered_map<std::string, const std::string*> old_hashes;
  if (o)
    for (auto& [k, h] : entries(*o)) old_hashes[k] = h;
  std::set<std::string> seen;
  if (n) {
    for (auto& [k, h] : entries(*n)) {
      seen.insert(k);
      auto it = old_hashes.find(k);
      if (it == old_hashes.end())
        d.added.push_back(k);
      else if (*it->second != *h)
        d.changed.push_back(k);
      else
        d.unchanged.push_back(k);
    }
  }
  if (o)
    for (auto& [k, h] : entries(*o))
      if (!seen.count(k)) d.removed.push_back(k);
  return d;
}

void diff_app(std::vector<ClusterDiff>& out, const std::string& name, const App* o, const App* n) {
  std::set<std::string> clusters;
  if (o)
    for (const auto& c : o->clusters) clusters.insert(c.name);
  if (n)
    for (const auto& c : n->clusters) clusters.insert(c.name);
  for (const auto& c : clusters)
    out.push_back(diff_cluster(name, c, o ? o->find_cluster(c) : nullptr, n ? n->find_cluster(c) : nullptr));
}

}  // namespace

std::vector<ClusterDiff> diff(const AppContext& old_ctx, const AppContext& new_ctx) {
  std::vector<ClusterDiff> out;
  for (const auto& a : new_ctx.apps) diff_app(out, a.name, old_ctx.find_app(a.name), &a);
  for (const auto& a : old_ctx.apps)
    if (!new_ctx.find_app(a.name)) diff_app(out, a.name, &a, nullptr);
  return out;
}

}  // namespace emco::appcontext
