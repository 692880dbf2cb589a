#include "core/sync/queue.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <csignal>
#include <deque>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include <thread>

#include <unistd.h>

#include "core/appcontext/appcontext.hpp"
#include "core/appcontext/job_rows.hpp"
#include "core/sync/work.hpp"
#include "core/sync/worker.hpp"
#include "core/util/clock.hpp"
#include "core/util/error.hpp"

namespace emco::sync {

namespace ac = emco::appcontext;
using namespace std::chrono;

const Transition& transition(const std::string& event) {
  // lifecycle.md §6, newest code. (The spec spells the update error state
  // "UpdateFailed" in the table and "UpdatedFailed" in the status list; the
  // status list is what the code writes.)
  static const std::map<std::string, Transition> table = {
      {ac::event::instantiate,
       {{ac::status::created, ac::status::instantiated, ac::status::instantiate_failed, ac::status::instantiating},
        ac::status::instantiating, ac::status::instantiated, ac::status::instantiate_failed}},
      {ac::event::terminate,
       {{ac::status::instantiate_failed, ac::status::instantiating, ac::status::instantiated,
         ac::status::terminate_failed, ac::status::terminating, ac::status::updated, ac::status::updated_failed,
         ac::status::updating},
        ac::status::terminating, ac::status::terminated, ac::status::terminate_failed}},
      {ac::event::update,
       {{ac::status::created, ac::status::updated}, ac::status::instantiating, ac::status::instantiated,
        ac::status::instantiate_failed}},
      {ac::event::update_delete,
       {{ac::status::instantiated}, ac::status::updating, ac::status::updated, ac::status::updated_failed}},
      {ac::event::read,
       {{ac::status::created, ac::status::instantiated, ac::status::instantiate_failed, ac::status::instantiating},
        ac::status::instantiating, ac::status::instantiated, ac::status::instantiate_failed}},
  };
  auto it = table.find(event);
  if (it == table.end()) fail(ErrorKind::invalid, "unknown sync event '" + event + "'");
  return it->second;
}

namespace {

// A step's text shares the context's interned content: one copy for every
// cluster that gets the same object, not one per (cluster, resource).
SharedText text_of(const ac::Resource& r) {
  return SharedText(std::shared_ptr<const std::string>(r.content, &r.content->text));
}

int64_t now_ms() { return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count(); }

// ---- the lease ----

std::string lease_key(const std::string& ctx) { return "sync.lease." + ctx; }

// "<pid> <heartbeat ms> <host> <token>": the holder (worker_id()'s parts)
// and its last heartbeat by clock_ms() (the server's clock on a shared
// database). Earlier emcos wrote "<pid> <heartbeat>" (this machine's).
struct Lease {
  long pid = 0;
  int64_t heartbeat_ms = 0;
  std::string host, token;
};

Lease read_lease(store::Store& st, const std::string& ctx) {
  Lease l;
  auto v = st.meta(lease_key(ctx));
  if (!v || v->empty()) return l;
  char host[256] = "", token[64] = "";
  std::sscanf(v->c_str(), "%ld %lld %255s %63s", &l.pid, reinterpret_cast<long long*>(&l.heartbeat_ms), host, token);
  l.host = host;
  l.token = token;
  return l;
}

bool pid_alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

bool lease_mine(const Lease& l) {
  return l.pid == static_cast<long>(::getpid()) &&
         (l.host.empty() || (l.host == worker_host() && l.token == worker_token()));
}

// A holder on this machine is dead as soon as its pid is; one on another
// machine (a shared database) only once its heartbeat is stale.
bool lease_live(store::Store& st, const Lease& l) {
  if (l.pid == 0) return false;
  if (lease_mine(l)) return true;
  if ((l.host.empty() || l.host == worker_host()) && !pid_alive(l.pid)) return false;
  return appcontext::jobs::clock_ms(st) - l.heartbeat_ms < duration_cast<milliseconds>(k_lease_stale).count();
}

void write_lease(store::Store& st, const std::string& ctx) {
  st.set_meta(lease_key(ctx), std::to_string(::getpid()) + " " + std::to_string(appcontext::jobs::clock_ms(st)) + " " +
                                  worker_host() + " " + worker_token());
}

// Takes the lease unless another live process holds it.
bool acquire(store::Store& st, const std::string& ctx) {
  bool got = false;
  st.write([&] {
    got = false;  // a re-run body (store::Database::transaction) decides afresh
    Lease l = read_lease(st, ctx);
    if (lease_live(st, l) && !lease_mine(l)) return;
    write_lease(st, ctx);
    got = true;
  });
  return got;
}

void release(store::Store& st, const std::string& ctx) {
  st.write([&] {
    if (lease_mine(read_lease(st, ctx))) st.set_meta(lease_key(ctx), "");
  });
}

// A stopped apply leaves nothing queued: a resource it was still retrying
// (its cluster unreachable) was never created and is no longer retried, so
// it is NotCreated (issue 23: each state means one thing).
void settle_stopped_apply(store::Store& st, const std::string& status_ctx) {
  const std::string now = rfc3339_ms(now_ms());
  const auto states = ac::resource_states(st, status_ctx);
  std::vector<ac::StatusChange> changes;
  for (const auto& s : states)
    if (s.status == ac::resource_status::retrying)
      changes.push_back(ac::StatusChange::of_status(s.app, s.cluster, s.resource, ac::resource_status::not_created,
                                                    "stopped while its cluster could not be reached", now));
  if (!changes.empty()) st.write([&] { ac::put_status_changes(st, status_ctx, changes); });
}

// ---- building the executor's work ----

bool is_crd_group(const std::string& g) { return g == "crd-install"; }

const ac::HookGroup* hooks_of(const ac::Cluster& c, const std::string& event) {
  for (const auto& h : c.hooks)
    if (h.event == event) return &h;
  return nullptr;
}

std::vector<Dependency> deps_of(const ac::App& a) {
  std::vector<Dependency> out;
  for (const auto& d : a.dependencies) out.push_back({d.app, d.op_status == "Ready", d.wait});
  return out;
}

Work base_work(const ac::AppContext& c) {
  Work w;
  auto ns = c.meta.find("Namespace");
  if (ns != c.meta.end()) w.ns = ns->second;
  return w;
}

void add_hooks(Job& j, const ac::Cluster& c, const std::string& event, StepAction action) {
  if (const auto* h = hooks_of(c, event))
    for (const auto& r : h->resources) j.steps.push_back({action, r.name, text_of(r), true});
}

// The most steps a job on `cl` has: its resources and every hook. A fleet's
// jobs and steps are much of a large delivery's memory, and growing their
// vectors by doubling left a quarter of it unused, so instantiate_work
// sizes them up front.
size_t step_count(const ac::Cluster& cl) {
  size_t n = cl.resources.size();
  for (const auto& h : cl.hooks) n += h.resources.size();
  return n;
}

Work instantiate_work(const ac::AppContext& c) {
  Work w = base_work(c);
  size_t jobs = 0;
  for (const auto& a : c.apps) jobs += a.clusters.size();
  w.jobs.reserve(jobs);
  for (const auto& a : c.apps) {
    w.apps.push_back({a.name, deps_of(a)});
    for (const auto& cl : a.clusters) {
      Job j{a.name, cl.name, {}};
      j.steps.reserve(step_count(cl));
      add_hooks(j, cl, "crd-install", StepAction::create);
      add_hooks(j, cl, "pre-install", StepAction::apply_wait);
      for (const auto& r : cl.resources) j.steps.push_back({StepAction::apply, r.name, text_of(r), true});
      add_hooks(j, cl, "post-install", StepAction::apply_wait);
      w.jobs.push_back(std::move(j));
    }
  }
  return w;
}

// Terminate deletes in reverse: dependents before what they depend on, and
// within a cluster the last-applied object first.
Work terminate_work(const ac::AppContext& c) {
  Work w = base_work(c);
  std::map<std::string, std::vector<Dependency>> reversed;
  for (const auto& a : c.apps)
    for (const auto& d : a.dependencies) reversed[d.app].push_back({a.name, false, 0});
  for (auto it = c.apps.rbegin(); it != c.apps.rend(); ++it) {
    const auto& a = *it;
    w.apps.push_back({a.name, reversed[a.name]});
    for (const auto& cl : a.clusters) {
      Job j{a.name, cl.name, {}};
      add_hooks(j, cl, "pre-delete", StepAction::apply_wait);
      for (auto r = cl.resources.rbegin(); r != cl.resources.rend(); ++r)
        j.steps.push_back({StepAction::remove, r->name, text_of(*r), true});
      add_hooks(j, cl, "post-delete", StepAction::apply_wait);
      for (const auto& h : cl.hooks) {
        if (is_crd_group(h.event)) continue;
        for (const auto& r : h.resources) j.steps.push_back({StepAction::remove_quiet, r.name, text_of(r), false});
      }
      for (const auto& h : cl.hooks) {
        if (!is_crd_group(h.event)) continue;
        for (const auto& r : h.resources) j.steps.push_back({StepAction::remove_quiet, r.name, text_of(r), false});
      }
      w.jobs.push_back(std::move(j));
    }
  }
  return w;
}

// The Work app that schedules an update's removals: it depends on every app
// of the new context, so what the new context no longer has is removed only
// once all of it is deployed (as upstream's UpdateDelete, queued after a
// successful Update), yet in the same run: a git repository gets one commit.
constexpr const char* k_update_removals = "emco:update-removals";

// The clusters of a context by (app, cluster), for the entries of a diff.
class ClusterIndex {
public:
  explicit ClusterIndex(const ac::AppContext& c) {
    for (const auto& a : c.apps) {
      auto& clusters = m_apps[a.name];
      for (const auto& cl : a.clusters) clusters.emplace(cl.name, &cl);
    }
  }
  const ac::Cluster* find(const std::string& app, const std::string& cluster) const {
    auto a = m_apps.find(app);
    if (a == m_apps.end()) return nullptr;
    auto c = a->second.find(cluster);
    return c == a->second.end() ? nullptr : c->second;
  }

private:
  std::map<std::string_view, std::unordered_map<std::string_view, const ac::Cluster*>, std::less<>> m_apps;
};

// What the new context no longer has (on the old context's resources), in
// reverse order; `scheduled_with` as for Job.
void add_removals(Work& w, const ac::AppContext& old_ctx, const std::vector<ac::ClusterDiff>& diffs,
                  const std::string& scheduled_with) {
  const ClusterIndex index(old_ctx);
  for (const auto& d : diffs) {
    if (d.removed.empty()) continue;
    const ac::Cluster* cl = index.find(d.app, d.cluster);
    if (!cl) continue;
    std::set<std::string> gone(d.removed.begin(), d.removed.end());
    Job j{d.app, d.cluster, {}, scheduled_with};
    for (auto r = cl->resources.rbegin(); r != cl->resources.rend(); ++r)
      if (gone.count(r->name)) j.steps.push_back({StepAction::remove, r->name, text_of(*r), true});
    for (const auto& h : cl->hooks)
      for (const auto& r : h.resources)
        if (gone.count(r.name) && !is_crd_group(h.event))
          j.steps.push_back({StepAction::remove_quiet, r.name, text_of(r), false});
    if (!j.steps.empty()) w.jobs.push_back(std::move(j));
  }
}

// Update (on the new context): new and changed resources (CRDs of the new
// context are created if absent; other hooks do not run), then, once every
// app is deployed, the removals.
Work update_work(const ac::AppContext& old_ctx, const ac::AppContext& new_ctx) {
  Work w = base_work(new_ctx);
  WorkApp removals{k_update_removals, {}};
  for (const auto& a : new_ctx.apps) {
    w.apps.push_back({a.name, deps_of(a)});
    removals.depends_on.push_back({a.name, false, 0});
  }
  auto diffs = ac::diff(old_ctx, new_ctx);
  const ClusterIndex index(new_ctx);
  for (const auto& d : diffs) {
    if (d.presence == ac::ClusterDiff::Presence::removed) continue;
    if (d.added.empty() && d.changed.empty()) continue;
    const ac::Cluster* cl = index.find(d.app, d.cluster);
    if (!cl) continue;
    std::set<std::string> todo(d.added.begin(), d.added.end());
    todo.insert(d.changed.begin(), d.changed.end());
    Job j{d.app, d.cluster, {}, {}};
    if (const auto* crds = hooks_of(*cl, "crd-install"))
      for (const auto& r : crds->resources)
        if (todo.count(r.name)) j.steps.push_back({StepAction::create, r.name, text_of(r), true});
    for (const auto& r : cl->resources)
      if (todo.count(r.name)) j.steps.push_back({StepAction::apply, r.name, text_of(r), true});
    if (!j.steps.empty()) w.jobs.push_back(std::move(j));
  }
  w.apps.push_back(std::move(removals));
  add_removals(w, old_ctx, diffs, k_update_removals);
  return w;
}

// UpdateDelete (on the old context), as queued by earlier versions of emco:
// what the new context no longer has.
Work update_delete_work(const ac::AppContext& old_ctx, const ac::AppContext& new_ctx) {
  Work w = base_work(old_ctx);
  for (const auto& a : old_ctx.apps) w.apps.push_back({a.name, {}});
  add_removals(w, old_ctx, ac::diff(old_ctx, new_ctx), {});
  return w;
}

// The Read event: reads every resource of the context back from its cluster
// and records readiness and connectivity under the status context. An
// unreachable cluster is recorded Retrying and does not fail the event (what
// was deployed is unchanged). False when interrupted (the event stays Pending).
bool read_back(store::Store& st, const ac::AppContext& c, const std::string& status_ctx, const DriveOptions& o) {
  std::map<std::string, std::shared_ptr<Target>> targets;
  std::string ns = base_work(c).ns;
  for (const auto& a : c.apps)
    for (const auto& cl : a.clusters) {
      if ((o.engine.interrupt && o.engine.interrupt->load()) || steady_clock::now() >= o.engine.deadline) return false;
      std::string now = rfc3339_ms(now_ms());
      try {
        auto& t = targets[cl.name];
        if (!t) t = o.factory(cl.name, ns);
        t->probe();
        std::vector<std::pair<std::string, bool>> ready;
        for (const auto& r : cl.resources) ready.push_back({r.name, t->state(r.text()).ready});
        std::vector<ac::StatusChange> changes;
        changes.push_back(
            ac::StatusChange::of_connectivity(a.name, cl.name, connectivity_name(Connectivity::available), now));
        for (const auto& [name, ok] : ready)
          changes.push_back(ac::StatusChange::of_ready(a.name, cl.name, name, ok ? "true" : "false"));
        st.write([&] { ac::put_status_changes(st, status_ctx, changes); });
      } catch (const Error&) {
        // A TargetError, or the factory's Error for a cluster it cannot
        // use: recorded as Retrying. Anything else is a bug and propagates.
        st.write([&] {
          ac::set_cluster_state(st, status_ctx, a.name, cl.name, connectivity_name(Connectivity::retrying), now);
        });
      }
    }
  return true;
}

// The removals ran with the Update (update_work): the old context's
// UpdateDelete is recorded as done in the same transaction that ends the
// Update, so a crash leaves either both pending (the Update is resumed, its
// removals included) or both done. An old context that cannot take it (not
// Instantiated) gets the UpdateDelete's error state, as a queued one would.
void finish_update_delete(store::Store& st, const std::string& old_ctx, const std::string& new_ctx) {
  const Transition& t = transition(ac::event::update_delete);
  ac::Header h = ac::header(st, old_ctx);
  int64_t seq = ac::enqueue(st, old_ctx, ac::event::update_delete, new_ctx);
  bool valid = std::find(t.sources.begin(), t.sources.end(), h.status) != t.sources.end() ||
               (h.status == t.current && h.desired == t.desired);
  if (valid) {
    ac::set_desired(st, old_ctx, t.desired);
    ac::set_status(st, old_ctx, t.desired);
    ac::mark(st, old_ctx, seq, ac::queue_status::done, "removed with the update to context " + new_ctx);
  } else {
    ac::set_status(st, old_ctx, t.error);
    ac::mark(st, old_ctx, seq, ac::queue_status::skip, std::string(ac::event::update_delete) +
                                                          " is not valid in state " + h.status);
  }
  if (!ac::next_pending(st, old_ctx)) {
    ac::deactivate(st, old_ctx);
    ac::set_pending_terminate(st, old_ctx, false);
  }
}

std::string first_failures(const std::vector<std::string>& failures) {
  std::string s;
  for (size_t i = 0; i < failures.size() && i < 3; ++i) s += (i ? "; " : "") + failures[i];
  if (failures.size() > 3) s += "; and " + std::to_string(failures.size() - 3) + " more";
  return s;
}

constexpr const char* k_stage_meta = "sync.stage";

// "<seq> <final> <ended>" and then one cluster per line.
std::string stage_text(const Stage& s) {
  std::string out = std::to_string(s.seq) + " " + (s.final ? "1" : "0") + " " + (s.ended ? "1" : "0");
  for (const auto& c : s.clusters) out += "\n" + c;
  return out;
}

std::optional<Stage> parse_stage(const std::string& text) {
  if (text.empty()) return std::nullopt;
  Stage s;
  size_t nl = text.find('\n');
  long long seq = 0;
  int fin = 0, ended = 0;
  if (std::sscanf(text.substr(0, nl).c_str(), "%lld %d %d", &seq, &fin, &ended) != 3) return std::nullopt;
  s.seq = seq;
  s.final = fin != 0;
  s.ended = ended != 0;
  while (nl != std::string::npos) {
    size_t next = text.find('\n', nl + 1);
    s.clusters.push_back(text.substr(nl + 1, next == std::string::npos ? std::string::npos : next - nl - 1));
    nl = next;
  }
  return s;
}

std::optional<Stage> stage_of(const ac::Header& h) {
  auto it = h.meta.find(k_stage_meta);
  return it == h.meta.end() ? std::nullopt : parse_stage(it->second);
}

// The stage of `entry`, when one is open for it.
std::optional<Stage> stage_for(const ac::Header& h, const ac::QueueEntry& entry) {
  auto s = stage_of(h);
  if (!s || s->seq != entry.seq) return std::nullopt;
  if (entry.event != ac::event::instantiate && entry.event != ac::event::update && entry.event != ac::event::terminate)
    return std::nullopt;
  return s;
}

void only_clusters(Work& w, const std::vector<std::string>& clusters) {
  const std::set<std::string> keep(clusters.begin(), clusters.end());
  std::vector<Job> jobs;
  for (auto& j : w.jobs)
    if (keep.count(j.cluster)) jobs.push_back(std::move(j));
  w.jobs = std::move(jobs);
}

}  // namespace

void open_stage(store::Store& st, const std::string& ctx, const Stage& stage) {
  st.write([&] {
    if (auto before = stage_of(ac::header(st, ctx))) ac::jobs::forget(st, ctx, before->seq);
    Stage s = stage;
    s.ended = false;
    ac::set_meta(st, ctx, k_stage_meta, stage_text(s));
  });
}

std::optional<Stage> current_stage(store::Store& st, const std::string& ctx) { return stage_of(ac::header(st, ctx)); }

EventWork event_work(store::Store& st, const std::string& ctx, const ac::QueueEntry& entry) {
  EventWork ew;
  // An update (and an UpdateDelete) needs only the apps that changed.
  if (entry.event == ac::event::update) {
    auto pair = ac::load_changed(st, entry.ucid, ctx);
    ew.status_ctx = pair.new_ctx.status_id();
    ew.work = update_work(pair.old_ctx, pair.new_ctx);
  } else if (entry.event == ac::event::update_delete) {
    auto pair = ac::load_changed(st, ctx, entry.ucid);
    ew.status_ctx = pair.old_ctx.status_id();
    ew.work = update_delete_work(pair.old_ctx, pair.new_ctx);
  } else {
    ac::AppContext loaded = ac::load(st, ctx);
    ew.status_ctx = loaded.status_id();
    if (entry.event == ac::event::instantiate)
      ew.work = instantiate_work(loaded);
    else if (entry.event == ac::event::terminate)
      ew.work = terminate_work(loaded);
    else
      ew.context = std::move(loaded);  // Read has no executor work (read_back)
  }
  if (auto stage = stage_for(ac::header(st, ctx), entry)) only_clusters(ew.work, stage->clusters);
  return ew;
}

void record_updates(store::Store& st, const std::string& status_ctx, const std::vector<Update>& batch) {
  std::vector<ac::StatusChange> changes;
  changes.reserve(batch.size());
  // A batch's updates mostly share their millisecond (a commit's statuses
  // are emitted at once): each distinct time is formatted once, and the
  // changes view it (a deque does not move what it holds).
  std::deque<std::string> times;
  int64_t formatted_ms = 0;
  for (const auto& u : batch) {
    if (times.empty() || u.time_ms != formatted_ms) {
      formatted_ms = u.time_ms;
      times.push_back(rfc3339_ms(formatted_ms));
    }
    const std::string& time = times.back();
    changes.push_back(u.connectivity ? ac::StatusChange::of_connectivity(u.app, u.cluster, connectivity_name(u.conn), time)
                                     : ac::StatusChange::of_status(u.app, u.cluster, u.resource, status_name(u.status),
                                                                   u.message, time));
  }
  st.write([&] { ac::put_status_changes(st, status_ctx, changes); });
}

bool held_by_live_process(store::Store& st, const std::string& ctx) { return lease_live(st, read_lease(st, ctx)); }

namespace {
const char* const k_background_key = "sync.background";
}  // namespace

bool claim_background_slot(store::Store& st) {
  bool claimed = false;
  st.write([&] {
    claimed = false;  // a re-run body (store::Database::transaction) decides afresh
    const int64_t now = appcontext::jobs::clock_ms(st);
    if (auto v = st.meta(k_background_key); v && !v->empty()) {
      long pid = 0;
      long long started = 0;
      // Earlier emcos wrote the pid alone: held while it lives.
      const int fields = std::sscanf(v->c_str(), "%ld %lld", &pid, &started);
      const auto limit = duration_cast<milliseconds>(k_background_timeout + minutes(1)).count();
      if (pid_alive(pid) && (fields < 2 || now - started < limit)) return;
    }
    st.set_meta(k_background_key, std::to_string(::getpid()) + " " + std::to_string(now));
    claimed = true;
  });
  return claimed;
}

void set_background_slot(store::Store& st, long pid) {
  st.write([&] {
    st.set_meta(k_background_key, pid == 0 ? std::string() : std::to_string(pid) + " " +
                                                              std::to_string(appcontext::jobs::clock_ms(st)));
  });
}

std::vector<std::string> resumable(store::Store& st) {
  std::vector<std::string> out;
  // Every command asks at its start (auto-resume), and nearly always none is
  // active: the cheap question first.
  if (!ac::any_active(st)) return out;
  for (const auto& id : ac::active_contexts(st))
    if (!held_by_live_process(st, id)) out.push_back(id);
  return out;
}

void request_read(store::Store& st, const std::string& ctx) {
  st.write([&] { ac::enqueue(st, ctx, ac::event::read); });
}

bool take_lease(store::Store& st, const std::string& ctx) { return acquire(st, ctx); }

int64_t enqueue_to_deliver(store::Store& st, const std::string& ctx, const std::string& event, const std::string& ucid) {
  int64_t seq = 0;
  st.write([&] {
    seq = ac::enqueue(st, ctx, event, ucid);
    acquire(st, ctx);
  });
  return seq;
}
void renew_lease(store::Store& st, const std::string& ctx) {
  st.write([&] { write_lease(st, ctx); });
}
void release_lease(store::Store& st, const std::string& ctx) { release(st, ctx); }

LeaseScope::LeaseScope(store::Store& st, std::string ctx)
    : m_st(st), m_ctx(std::move(ctx)), m_release(!lease_mine(read_lease(st, m_ctx))) {}

LeaseScope::~LeaseScope() {
  if (m_release && ac::exists(m_st, m_ctx)) release(m_st, m_ctx);
}

void request_terminate(store::Store& st, const std::string& ctx) {
  st.write([&] {
    // Work queued before the terminate (an interrupted instantiate) is
    // skipped rather than finished first; a live process working on the
    // context cancels its running event.
    bool earlier = ac::next_pending(st, ctx).has_value();
    ac::enqueue(st, ctx, ac::event::terminate);
    // As enqueue_to_deliver: this process holds the lease to deliver the
    // terminate, unless another live process holds it.
    const bool held_elsewhere = !acquire(st, ctx);
    if (earlier || held_elsewhere) ac::set_pending_terminate(st, ctx, true);
  });
}

DriveResult drive(store::Store& st, const std::string& ctx, const DriveOptions& options) {
  DriveResult result;
  if (!acquire(st, ctx)) {
    result.end = DriveEnd::busy;
    result.status = ac::header(st, ctx).status;
    return result;
  }
  try {
    for (;;) {
      auto entry = ac::next_pending(st, ctx);
      if (!entry) {
        st.write([&] {
          ac::deactivate(st, ctx);
          ac::set_pending_terminate(st, ctx, false);
        });
        break;
      }
      ac::Header h = ac::header(st, ctx);
      const Transition& t = transition(entry->event);
      bool resumed = h.status == t.current && h.desired == t.desired;
      if (h.stop) {
        st.write([&] {
          ac::mark(st, ctx, entry->seq, ac::queue_status::skip, "the context is stopped");
          ac::jobs::forget(st, ctx, entry->seq);
          if (entry->event != ac::event::terminate)
            settle_stopped_apply(st, h.status_context.empty() ? ctx : h.status_context);
        });
        continue;
      }
      if (h.pending_terminate && entry->event != ac::event::terminate) {
        st.write([&] {
          ac::mark(st, ctx, entry->seq, ac::queue_status::skip, "a terminate is pending");
          ac::jobs::forget(st, ctx, entry->seq);
        });
        continue;
      }
      bool valid = resumed || std::find(t.sources.begin(), t.sources.end(), h.status) != t.sources.end();
      if (!valid) {
        st.write([&] {
          if (!(entry->event == ac::event::terminate && h.status == ac::status::terminated))
            ac::set_status(st, ctx, t.error);
          ac::mark(st, ctx, entry->seq, ac::queue_status::skip,
                   entry->event + " is not valid in state " + h.status);
        });
        continue;
      }
      // A staged event's stage that ended waits for its owner to open the next.
      const std::optional<Stage> stage = stage_for(h, *entry);
      const bool staged = stage && !stage->final;
      if (staged && stage->ended && resumed) {
        result.end = DriveEnd::stage;
        result.status = h.status;
        release(st, ctx);
        return result;
      }
      st.write([&] {
        ac::set_desired(st, ctx, t.desired);
        ac::set_status(st, ctx, t.current);
        if (entry->event == ac::event::terminate) ac::set_pending_terminate(st, ctx, false);
      });

      EventWork ew;
      try {
        ew = event_work(st, ctx, *entry);
      } catch (const Error& e) {
        // The other context of an update is gone: this event can never run.
        st.write([&] {
          ac::set_status(st, ctx, t.error);
          ac::mark(st, ctx, entry->seq, ac::queue_status::error, e.message());
          ac::jobs::forget(st, ctx, entry->seq);
        });
        continue;
      }
      const ac::AppContext& c = ew.context;
      const Work& work = ew.work;
      const std::string& status_ctx = ew.status_ctx;
      const std::string event = entry->event;
      const bool is_terminate = event == ac::event::terminate;
      if (event == ac::event::read) {
        if (!read_back(st, c, status_ctx, options)) {
          result.end = DriveEnd::interrupted;
          result.status = t.current;
          release(st, ctx);
          return result;
        }
        result.failures.clear();
        st.write([&] {
          ac::set_status(st, ctx, t.desired);
          ac::mark(st, ctx, entry->seq, ac::queue_status::done);
        });
        continue;
      }

      Hooks hooks;
      hooks.flush = [&](std::vector<Update>&& batch) { record_updates(st, status_ctx, batch); };
      auto last_beat = steady_clock::now();
      hooks.stop_requested = [&] {
        if (steady_clock::now() - last_beat > seconds(2)) {
          last_beat = steady_clock::now();
          st.write([&] { write_lease(st, ctx); });
        }
        ac::Header now = ac::header(st, ctx);
        return now.stop || (now.pending_terminate && !is_terminate);
      };
      hooks.progress = [&](const Progress& p) {
        if (options.progress) options.progress(ctx, event, p);
      };
      // On a database machines share, the jobs are rows any delivery
      // worker claims (worker.hpp); this process is one of those workers
      // while it drives the event, so one machine alone still finishes.
      std::unique_ptr<JobThread> local;
      if (ac::jobs::available(st)) {
        const int64_t seq = entry->seq;
        hooks.dispatch.offer = [&st, &ctx, &work, seq](const std::vector<size_t>& indices) {
          std::vector<ac::jobs::Offer> offers;
          for (size_t i : indices)
            offers.push_back({static_cast<int64_t>(i), work.jobs[i].app, work.jobs[i].cluster,
                              static_cast<int64_t>(work.jobs[i].steps.size())});
          ac::jobs::offer(st, ctx, seq, worker_id(), offers);
        };
        hooks.dispatch.collect = [&st, &ctx, seq] {
          std::vector<RemoteEnd> out;
          for (auto& e : ac::jobs::collect(st, ctx, seq, worker_id()))
            out.push_back({static_cast<size_t>(e.job), e.ok, std::move(e.message), static_cast<size_t>(e.steps)});
          return out;
        };
        local = std::make_unique<JobThread>(st, ctx, options.factory, options.engine);
      }
      Result r = run(work, options.factory, options.engine, hooks);
      if (local) local->finish();
      result.failures = r.failures;
      if (r.outcome == Outcome::interrupted) {
        result.end = DriveEnd::interrupted;
        result.status = t.current;
        release(st, ctx);
        return result;
      }
      if (staged && r.outcome != Outcome::stopped) {
        st.write([&] {
          ac::jobs::forget(st, ctx, entry->seq);
          Stage ended = *stage;
          ended.ended = true;
          ac::set_meta(st, ctx, k_stage_meta, stage_text(ended));
        });
        result.end = DriveEnd::stage;
        result.status = t.current;
        release(st, ctx);
        return result;
      }
      st.write([&] {
        ac::jobs::forget(st, ctx, entry->seq);
        if (r.outcome == Outcome::succeeded) {
          ac::set_status(st, ctx, t.desired);
          ac::mark(st, ctx, entry->seq, ac::queue_status::done);
          if (event == ac::event::update) finish_update_delete(st, entry->ucid, ctx);
        } else {
          ac::set_status(st, ctx, t.error);
          if (r.outcome == Outcome::stopped && !is_terminate) settle_stopped_apply(st, status_ctx);
          std::string why = r.outcome == Outcome::stopped
                                ? (ac::header(st, ctx).stop ? "stopped" : "cancelled by a terminate")
                                : first_failures(r.failures);
          ac::mark(st, ctx, entry->seq, ac::queue_status::error, why);
        }
      });
    }
  } catch (...) {
    release(st, ctx);
    throw;
  }
  release(st, ctx);
  result.status = ac::header(st, ctx).status;
  return result;
}

}  // namespace emco::sync
