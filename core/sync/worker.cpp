#include "core/sync/worker.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>

#include "core/appcontext/job_rows.hpp"
#include "core/sync/work.hpp"
#include "core/util/error.hpp"

namespace emco::sync {

namespace ac = emco::appcontext;
using namespace std::chrono;

const std::string& worker_host() {
  static const std::string host = [] {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return std::string("localhost");
    std::string h = buf;
    // The lease text is space-separated.
    std::replace(h.begin(), h.end(), ' ', '_');
    return h;
  }();
  return host;
}

const std::string& worker_token() {
  static const std::string token = [] {
    std::random_device rd;
    char buf[17];
    std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
    return std::string(buf);
  }();
  return token;
}

const std::string& worker_id() {
  static const std::string id = worker_host() + ":" + std::to_string(::getpid()) + ":" + worker_token();
  return id;
}

namespace {

bool interrupted(const WorkerOptions& o) {
  return (o.engine.interrupt && o.engine.interrupt->load()) || steady_clock::now() >= o.engine.deadline;
}

// What a worker keeps per event between claims: building the Work loads
// the whole context, once per worker and event.
struct Cached {
  std::string ctx;
  int64_t seq = 0;
  std::string event;
  std::shared_ptr<const EventWork> work;
  TargetFactory factory;
};

class Worker {
public:
  Worker(store::Store& st, const WorkerOptions& o) : m_st(st), m_o(o) {}

  WorkerStats run() {
    for (;;) {
      if (interrupted(m_o) || (m_o.done && m_o.done->load())) break;
      const size_t limit = static_cast<size_t>(std::max(1, m_o.engine.parallel));
      auto claimed = ac::jobs::claim(m_st, worker_id(), k_job_lease.count(), limit, m_o.only_ctx);
      if (claimed.empty()) {
        if (m_o.until_idle) break;
        std::this_thread::sleep_for(m_o.idle_poll);
        continue;
      }
      // One executor run per event; claims are oldest first, so mostly one.
      std::map<std::pair<std::string, int64_t>, std::vector<ac::jobs::Claimed>> groups;
      for (auto& c : claimed) groups[{c.ctx, c.seq}].push_back(std::move(c));
      for (auto& [key, group] : groups) run_group(group);
    }
    return m_stats;
  }

private:
  const Cached* event_of(const std::string& ctx, int64_t seq) {
    for (const auto& c : m_cache)
      if (c.ctx == ctx && c.seq == seq) return &c;
    std::optional<ac::QueueEntry> entry;
    for (auto& e : ac::queue(m_st, ctx))
      if (e.seq == seq) entry = std::move(e);
    if (!entry) return nullptr;
    Cached c{ctx, seq, entry->event, std::make_shared<const EventWork>(event_work(m_st, ctx, *entry)),
             m_o.factory(m_st, ctx)};
    // A few events at a time are plenty (one per context being delivered).
    if (m_cache.size() >= 4) m_cache.erase(m_cache.begin());
    m_cache.push_back(std::move(c));
    return &m_cache.back();
  }

