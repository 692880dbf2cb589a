#include "core/appcontext/persistence.hpp"

#include <algorithm>
#include <set>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "core/appcontext/header_rows.hpp"
#include "core/appcontext/rows.hpp"
#include "core/store/plan_codec.hpp"
#include "core/store/database.hpp"
#include "core/store/vault.hpp"
#include "core/util/error.hpp"
#include "core/util/sha256.hpp"
#include "core/util/string_hash.hpp"

namespace emco::appcontext {

using nlohmann::json;

namespace {

void add_child(store::Database& db, const std::string& parent, const std::string& child) {
  std::string children;
  {
    auto& s = db.statement("SELECT children FROM ac_contexts WHERE id = ?");
    s.bind(1, parent);
    if (!s.step()) no_context(parent);
    children = s.str(0);
  }
  json j = json::parse(children);
  for (const auto& v : j)
    if (v == child) return;
  j.push_back(child);
  auto& u = db.statement("UPDATE ac_contexts SET children = ? WHERE id = ?");
  u.bind(1, j.dump());
  u.bind(2, parent);
  u.exec();
}

}  // namespace

namespace {

// Content by hash, looked up with views of stored hashes.
using ContentsByHash = StringMap<ContentRef>;

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

bool plan_stored(store::Database& db, const std::string& digest) {
  auto& s = db.statement("SELECT 1 FROM ac_plans WHERE digest = ?");
  s.bind(1, digest);
  return s.step();
}

// Stores a plan not stored yet, with the contents it uses.
void store_plan(store::Store& st, const App& app, const std::string& digest, const std::string& data) {
  auto& db = st.database();
  auto& sp = db.statement("INSERT INTO ac_plans(digest, data) VALUES(?, ?)");
  sp.bind(1, digest);
  sp.bind_blob(2, data);
  sp.exec();
  std::unordered_set<std::string_view> seen;
  auto put = [&](const Resource& r) {
    const Content& c = *r.content;
    if (!seen.insert(c.hash).second) return;
    auto& sc = db.statement("INSERT INTO ac_contents(hash, data) VALUES(?, ?) ON CONFLICT DO NOTHING");
    sc.bind(1, c.hash);
    if (store::is_secret_object(r.name))
      sc.bind_blob(2, st.seal_secret(c.text, store::Store::object_identity(c.hash),
                                     "Secret '" + r.name.substr(0, r.name.rfind('+')) + "' of app '" + app.name + "'"));
    else
      sc.bind_blob(2, c.text);
    sc.exec_later();  // a plan's rows go in one pipeline on a server
    auto& su = db.statement("INSERT INTO ac_plan_contents(plan, hash) VALUES(?, ?)");
    su.bind(1, digest);
    su.bind(2, c.hash);
    su.exec_later();
  };
  for (const auto& cl : app.clusters) {
    for (const auto& r : cl.resources) put(r);
    for (const auto& g : cl.hooks)
      for (const auto& r : g.resources) put(r);
  }
}

}  // namespace

void save(store::Store& st, const AppContext& ctx) {
  auto& db = st.database();
  st.write([&] {
    if (exists_in(db, ctx.id)) fail(ErrorKind::conflict, "appcontext '" + ctx.id + "' already exists");
    if (!ctx.parent.empty() && !exists_in(db, ctx.parent))
      fail(ErrorKind::not_found, "parent appcontext '" + ctx.parent + "' of '" + ctx.id + "' not found");
    int64_t seq = 0;
    {
      auto& s = db.statement("SELECT COALESCE(MAX(seq), 0) + 1 FROM ac_contexts");
      s.step();
      seq = s.int64(0);
      s.reset();
    }
    {
      auto& s = db.statement(
          "INSERT INTO ac_contexts(id, owner_kind, owner_key, meta, status, desired, parent_id, children, status_ctx, "
          "stop_flag, pending_terminate, revision, created, seq) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
      s.bind(1, ctx.id);
      s.bind(2, ctx.owner.kind);
      s.bind(3, ctx.owner.key.str());
      s.bind(4, meta_text(ctx.meta));
      s.bind(5, ctx.status);
      s.bind(6, ctx.desired);
      if (ctx.parent.empty())
        s.bind_null(7);
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
    if (!ctx.parent.empty()) add_child(db, ctx.parent, ctx.id);

    int ord = 0;
    for (const auto& app : ctx.apps) {
      std::string digest;
      if (app.elided) {
        digest = app.plan_digest;
        if (digest.empty() || !plan_stored(db, digest))
          fail(ErrorKind::internal, "appcontext '" + ctx.id + "': app '" + app.name +
                                        "' has no clusters and no stored plan to stand for them");
      } else {
        std::string data = encode_plan(app);
        digest = sha256_hex(data);
        if (!plan_stored(db, digest)) store_plan(st, app, digest, data);
      }
      json deps = json::array();
      for (const auto& d : app.dependencies) deps.push_back({{"app", d.app}, {"opStatus", d.op_status}, {"wait", d.wait}});
      auto& sa = db.statement("INSERT INTO ac_apps(ctx, ord, app, deps, plan, inputs) VALUES(?,?,?,?,?,?)");
      sa.bind(1, ctx.id);
      sa.bind(2, ord++);
      sa.bind(3, app.name);
      sa.bind(4, deps.dump());
      sa.bind(5, digest);
      sa.bind(6, app.inputs);
      sa.exec_later();
    }
  });
}

bool exists(store::Store& st, const std::string& id) { return exists_in(st.database(), id); }

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

// Loads the context whose header is `h`; the apps named in `elide` are
// left without their clusters (App::elided).
AppContext load_impl(store::Store& st, Header h, const std::set<std::string>& elide, Sealed sealed = Sealed::fail) {
  auto& db = st.database();
  const std::string id = h.id;
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
    auto& s = db.statement("SELECT app, deps, plan, inputs FROM ac_apps WHERE ctx = ? ORDER BY ord");
    s.bind(1, id);
    while (s.step()) {
      App a;
      a.name = s.str(0);
      for (const auto& d : json::parse(s.str(1)))
        a.dependencies.push_back({d.at("app").get<std::string>(), d.at("opStatus").get<std::string>(),
                                  d.at("wait").get<int>()});
      a.plan_digest = s.str(2);
      a.inputs = s.str(3);
      a.elided = elide.count(a.name) > 0;
      ctx.apps.push_back(std::move(a));
    }
  }
  ContentsByHash contents;
  std::set<std::string> read;  // plans whose contents are in `contents`
  for (auto& a : ctx.apps) {
    if (a.elided) continue;
    if (read.insert(a.plan_digest).second) {
      auto& s = db.statement(
          "SELECT c.hash, c.data FROM ac_plan_contents p JOIN ac_contents c ON c.hash = p.hash WHERE p.plan = ?");
      s.bind(1, a.plan_digest);
      while (s.step()) {
        const std::string_view hash = s.text(0);
        if (contents.find(hash) != contents.end()) continue;
        auto c = std::make_shared<Content>();
        c->hash = hash;
        c->text = s.blob(1);
        if (store::is_sealed(c->text)) {
          if (auto plain = st.open_secret(c->text, store::Store::object_identity(c->hash))) c->text = std::move(*plain);
          else if (sealed == Sealed::fail)
            st.fail_sealed(c->text, "a Secret of AppContext " + id + " (app '" + a.name + "')");
        }
        contents.emplace(c->hash, std::move(c));
      }
    }
    auto& s = db.statement("SELECT data FROM ac_plans WHERE digest = ?");
    s.bind(1, a.plan_digest);
    if (!s.step())
      fail(ErrorKind::internal, "appcontext '" + id + "' lacks the plan of app '" + a.name + "'",
           "the workspace database is damaged; restore it from a backup");
    decode_plan(id, a, s.blob(0), contents);
    s.reset();
  }
  return ctx;
}

}  // namespace

AppContext load(store::Store& st, const std::string& id, Sealed sealed) {
  return load_impl(st, header(st, id), {}, sealed);
}

std::optional<AppContext> load_if_exists(store::Store& st, const std::string& id, Sealed sealed) {
  auto h = find_header(st, id);
  if (!h) return std::nullopt;
  return load_impl(st, std::move(*h), {}, sealed);
}

std::map<std::string, StoredApp> stored_apps(store::Store& st, const std::string& id) {
  std::map<std::string, StoredApp> out;
  auto& s = st.database().statement("SELECT app, inputs, plan FROM ac_apps WHERE ctx = ?");
  s.bind(1, id);
  while (s.step()) out[s.str(0)] = {s.str(1), s.str(2)};
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
  return {load_impl(st, header(st, old_id), same), load_impl(st, header(st, new_id), same)};
}

void remove(store::Store& st, const std::string& id) {
  auto& db = st.database();
  st.write([&] {
    Header h = header(st, id);
    // Children first: terminate/delete of a parent never leaves orphans.
    std::vector<std::string> kids;
    {
      auto& s = db.statement("SELECT id FROM ac_contexts WHERE parent_id = ? ORDER BY seq");
      s.bind(1, id);
      while (s.step()) kids.push_back(s.str(0));
    }
    for (const auto& k : kids) remove(st, k);
    for (const char* sql : {"DELETE FROM ac_status WHERE ctx = ?", "DELETE FROM ac_contexts WHERE id = ?"}) {
      auto& s = db.statement(sql);
      s.bind(1, id);
      s.exec();
    }
    if (!h.parent.empty() && exists_in(db, h.parent)) {
      Header p = header(st, h.parent);
      auto& kids_of_parent = p.children;
      kids_of_parent.erase(std::remove(kids_of_parent.begin(), kids_of_parent.end(), id), kids_of_parent.end());
      auto& u = db.statement("UPDATE ac_contexts SET children = ? WHERE id = ?");
      u.bind(1, json(kids_of_parent).dump());
      u.bind(2, h.parent);
      u.exec();
    }
    // Plans no context uses, then content no plan uses.
    db.exec("DELETE FROM ac_plans WHERE digest NOT IN (SELECT plan FROM ac_apps)");
    db.exec("DELETE FROM ac_contents WHERE hash NOT IN (SELECT hash FROM ac_plan_contents)");
  });
}

namespace {

std::set<std::string> plan_digests(store::Database& db, const std::string& id) {
  std::set<std::string> out;
  auto& s = db.statement("SELECT plan FROM ac_apps WHERE ctx = ?");
  s.bind(1, id);
  while (s.step()) out.insert(s.str(0));
  return out;
}

// Calls fn(cluster) for each cluster of the stored plan `digest`; stops when
// fn returns false.
template <class Fn>
void for_each_plan_cluster(store::Database& db, const std::string& digest, const std::string& what, Fn&& fn) {
  auto& s = db.statement("SELECT data FROM ac_plans WHERE digest = ?");
  s.bind(1, digest);
  if (!s.step()) fail(ErrorKind::internal, what + " lacks its plan " + digest);
  store::PlanReader rd(s.blob(0), what);
  for (auto item = rd.next(); item != store::PlanReader::Item::end; item = rd.next())
    if (item == store::PlanReader::Item::cluster && !fn(rd.cluster_name())) break;
  s.reset();
}

}  // namespace

std::vector<std::string> departed_clusters(store::Store& st, const std::string& old_id, const std::string& new_id) {
  auto& db = st.database();
  const auto old_plans = plan_digests(db, old_id);
  const auto new_plans = plan_digests(db, new_id);
  // A plan both contexts have places its clusters in both.
  std::set<std::string, std::less<>> candidates;
  for (const auto& digest : old_plans)
    if (!new_plans.count(digest))
      for_each_plan_cluster(db, digest, "appcontext '" + old_id + "'", [&](std::string_view c) {
        candidates.emplace(c);
        return true;
      });
  for (const auto& digest : new_plans) {
    if (candidates.empty()) break;
    for_each_plan_cluster(db, digest, "appcontext '" + new_id + "'", [&](std::string_view c) {
      if (auto it = candidates.find(c); it != candidates.end()) candidates.erase(it);
      return !candidates.empty();
    });
  }
  return {candidates.begin(), candidates.end()};
}

void for_each_app_resource_names(
    store::Store& st, const std::string& id,
    const std::function<void(std::string_view app, const std::vector<ResourceName>& resources)>& fn) {
  auto& s = st.database().statement(
      "SELECT a.app, p.data FROM ac_apps a JOIN ac_plans p ON p.digest = a.plan WHERE a.ctx = ? ORDER BY a.ord");
  s.bind(1, id);
  std::vector<ResourceName> names;
  while (s.step()) {
    const std::string app = s.str(0);
    store::PlanReader rd(s.blob(1), "app '" + app + "' of appcontext '" + id + "'");
    names.clear();
    std::string_view cluster;
    for (auto item = rd.next(); item != store::PlanReader::Item::end; item = rd.next()) {
      if (item == store::PlanReader::Item::cluster)
        cluster = rd.cluster_name();
      else if (rd.hook().empty())
        names.push_back({cluster, rd.resource_name()});
    }
    fn(app, names);
  }
  s.reset();
}

void for_each_resource_name(
    store::Store& st, const std::string& id,
    const std::function<void(std::string_view app, std::string_view cluster, std::string_view resource)>& fn) {
  for_each_app_resource_names(st, id, [&](std::string_view app, const std::vector<ResourceName>& resources) {
    for (const auto& r : resources) fn(app, r.cluster, r.resource);
  });
}

std::vector<std::string> list(store::Store& st, const resource::Key& owner) {
  std::vector<std::string> out;
  auto& s = st.database().statement("SELECT id FROM ac_contexts WHERE owner_key = ? ORDER BY seq");
  s.bind(1, owner.str());
  while (s.step()) out.push_back(s.str(0));
  return out;
}

}  // namespace emco::appcontext
