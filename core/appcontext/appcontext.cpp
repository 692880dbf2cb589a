#include "core/appcontext/appcontext.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "core/store/plan_codec.hpp"
#include "core/store/store_impl.hpp"
#include "core/util/error.hpp"
#include "core/util/sha256.hpp"

namespace emco::appcontext {

using nlohmann::json;

const std::vector<std::string>& hook_group_order() {
  static const std::vector<std::string> order = {"crd-install", "pre-install",  "post-install", "pre-delete",
                                                 "post-delete", "pre-upgrade", "post-upgrade", "pre-rollback",
                                                 "post-rollback"};
  return order;
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

// A blob column's bytes, valid until the statement steps again.
std::string_view blob_view(const SQLite::Column& c) {
  return {static_cast<const char*>(c.getBlob()), static_cast<size_t>(c.getBytes())};
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

namespace {

// Content by hash, looked up with views of stored hashes.
struct ViewHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using ContentsByHash = std::unordered_map<std::string, ContentRef, ViewHash, std::equal_to<>>;

// The stored form of an app's clusters (store/plan_codec.hpp).
std::string encode_plan(const App& app) {
  store::PlanWriter w;
  for (const auto& cl : app.clusters) {
    w.cluster(cl.name, cl.group);
    for (const auto& r : cl.resources) w.resource("", r.name, r.hash());
    for (const auto& g : cl.hooks)
      for (const auto& r : g.resources) w.resource(g.event, r.name, r.hash());
  }
  return w.finish();
}

bool plan_stored(store::Store::Impl& impl, const std::string& digest) {
  auto& s = impl.stmt("SELECT 1 FROM ac_plans WHERE digest = ?");
  s.bind(1, digest);
  return s.executeStep();
}

// Stores a plan not stored yet, with the contents it uses.
void store_plan(store::Store::Impl& impl, const App& app, const std::string& digest, const std::string& data) {
  auto& sp = impl.stmt("INSERT INTO ac_plans(digest, data) VALUES(?, ?)");
  sp.bind(1, digest);
  sp.bind(2, data.data(), static_cast<int>(data.size()));
  sp.exec();
  std::unordered_set<std::string_view> seen;
  auto put = [&](const Content& c) {
    if (!seen.insert(c.hash).second) return;
    auto& sc = impl.stmt("INSERT OR IGNORE INTO ac_contents(hash, data) VALUES(?, ?)");
    sc.bind(1, c.hash);
    sc.bind(2, c.text.data(), static_cast<int>(c.text.size()));
    sc.exec();
    auto& su = impl.stmt("INSERT INTO ac_plan_contents(plan, hash) VALUES(?, ?)");
    su.bind(1, digest);
    su.bind(2, c.hash);
    su.exec();
  };
  for (const auto& cl : app.clusters) {
    for (const auto& r : cl.resources) put(*r.content);
    for (const auto& g : cl.hooks)
      for (const auto& r : g.resources) put(*r.content);
  }
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

    int ord = 0;
    for (const auto& app : ctx.apps) {
      std::string digest;
      if (app.elided) {
        digest = app.plan_digest;
        if (digest.empty() || !plan_stored(impl, digest))
          fail(ErrorKind::internal, "appcontext '" + ctx.id + "': app '" + app.name +
                                        "' has no clusters and no stored plan to stand for them");
      } else {
        std::string data = encode_plan(app);
        digest = sha256_hex(data);
        if (!plan_stored(impl, digest)) store_plan(impl, app, digest, data);
      }
      json deps = json::array();
      for (const auto& d : app.dependencies) deps.push_back({{"app", d.app}, {"opStatus", d.op_status}, {"wait", d.wait}});
      auto& sa = impl.stmt("INSERT INTO ac_apps(ctx, ord, app, deps, plan, inputs) VALUES(?,?,?,?,?,?)");
      sa.bind(1, ctx.id);
      sa.bind(2, ord++);
      sa.bind(3, app.name);
      sa.bind(4, deps.dump());
      sa.bind(5, digest);
      sa.bind(6, app.inputs);
      sa.exec();
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

namespace {

// Decodes a stored plan into the app's clusters, with contents from `contents`.
void decode_plan(const std::string& ctx_id, App& app, std::string_view data, const ContentsByHash& contents) {
  const std::string what = "app '" + app.name + "' of appcontext '" + ctx_id + "'";
  store::PlanReader rd(data, what);
  Cluster* current = nullptr;
  for (;;) {
    auto item = rd.next();
    if (item == store::PlanReader::Item::end) break;
    if (item == store::PlanReader::Item::cluster) {
      app.clusters.push_back(Cluster{std::string(rd.cluster_name()), rd.cluster_group(), {}, {}});
      current = &app.clusters.back();
      continue;
    }
    auto ct = contents.find(rd.hash());
    if (ct == contents.end()) fail(ErrorKind::internal, what + " lacks content " + std::string(rd.hash()));
    Resource r{std::string(rd.resource_name()), ct->second};
    std::string_view hook = rd.hook();
    if (hook.empty()) {
      current->resources.push_back(std::move(r));
    } else {
      if (current->hooks.empty() || current->hooks.back().event != hook)
        current->hooks.push_back({std::string(hook), {}});
      current->hooks.back().resources.push_back(std::move(r));
    }
  }
}

// Loads a context; the apps named in `elide` are left without their
// clusters (App::elided).
AppContext load_impl(store::Store& st, const std::string& id, const std::set<std::string>& elide) {
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
    auto& s = impl.stmt("SELECT app, deps, plan, inputs FROM ac_apps WHERE ctx = ? ORDER BY ord");
    s.bind(1, id);
    while (s.executeStep()) {
      App a;
      a.name = s.getColumn(0).getString();
      for (const auto& d : json::parse(s.getColumn(1).getString()))
        a.dependencies.push_back({d.at("app").get<std::string>(), d.at("opStatus").get<std::string>(),
                                  d.at("wait").get<int>()});
      a.plan_digest = s.getColumn(2).getString();
      a.inputs = s.getColumn(3).getString();
      a.elided = elide.count(a.name) > 0;
      ctx.apps.push_back(std::move(a));
    }
  }
  ContentsByHash contents;
  std::set<std::string> read;  // plans whose contents are in `contents`
  for (auto& a : ctx.apps) {
    if (a.elided) continue;
    if (read.insert(a.plan_digest).second) {
      auto& s = impl.stmt(
          "SELECT c.hash, c.data FROM ac_plan_contents p JOIN ac_contents c ON c.hash = p.hash WHERE p.plan = ?");
      s.bind(1, a.plan_digest);
      while (s.executeStep()) {
        const char* hash = s.getColumn(0).getText();
        if (contents.find(std::string_view(hash)) != contents.end()) continue;
        auto c = std::make_shared<Content>();
        c->hash = hash;
        c->text = blob_view(s.getColumn(1));
        contents.emplace(c->hash, std::move(c));
      }
    }
    auto& s = impl.stmt("SELECT data FROM ac_plans WHERE digest = ?");
    s.bind(1, a.plan_digest);
    if (!s.executeStep())
      fail(ErrorKind::internal, "appcontext '" + id + "' lacks the plan of app '" + a.name + "'",
           "the workspace database is damaged; restore it from a backup");
    const auto col = s.getColumn(0);
    decode_plan(id, a, blob_view(col), contents);
    s.reset();
  }
  return ctx;
}

}  // namespace

AppContext load(store::Store& st, const std::string& id) { return load_impl(st, id, {}); }

std::map<std::string, StoredApp> stored_apps(store::Store& st, const std::string& id) {
  std::map<std::string, StoredApp> out;
  auto& s = st.impl().stmt("SELECT app, inputs, plan FROM ac_apps WHERE ctx = ?");
  s.bind(1, id);
  while (s.executeStep()) out[s.getColumn(0).getString()] = {s.getColumn(1).getString(), s.getColumn(2).getString()};
  return out;
}

ContextPair load_changed(store::Store& st, const std::string& old_id, const std::string& new_id) {
  if (!exists(st, old_id)) no_context(old_id);
  if (!exists(st, new_id)) no_context(new_id);
  auto old_apps = stored_apps(st, old_id);
  std::set<std::string> same;  // apps planned the same way in both
  for (const auto& [app, stored] : stored_apps(st, new_id)) {
    auto it = old_apps.find(app);
    if (it != old_apps.end() && it->second.plan_digest == stored.plan_digest) same.insert(app);
  }
  return {load_impl(st, old_id, same), load_impl(st, new_id, same)};
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
    // Plans no context uses, then content no plan uses.
    impl.db.exec("DELETE FROM ac_plans WHERE digest NOT IN (SELECT plan FROM ac_apps)");
    impl.db.exec("DELETE FROM ac_contents WHERE hash NOT IN (SELECT hash FROM ac_plan_contents)");
  });
}

namespace {

std::set<std::string> plan_digests(store::Store::Impl& impl, const std::string& id) {
  std::set<std::string> out;
  auto& s = impl.stmt("SELECT plan FROM ac_apps WHERE ctx = ?");
  s.bind(1, id);
  while (s.executeStep()) out.insert(s.getColumn(0).getString());
  return out;
}

// Calls fn(cluster) for each cluster of the stored plan `digest`; stops when
// fn returns false.
template <class Fn>
void for_each_plan_cluster(store::Store::Impl& impl, const std::string& digest, const std::string& what, Fn&& fn) {
  auto& s = impl.stmt("SELECT data FROM ac_plans WHERE digest = ?");
  s.bind(1, digest);
  if (!s.executeStep()) fail(ErrorKind::internal, what + " lacks its plan " + digest);
  const auto col = s.getColumn(0);
  store::PlanReader rd(blob_view(col), what);
  for (auto item = rd.next(); item != store::PlanReader::Item::end; item = rd.next())
    if (item == store::PlanReader::Item::cluster && !fn(rd.cluster_name())) break;
  s.reset();
}

}  // namespace

std::vector<std::string> departed_clusters(store::Store& st, const std::string& old_id, const std::string& new_id) {
  auto& impl = st.impl();
  const auto old_plans = plan_digests(impl, old_id);
  const auto new_plans = plan_digests(impl, new_id);
  // A plan both contexts have places its clusters in both.
  std::set<std::string, std::less<>> candidates;
  for (const auto& digest : old_plans)
    if (!new_plans.count(digest))
      for_each_plan_cluster(impl, digest, "appcontext '" + old_id + "'", [&](std::string_view c) {
        candidates.emplace(c);
        return true;
      });
  for (const auto& digest : new_plans) {
    if (candidates.empty()) break;
    for_each_plan_cluster(impl, digest, "appcontext '" + new_id + "'", [&](std::string_view c) {
      if (auto it = candidates.find(c); it != candidates.end()) candidates.erase(it);
      return !candidates.empty();
    });
  }
  return {candidates.begin(), candidates.end()};
}

void for_each_resource_name(
    store::Store& st, const std::string& id,
    const std::function<void(std::string_view app, std::string_view cluster, std::string_view resource)>& fn) {
  auto& s = st.impl().stmt(
      "SELECT a.app, p.data FROM ac_apps a JOIN ac_plans p ON p.digest = a.plan WHERE a.ctx = ? ORDER BY a.ord");
  s.bind(1, id);
  while (s.executeStep()) {
    const std::string app = s.getColumn(0).getString();
    const auto col = s.getColumn(1);
    store::PlanReader rd(blob_view(col), "app '" + app + "' of appcontext '" + id + "'");
    std::string_view cluster;
    for (auto item = rd.next(); item != store::PlanReader::Item::end; item = rd.next()) {
      if (item == store::PlanReader::Item::cluster)
        cluster = rd.cluster_name();
      else if (rd.hook().empty())
        fn(app, cluster, rd.resource_name());
    }
  }
  s.reset();
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

void for_each_resource_status(store::Store& st, const std::string& ctx,
                              const std::function<void(std::string_view app, std::string_view cluster,
                                                       std::string_view resource, std::string_view status)>& fn) {
  auto& s = st.impl().stmt("SELECT app, cluster, resource, status FROM ac_resource_status WHERE ctx = ?");
  s.bind(1, ctx);
  while (s.executeStep())
    fn(blob_view(s.getColumn(0)), blob_view(s.getColumn(1)), blob_view(s.getColumn(2)), blob_view(s.getColumn(3)));
  s.reset();
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
  if (o && n && !o->plan_digest.empty() && o->plan_digest == n->plan_digest) return;
  // Cluster name → (old, new), by name.
  std::map<std::string_view, std::pair<const Cluster*, const Cluster*>> clusters;
  if (o)
    for (const auto& c : o->clusters) clusters[c.name].first = &c;
  if (n)
    for (const auto& c : n->clusters) clusters[c.name].second = &c;
  for (const auto& [c, pair] : clusters) out.push_back(diff_cluster(name, std::string(c), pair.first, pair.second));
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