  void run_group(const std::vector<ac::jobs::Claimed>& group) {
    const std::string& ctx = group.front().ctx;
    const Cached* ev = nullptr;
    std::string why;
    try {
      ev = event_of(ctx, group.front().seq);
      if (!ev) why = "its event is no longer queued";
    } catch (const Error& e) {
      why = e.message();
    }
    Work sub;
    std::vector<int64_t> rows;  // sub job index -> row id
    std::set<std::string> apps;
    for (const auto& c : group) {
      const Job* j = ev && c.job >= 0 && static_cast<size_t>(c.job) < ev->work->work.jobs.size()
                         ? &ev->work->work.jobs[static_cast<size_t>(c.job)]
                         : nullptr;
      if (!j || j->app != c.app || j->cluster != c.cluster) {
        // The coordinator builds the same Work from the same rows: a
        // mismatch is a context changed underneath, reported on the job.
        finish(c.id, false, why.empty() ? "the job does not match its context's plan" : why);
        continue;
      }
      sub.jobs.push_back(*j);
      sub.jobs.back().scheduled_with.clear();  // ordering was the coordinator's: run it now
      rows.push_back(c.id);
      apps.insert(j->app);
    }
    if (sub.jobs.empty()) return;
    sub.ns = ev->work->work.ns;
    for (const auto& a : apps) sub.apps.push_back({a, {}});

    const std::string status_ctx = ev->work->status_ctx;
    const bool is_terminate = ev->event == ac::event::terminate;
    std::vector<bool> ended(rows.size(), false);
    bool lost = false;
    Hooks hooks;
    hooks.flush = [&](std::vector<Update>&& batch) { record_updates(m_st, status_ctx, batch); };
    auto last_renew = steady_clock::now();
    hooks.stop_requested = [&] {
      if (steady_clock::now() - last_renew >= k_job_renew) {
        last_renew = steady_clock::now();
        auto held = ac::jobs::renew(m_st, worker_id(), k_job_lease.count());
        std::set<int64_t> mine(held.begin(), held.end());
        for (size_t i = 0; i < rows.size(); ++i)
          if (!ended[i] && !mine.count(rows[i])) lost = true;
        if (lost) return true;
      }
      ac::Header h = ac::header(m_st, ctx);
      return h.stop || (h.pending_terminate && !is_terminate);
    };
    hooks.job_ended = [&](size_t i, bool ok, const std::string& failure) {
      ended[i] = true;
      if (finish(rows[i], ok, failure)) return;
      ++m_stats.lost;
    };
    Options engine = m_o.engine;
    sync::run(sub, ev->factory, engine, hooks);
    // Jobs the run did not finish (stop, interrupt, a lost lease): claimable
    // again at once (a stopped context's are not claimed).
    for (size_t i = 0; i < rows.size(); ++i)
      if (!ended[i]) {
        ac::jobs::release(m_st, rows[i], worker_id());
        ++m_stats.lost;
      }
  }

  bool finish(int64_t row, bool ok, const std::string& message) {
    if (!ac::jobs::finish(m_st, row, worker_id(), ok, message)) return false;
    ++m_stats.jobs;
    if (!ok) ++m_stats.failed;
    return true;
  }

  store::Store& m_st;
  const WorkerOptions& m_o;
  std::vector<Cached> m_cache;
  WorkerStats m_stats;
};

}  // namespace

WorkerStats run_jobs(store::Store& st, const WorkerOptions& options) { return Worker(st, options).run(); }

namespace {
std::mutex g_totals_mutex;
WorkerStats g_totals;
}  // namespace

WorkerStats job_thread_totals() {
  std::lock_guard lock(g_totals_mutex);
  return g_totals;
}

JobThread::JobThread(const store::Store& st, const std::string& ctx, const TargetFactory& factory,
                     const Options& engine) {
  m_thread = std::thread([this, location = st.location(), dir = st.data_dir(), ctx, factory, engine] {
    try {
      auto own = store::Store::open_location(location, dir);
      WorkerOptions o;
      o.engine = engine;
      o.factory = [factory](store::Store&, const std::string&) { return factory; };
      o.only_ctx = ctx;
      o.done = &m_done;
      m_stats = run_jobs(*own, o);
      m_stats.round_trips = own->round_trips();
      std::lock_guard lock(g_totals_mutex);
      g_totals.jobs += m_stats.jobs;
      g_totals.failed += m_stats.failed;
      g_totals.lost += m_stats.lost;
      g_totals.round_trips += m_stats.round_trips;
    } catch (...) {
      m_error = std::current_exception();
    }
  });
}

JobThread::~JobThread() {
  m_done = true;
  if (m_thread.joinable()) m_thread.join();
}

WorkerStats JobThread::finish() {
  m_done = true;
  if (m_thread.joinable()) m_thread.join();
  if (m_error) std::rethrow_exception(m_error);
  return m_stats;
}

}  // namespace emco::sync
