#include "core/sync/engine.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string_view>
#include <thread>
#include <unordered_map>

namespace emco::sync {

using namespace std::chrono;

const char* status_name(ResourceStatus s) {
  switch (s) {
    case ResourceStatus::pending: return "Pending";
    case ResourceStatus::applied: return "Applied";
    case ResourceStatus::failed: return "Failed";
    case ResourceStatus::retrying: return "Retrying";
    case ResourceStatus::deleted: return "Deleted";
    case ResourceStatus::committed: return "Committed";
    case ResourceStatus::skipped: return "Skipped";
    case ResourceStatus::absent: return "Absent";
  }
  return "Pending";
}

const char* connectivity_name(Connectivity c) {
  switch (c) {
    case Connectivity::unknown: return "Unknown";
    case Connectivity::available: return "Available";
    case Connectivity::retrying: return "Retrying";
  }
  return "Unknown";
}

ResourceStatus parse_status(const std::string& text) {
  for (auto s : {ResourceStatus::applied, ResourceStatus::failed, ResourceStatus::retrying, ResourceStatus::deleted,
                 ResourceStatus::committed, ResourceStatus::skipped, ResourceStatus::absent})
    if (text == status_name(s)) return s;
  return ResourceStatus::pending;
}

Connectivity parse_connectivity(const std::string& text) {
  for (auto c : {Connectivity::available, Connectivity::retrying})
    if (text == connectivity_name(c)) return c;
  return Connectivity::unknown;
}

namespace {

int64_t now_ms() { return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count(); }

enum class JobEnd { ok, failed, cancelled };

// State shared by the calling thread and the workers.
class Runner {
public:
  Runner(const Work& work, const TargetFactory& factory, const Options& options)
      : m_work(work), m_factory(factory), m_options(options) {
    number_clusters();
  }

  Result run(const Hooks& hooks);

private:
  struct AppState {
    enum Phase { waiting, running, succeeded, failed } phase = waiting;
    std::vector<size_t> jobs;
    size_t finished = 0;
    bool any_failed = false;
    std::string failure;
    steady_clock::time_point done_at{};
    bool readiness_started = false;
    std::optional<steady_clock::time_point> ready_at;
  };

  // ---- cancellable waiting ----
  bool cancelled() const { return m_cancel.load(); }
  // Sleeps up to `d`; false when the run was cancelled meanwhile.
  bool sleep_for(milliseconds d) {
    std::unique_lock lock(m_wait_mutex);
    m_wait_cv.wait_for(lock, d, [&] { return m_cancel.load(); });
    return !m_cancel.load();
  }
  void cancel() {
    {
      std::lock_guard lock(m_wait_mutex);
      m_cancel = true;
    }
    m_wait_cv.notify_all();
    m_task_cv.notify_all();
  }

  // ---- updates (any thread) ----
  void emit(Update u) {
    u.time_ms = now_ms();
    std::lock_guard lock(m_update_mutex);
    m_updates.push_back(std::move(u));
  }
  void emit_resource(const Job& j, const Step& s, ResourceStatus st, std::string message = {}) {
    if (!s.record) return;
    Update u;
    u.app = j.app;
    u.cluster = j.cluster;
    u.resource = s.resource;
    u.status = st;
    u.message = std::move(message);
    emit(std::move(u));
  }
  // Steps from `from` on were not attempted because step `failed` failed.
  void skip_rest(const Job& j, size_t from, const Step& failed) {
    for (size_t k = from; k < j.steps.size(); ++k)
      emit_resource(j, j.steps[k], ResourceStatus::skipped, "not attempted: '" + failed.resource + "' failed before it");
  }
  void emit_connectivity(const Job& j, Connectivity c) {
    Update u;
    u.connectivity = true;
    u.app = j.app;
    u.cluster = j.cluster;
    u.conn = c;
    emit(std::move(u));
  }

  // Numbers the clusters of the run's jobs 0..n-1 (their slots), once,
  // on the calling thread: the workers then find a job's target by index.
  // Hashing a cluster's name per job into a map of every cluster (a million
  // lookups in 100,000 entries, each a cache miss or more) grew faster than
  // the fleet. Jobs come app by app with each app's clusters in the same
  // order, so the slot after the previous job's is tried first: one name
  // compared instead of one hashed and looked up.
  void number_clusters() {
    const auto& jobs = m_work.jobs;
    m_job_slot.resize(jobs.size());
    std::vector<std::string_view> names;  // by slot
    std::unordered_map<std::string_view, uint32_t> slot_of;
    uint32_t guess = 0;
    for (size_t ji = 0; ji < jobs.size(); ++ji) {
      const std::string& cluster = jobs[ji].cluster;
      uint32_t slot = guess;
      if (slot >= names.size() || names[slot] != cluster) {
        auto [it, added] = slot_of.try_emplace(cluster, static_cast<uint32_t>(names.size()));
        if (added) names.push_back(cluster);
        slot = it->second;
      }
      m_job_slot[ji] = slot;
      guess = slot + 1;
    }
    m_slot_target = std::make_unique<std::atomic<Target*>[]>(names.size());
    m_slot_owner.resize(names.size());
  }

  // The target of job `ji`'s cluster, made on first use. Lookups take no
  // lock (a million per 100,000-cluster run, from every worker); the
  // factory is called by one thread at a time.
  Target& target_for(size_t ji) {
    const uint32_t slot = m_job_slot[ji];
    if (Target* made = m_slot_target[slot].load(std::memory_order_acquire)) return *made;
    std::lock_guard lock(m_factory_mutex);
    if (Target* made = m_slot_target[slot].load(std::memory_order_relaxed)) return *made;  // made meanwhile
    m_slot_owner[slot] = m_factory(m_work.jobs[ji].cluster, m_work.ns);
    Target* made = m_slot_owner[slot].get();
    m_slot_target[slot].store(made, std::memory_order_release);
    return *made;
  }

  milliseconds jitter(milliseconds d) {
    // A small engine (as a thread_local, mt19937's 5 KB were cleared at every process start
    // and thread creation); a jitter needs no better.
    thread_local std::minstd_rand rng(std::random_device{}());
    std::uniform_real_distribution<double> dist(0.8, 1.2);
    return milliseconds(static_cast<int64_t>(static_cast<double>(d.count()) * dist(rng)));
  }

  // Runs one step; false when a removal found nothing to delete.
  bool execute(Target& t, const Step& s) {
    switch (s.action) {
      case StepAction::apply: t.apply(s.manifest.str(), false); return true;
      case StepAction::create: t.apply(s.manifest.str(), true); return true;
      case StepAction::apply_wait: {
        t.apply(s.manifest.str(), false);
        auto until = steady_clock::now() + m_options.hook_timeout;
        for (;;) {
          auto st = t.state(s.manifest.str());
          if (st.ready) return true;
          if (steady_clock::now() >= until)
            throw TargetError(false, false, "'" + s.resource + "' did not become ready within " +
                                                std::to_string(duration_cast<seconds>(m_options.hook_timeout).count()) +
                                                "s" + (st.reason.empty() ? "" : ": " + st.reason));
          if (!sleep_for(m_options.ready_poll)) return true;
        }
      }
      case StepAction::remove: return t.remove(s.manifest.str());
      case StepAction::remove_quiet:
        try {
          return t.remove(s.manifest.str());
        } catch (const TargetError&) {
          // Cleanup of hooks and CRDs ignores every cluster failure (rsync does too).
        }
        return true;
    }
    return true;
  }

  // Whether job `ji` may run in another process (Hooks::dispatch): its
  // cluster's Target does not batch. A cluster the factory refuses stays
  // here, where run_job fails it.
  bool runs_elsewhere(size_t ji) {
    try {
      return target_for(ji).batch() == nullptr;
    } catch (const Error&) {
      return false;
    }
  }
  // Runs job `ji` (any thread): stages it when its cluster's target
  // batches, else delivers it; its end reaches the calling thread.
  void start_job(size_t ji);
  JobEnd run_job(const Job& j, Target& target, std::string& failure);
  JobEnd stage_job(size_t job_index, Batch& batch, std::string& failure);
  // Commits every batch (calling thread); false when the run was cancelled
  // meanwhile (stop, interrupt, deadline: `why` says which).
  bool commit_batches(const Hooks& hooks, const std::function<void()>& flush, Result& result, size_t& done,
                      size_t& failed, Outcome& why);
  void run_readiness(size_t app_index);

  // ---- the pool ----
  void submit(std::function<void()> task) {
    {
      std::lock_guard lock(m_task_mutex);
      m_tasks.push_back(std::move(task));
    }
    m_task_cv.notify_one();
  }
  void worker_loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(m_task_mutex);
        m_task_cv.wait(lock, [&] { return m_closing || m_cancel.load() || !m_tasks.empty(); });
        if (m_cancel.load() || (m_closing && m_tasks.empty())) return;
        task = std::move(m_tasks.front());
        m_tasks.pop_front();
      }
      try {
        task();
      } catch (...) {
        // Only a target's expected errors are caught where targets are
        // called; anything else is a bug. It is handed to the calling
        // thread, which stops the run and rethrows it.
        {
          std::lock_guard lock(m_done_mutex);
          if (!m_bug) m_bug = std::current_exception();
          m_events = true;
        }
        cancel();
        m_done_cv.notify_all();
        return;
      }
    }
  }
  // The jobs of one app that run in this process, taken in turn by the
  // pool's threads.
  struct JobCursor {
    std::vector<size_t> jobs;
    std::atomic<size_t> next{0};
  };
  using JobEnds = std::vector<std::pair<size_t, std::pair<JobEnd, std::string>>>;
  // Hands jobs' ends to the calling thread, waking it only when it has
  // taken every earlier end: it drains them all at once, and a wake-up per
  // job (a million when staging a GitOps fleet) cost a context switch each.
  void report_job_ends(JobEnds ends) {
    bool first;
    {
      std::lock_guard lock(m_done_mutex);
      first = m_job_ends.empty();
      m_job_ends.insert(m_job_ends.end(), std::make_move_iterator(ends.begin()), std::make_move_iterator(ends.end()));
      m_events = true;
    }
    if (first) m_done_cv.notify_all();
  }

  // Jobs for batching targets are staged by one thread at a time: staging
  // is work in memory that the batch serializes anyway, and with more
  // threads than cores taking the batch's lock per step, they mostly queued
  // for it (100,000 GitOps clusters: 60% of the run's context switches).
  // A thread queues the job and stages the queue unless another thread is
  // doing so; that one looks at the queue again after it lets go.
  void stage_later(size_t ji, Batch& batch) {
    {
      std::lock_guard lock(m_stage_queue_mutex);
      m_stage_queue.push_back({ji, &batch});
    }
    for (;;) {
      std::unique_lock turn(m_stage_turn, std::try_to_lock);
      if (!turn.owns_lock()) return;
      for (;;) {
        std::vector<std::pair<size_t, Batch*>> queued;
        {
          std::lock_guard lock(m_stage_queue_mutex);
          queued.swap(m_stage_queue);
        }
        if (queued.empty()) break;
        JobEnds ends;
        ends.reserve(queued.size());
        for (const auto& [job, to] : queued) {
          std::string failure;
          JobEnd end = stage_job(job, *to, failure);
          ends.push_back({job, {end, std::move(failure)}});
        }
        report_job_ends(std::move(ends));
      }
      turn.unlock();
      std::lock_guard lock(m_stage_queue_mutex);
      if (m_stage_queue.empty()) return;
    }
  }

  void notify_main() {
    {
      std::lock_guard lock(m_done_mutex);
      m_events = true;
    }
    m_done_cv.notify_all();
  }

  const Work& m_work;
  const TargetFactory& m_factory;
  const Options& m_options;

  std::atomic<bool> m_cancel{false};
  std::mutex m_wait_mutex;
  std::condition_variable m_wait_cv;

  std::mutex m_update_mutex;
  std::vector<Update> m_updates;

  // Clusters by slot (number_clusters): a job's slot, a slot's target and
  // owner. m_slot_owner is written under m_factory_mutex only;
  // m_slot_target publishes it.
  std::vector<uint32_t> m_job_slot;
  std::unique_ptr<std::atomic<Target*>[]> m_slot_target;
  std::vector<std::shared_ptr<Target>> m_slot_owner;
  std::mutex m_factory_mutex;

  std::mutex m_task_mutex;
  std::condition_variable m_task_cv;
  std::deque<std::function<void()>> m_tasks;
  bool m_closing = false;

  // Completions reported to the calling thread.
  std::mutex m_done_mutex;
  std::condition_variable m_done_cv;
  bool m_events = false;
  std::exception_ptr m_bug;  // the first unexpected exception of a worker
  JobEnds m_job_ends;  // job index -> end
  std::vector<size_t> m_ready_apps;

  std::mutex m_stage_queue_mutex;
  std::vector<std::pair<size_t, Batch*>> m_stage_queue;  // (job, its batch), to stage
  std::mutex m_stage_turn;                               // held by the thread staging
  // Steps staged on batching targets, per batch in order of first use.
  // Written by the thread holding m_stage_turn (stage_job); read by the
  // calling thread once every job has ended (their ends, reported after
  // staging under m_done_mutex, order the two).
  struct StagedStep {
    size_t job;
    size_t step;
  };
  std::vector<Batch*> m_batch_order;
  std::map<Batch*, std::vector<StagedStep>> m_staged;

  std::atomic<size_t> m_steps_done{0};
  std::atomic<size_t> m_retrying{0};
  std::vector<AppState> m_apps;
};

JobEnd Runner::stage_job(size_t job_index, Batch& batch, std::string& failure) {
  const Job& j = m_work.jobs[job_index];
  auto& staged = m_staged[&batch];
  for (size_t i = 0; i < j.steps.size(); ++i) {
    if (cancelled()) return JobEnd::cancelled;
    const Step& s = j.steps[i];
    bool removal = s.action == StepAction::remove || s.action == StepAction::remove_quiet;
    try {
      batch.stage({j.app, j.cluster, s.resource, s.manifest, removal});
    } catch (const TargetError& e) {
      std::string message = e.message();
      emit_resource(j, s, ResourceStatus::failed, message);
      ++m_steps_done;
      if (s.action == StepAction::remove_quiet) continue;
      if (s.action == StepAction::remove) continue;
      skip_rest(j, i + 1, s);
      failure = message;
      return JobEnd::failed;
    }
    if (staged.empty()) m_batch_order.push_back(&batch);
    staged.push_back({job_index, i});
    ++m_steps_done;
  }
  return JobEnd::ok;
}

bool Runner::commit_batches(const Hooks& hooks, const std::function<void()>& flush, Result& result, size_t& done,
                            size_t& failed, Outcome& why) {
  // Cancellation between retries: stop flag, interrupt, deadline.
  auto should_end = [&] {
    if (hooks.stop_requested && hooks.stop_requested()) {
      why = Outcome::stopped;
      return true;
    }
    if ((m_options.interrupt && m_options.interrupt->load()) || steady_clock::now() >= m_options.deadline) {
      why = Outcome::interrupted;
      return true;
    }
    return false;
  };
  for (Batch* batch : m_batch_order) {
    const auto& staged = m_staged[batch];
    // The (app, cluster) jobs this batch covers, in job order. A job's
    // steps are staged one after another; a million jobs in a std::set
    // were a million tree nodes allocated and rebalanced.
    std::vector<size_t> jobs;
    for (const auto& s : staged)
      if (jobs.empty() || jobs.back() != s.job) jobs.push_back(s.job);
    std::sort(jobs.begin(), jobs.end());
    jobs.erase(std::unique(jobs.begin(), jobs.end()), jobs.end());
    milliseconds backoff = m_options.backoff_initial;
    int attempts = 0;
    bool retrying_shown = false;
    for (;;) {
      std::string error;
      bool transient = false;
      try {
        std::string note = batch->commit(m_options.deadline);
        // One batch can cover every resource of a fleet (a shared GitOps
        // repository: 1 million jobs and 3 million resources at 100,000
        // clusters), hence slices. Each status row stands alone: a slice
        // recorded before a crash is as true as the rest would have been.
        // A job's connectivity goes with its resources' states: a cluster's
        // status is one row, written once per slice that names it.
        size_t emitted = 0;
        std::vector<bool> shown(m_work.jobs.size(), false);
        auto show = [&](size_t ji) {
          if (shown[ji]) return;
          shown[ji] = true;
          emit_connectivity(m_work.jobs[ji], Connectivity::available);
          if (++emitted % kStatusSlice == 0) flush();
        };
        for (const auto& s : staged) {
          show(s.job);
          const Job& j = m_work.jobs[s.job];
          const Step& step = j.steps[s.step];
          bool removal = step.action == StepAction::remove || step.action == StepAction::remove_quiet;
          emit_resource(j, step, removal ? ResourceStatus::deleted : ResourceStatus::committed, note);
          if (++emitted % kStatusSlice == 0) flush();
        }
        break;
      } catch (const TargetError& e) {
        error = e.message();
        transient = e.transient();
      }
      ++attempts;
      if (transient && (m_options.max_retries < 0 || attempts <= m_options.max_retries)) {
        // Nothing is recorded for the resources: they stay as they were
        // until a commit succeeds.
        if (!retrying_shown) {
          for (size_t ji : jobs) emit_connectivity(m_work.jobs[ji], Connectivity::retrying);
          retrying_shown = true;
          if (result.failures.size() < 50) result.failures.push_back("commit not delivered yet: " + error);
        }
        flush();
        auto until = steady_clock::now() + jitter(backoff);
        while (steady_clock::now() < until) {
          if (should_end()) {
            cancel();
            return false;
          }
          auto left = duration_cast<milliseconds>(until - steady_clock::now());
          if (!sleep_for(std::max(milliseconds(1), std::min(left, m_options.poll)))) return false;
        }
        if (should_end()) {
          cancel();
          return false;
        }
        backoff = std::min(backoff * 2, m_options.backoff_max);
        continue;
      }
      if (transient) error += " (gave up after " + std::to_string(attempts) + " attempts)";
      for (const auto& s : staged) {
        const Job& j = m_work.jobs[s.job];
        emit_resource(j, j.steps[s.step], ResourceStatus::failed, error);
      }
      for (size_t ji : jobs) {
        const Job& j = m_work.jobs[ji];
        if (done > 0) --done;
        ++failed;
        if (result.failures.size() < 50) result.failures.push_back(j.app + " on " + j.cluster + ": " + error);
      }
      break;
    }
  }
  return true;
}

void Runner::start_job(size_t ji) {
  const Job& j = m_work.jobs[ji];
  std::string failure;
  Target* target;
  try {
    target = &target_for(ji);
  } catch (const Error& e) {
    // A factory reports a cluster it cannot reach by contract (no
    // kubeconfig, an unknown provider) as an Error: the job fails.
    failure = e.what();
    for (const auto& s : j.steps) emit_resource(j, s, ResourceStatus::failed, failure);
    report_job_ends({{ji, {JobEnd::failed, std::move(failure)}}});
    return;
  }
  if (Batch* batch = target->batch()) {
    stage_later(ji, *batch);
    return;
  }
  JobEnd end = run_job(j, *target, failure);
  report_job_ends({{ji, {end, std::move(failure)}}});
}

JobEnd Runner::run_job(const Job& j, Target& target, std::string& failure) {
  bool reachable = false;
  Connectivity reported = Connectivity::unknown;
  int attempts = 0;
  milliseconds backoff = m_options.backoff_initial;
  for (size_t i = 0; i < j.steps.size();) {
    if (cancelled()) return JobEnd::cancelled;
    const Step& s = j.steps[i];
    try {
      if (!reachable) {
        target.probe();
        reachable = true;
        if (reported != Connectivity::available) emit_connectivity(j, reported = Connectivity::available);
      }
      const bool present = execute(target, s);
      if (cancelled()) return JobEnd::cancelled;  // a hook wait was cut short
      bool removal = s.action == StepAction::remove || s.action == StepAction::remove_quiet;
      emit_resource(j, s, !removal ? ResourceStatus::applied : present ? ResourceStatus::deleted : ResourceStatus::absent);
      ++m_steps_done;
      attempts = 0;
      backoff = m_options.backoff_initial;
      ++i;
    } catch (const TargetError& e) {
      std::string message = e.message();
      if (e.transient()) {
        if (e.unreachable()) {
          reachable = false;
          if (reported != Connectivity::retrying) emit_connectivity(j, reported = Connectivity::retrying);
        }
        ++attempts;
        if (m_options.max_retries >= 0 && attempts > m_options.max_retries) {
          emit_resource(j, s, ResourceStatus::failed, message + " (gave up after " + std::to_string(attempts) + " attempts)");
          skip_rest(j, i + 1, s);
          failure = message;
          return JobEnd::failed;
        }
        emit_resource(j, s, ResourceStatus::retrying, message);
        ++m_retrying;
        bool go_on = sleep_for(jitter(backoff));
        --m_retrying;
        if (!go_on) return JobEnd::cancelled;
        backoff = std::min(backoff * 2, m_options.backoff_max);
        continue;
      }
      emit_resource(j, s, ResourceStatus::failed, message);
      ++m_steps_done;
      if (s.action == StepAction::remove) {
        // A failed delete only marks that resource (rsync's terminate rule).
        ++i;
        continue;
      }
      skip_rest(j, i + 1, s);
      failure = message;
      return JobEnd::failed;
    }
  }
  return JobEnd::ok;
}

void Runner::run_readiness(size_t app_index) {
  // Waits until every recorded applied object of the app is ready on its cluster.
  for (size_t ji : m_apps[app_index].jobs) {
    const Job& j = m_work.jobs[ji];
    Target* target;
    try {
      target = &target_for(ji);
    } catch (const Error&) {
      continue;  // the job itself failed on this already
    }
    if (target->batch()) continue;  // delivered by the remote's consumer: nothing to wait for here
    for (const auto& s : j.steps) {
      if (!s.record || s.action == StepAction::remove || s.action == StepAction::remove_quiet) continue;
      for (;;) {
        if (cancelled()) return;
        try {
          if (target->state(s.manifest.str()).ready) break;
        } catch (const TargetError&) {
          // Unreachable for now: keep polling until the run ends.
        }
        if (!sleep_for(m_options.ready_poll)) return;
      }
    }
  }
  {
    std::lock_guard lock(m_done_mutex);
    m_ready_apps.push_back(app_index);
    m_events = true;
  }
  m_done_cv.notify_all();
}

Result Runner::run(const Hooks& hooks) {
  auto start = steady_clock::now();
  std::map<std::string, size_t> app_index;
  for (size_t i = 0; i < m_work.apps.size(); ++i) app_index[m_work.apps[i].name] = i;
  m_apps.resize(m_work.apps.size());
  Result result;
  size_t total_steps = 0;
  for (size_t ji = 0; ji < m_work.jobs.size(); ++ji) {
    auto it = app_index.find(m_work.jobs[ji].schedule_app());
    if (it == app_index.end()) continue;  // a job of an unknown app: nothing schedules it
    m_apps[it->second].jobs.push_back(ji);
    total_steps += m_work.jobs[ji].steps.size();
  }
  size_t total_jobs = 0;
  for (const auto& a : m_apps) total_jobs += a.jobs.size();

  size_t nthreads = static_cast<size_t>(std::max(1, m_options.parallel));
  nthreads = std::min(nthreads, std::max<size_t>(1, total_jobs));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < nthreads; ++i) threads.emplace_back([this] { worker_loop(); });

  size_t done = 0, failed = 0;
  Outcome cancel_outcome = Outcome::succeeded;

  auto progress = [&] {
    Progress p;
    p.jobs = total_jobs;
    p.done = done;
    p.failed = failed;
    p.retrying = m_retrying.load();
    p.steps = total_steps;
    p.steps_done = m_steps_done.load();
    p.elapsed = duration_cast<milliseconds>(steady_clock::now() - start);
    return p;
  };
  auto flush = [&] {
    std::vector<Update> batch;
    {
      std::lock_guard lock(m_update_mutex);
      batch.swap(m_updates);
    }
    if (!batch.empty() && hooks.flush) hooks.flush(std::move(batch));
  };
  // Jobs that ended since the last flush, for Hooks::job_ended.
  std::vector<RemoteEnd> ended;
  auto report_ended = [&] {
    if (hooks.job_ended)
      for (const auto& e : ended) hooks.job_ended(e.job, e.ok, e.failure);
    ended.clear();
  };
  auto finish_app = [&](size_t ai) {
    auto& a = m_apps[ai];
    a.phase = a.any_failed ? AppState::failed : AppState::succeeded;
    a.done_at = steady_clock::now();
  };
  auto needs_ready = [&](size_t ai) {
    for (const auto& other : m_work.apps)
      for (const auto& d : other.depends_on)
        if (d.ready && d.app == m_work.apps[ai].name) return true;
    return false;
  };

  // A hook that throws (the database) must not leave workers running: stop
  // them, join, and let the error travel up.
  auto wind_down = [&] {
    cancel();
    {
      std::lock_guard lock(m_task_mutex);
      m_closing = true;
    }
    m_task_cv.notify_all();
    for (auto& t : threads)
      if (t.joinable()) t.join();
  };
  try {
  for (;;) {
    // Start every waiting app whose dependencies allow it.
    bool changed = true;
    while (changed && !cancelled()) {
      changed = false;
      for (size_t ai = 0; ai < m_apps.size(); ++ai) {
        auto& a = m_apps[ai];
        if (a.phase != AppState::waiting) continue;
        bool eligible = true;
        std::string dep_failure;
        for (const auto& d : m_work.apps[ai].depends_on) {
          auto it = app_index.find(d.app);
          if (it == app_index.end() || it->second == ai) continue;  // the planner validates names
          const auto& da = m_apps[it->second];
          if (da.phase == AppState::failed) {
            dep_failure = "dependency '" + d.app + "' failed";
            break;
          }
          if (da.phase != AppState::succeeded) {
            eligible = false;
            continue;
          }
          auto since = da.done_at;
          if (d.ready) {
            if (!da.ready_at) {
              eligible = false;
              continue;
            }
            since = *da.ready_at;
          }
          if (steady_clock::now() < since + seconds(d.wait_s)) eligible = false;
        }
        if (!dep_failure.empty()) {
          a.phase = AppState::failed;
          a.done_at = steady_clock::now();
          for (size_t ji : a.jobs) {
            const Job& j = m_work.jobs[ji];
            for (const auto& s : j.steps) emit_resource(j, s, ResourceStatus::skipped, "not attempted: " + dep_failure);
            ++failed;
            if (result.failures.size() < 50)
              result.failures.push_back(j.app + " on " + j.cluster + ": " + dep_failure);
          }
          changed = true;
          continue;
        }
        if (!eligible) continue;
        a.phase = AppState::running;
        changed = true;
        if (a.jobs.empty()) {
          finish_app(ai);
          continue;
        }
        std::vector<size_t> offered;
        auto here = std::make_shared<JobCursor>();
        for (size_t ji : a.jobs) {
          if (hooks.dispatch.offer && runs_elsewhere(ji)) offered.push_back(ji);
          else here->jobs.push_back(ji);
        }
        // One task per thread, each taking the app's next job until none is
        // left: as parallel as a task per job, without a pool round trip
        // (lock, allocation, wake-up) per job. A GitOps fleet stages a
        // million jobs in memory, and at 100,000 clusters the threads spent
        // more time queueing for the pool's locks than staging.
        for (size_t t = 0, n = std::min(nthreads, here->jobs.size()); t < n; ++t)
          submit([this, here] {
            for (size_t k; !cancelled() && (k = here->next++) < here->jobs.size();) start_job(here->jobs[k]);
          });
        if (!offered.empty()) hooks.dispatch.offer(offered);
      }
      // Apps that finished at once (no jobs) may unblock others; readiness
      // checks start for finished apps somebody waits on.
      for (size_t ai = 0; ai < m_apps.size(); ++ai) {
        auto& a = m_apps[ai];
        if (a.phase == AppState::succeeded && !a.readiness_started && needs_ready(ai)) {
          a.readiness_started = true;
          if (a.jobs.empty()) a.ready_at = steady_clock::now();
          else submit([this, ai] { run_readiness(ai); });
        }
      }
    }

    bool all_finished = std::all_of(m_apps.begin(), m_apps.end(), [](const AppState& a) {
      return a.phase == AppState::succeeded || a.phase == AppState::failed;
    });
    if (all_finished && !cancelled()) {
      flush();
      if (!commit_batches(hooks, flush, result, done, failed, cancel_outcome)) break;
    }
    if (all_finished || cancelled()) break;

    // Nothing running and nothing startable: a dependency cycle.
    bool any_running = std::any_of(m_apps.begin(), m_apps.end(), [](const AppState& a) { return a.phase == AppState::running; });
    bool any_timed = false;
    for (size_t ai = 0; ai < m_apps.size(); ++ai)
      if (m_apps[ai].phase == AppState::succeeded && needs_ready(ai) && !m_apps[ai].ready_at) any_running = true;
    // A waiting app whose dependencies are all satisfied but for their `wait`.
    for (size_t ai = 0; ai < m_apps.size(); ++ai) {
      if (m_apps[ai].phase != AppState::waiting) continue;
      bool only_time = true;
      for (const auto& d : m_work.apps[ai].depends_on) {
        auto it = app_index.find(d.app);
        if (it == app_index.end() || it->second == ai) continue;
        const auto& da = m_apps[it->second];
        if (da.phase != AppState::succeeded || (d.ready && !da.ready_at)) only_time = false;
      }
      any_timed = any_timed || only_time;
    }
    if (!any_running && !any_timed) {
      for (size_t ai = 0; ai < m_apps.size(); ++ai) {
        auto& a = m_apps[ai];
        if (a.phase != AppState::waiting) continue;
        a.phase = AppState::failed;
        for (size_t ji : a.jobs) {
          ++failed;
          if (result.failures.size() < 50)
            result.failures.push_back(m_work.jobs[ji].app + " on " + m_work.jobs[ji].cluster +
                                      ": its dependencies form a cycle");
        }
      }
      continue;
    }

    {
      std::unique_lock lock(m_done_mutex);
      m_done_cv.wait_for(lock, m_options.poll, [&] { return m_events; });
      m_events = false;
      if (m_bug) std::rethrow_exception(m_bug);
    }
    if (hooks.dispatch.collect)
      for (auto& e : hooks.dispatch.collect()) {
        m_steps_done += e.steps;
        std::lock_guard lock(m_done_mutex);
        m_job_ends.push_back({e.job, {e.ok ? JobEnd::ok : JobEnd::failed, std::move(e.failure)}});
      }
    {
      std::lock_guard lock(m_done_mutex);
      for (auto& [ji, end] : m_job_ends) {
        const Job& j = m_work.jobs[ji];
        size_t ai = app_index[j.schedule_app()];
        auto& a = m_apps[ai];
        ++a.finished;
        if (end.first == JobEnd::ok) {
          ++done;
        } else if (end.first == JobEnd::failed) {
          ++failed;
          a.any_failed = true;
          if (result.failures.size() < 50) result.failures.push_back(j.app + " on " + j.cluster + ": " + end.second);
        }
        if (a.finished == a.jobs.size() && end.first != JobEnd::cancelled) finish_app(ai);
        if (end.first != JobEnd::cancelled) ended.push_back({ji, end.first == JobEnd::ok, end.second});
      }
      m_job_ends.clear();
      for (size_t ai : m_ready_apps) m_apps[ai].ready_at = steady_clock::now();
      m_ready_apps.clear();
    }
    flush();
    report_ended();
    if (hooks.progress) hooks.progress(progress());
    if (hooks.stop_requested && hooks.stop_requested()) {
      cancel_outcome = Outcome::stopped;
      cancel();
    } else if ((m_options.interrupt && m_options.interrupt->load()) || steady_clock::now() >= m_options.deadline) {
      cancel_outcome = Outcome::interrupted;
      cancel();
    }
  }
  } catch (...) {
    wind_down();
    throw;
  }

  {
    std::lock_guard lock(m_task_mutex);
    m_closing = true;
  }
  m_task_cv.notify_all();
  for (auto& t : threads) t.join();
  if (m_bug) std::rethrow_exception(m_bug);  // a worker's bug ended the run early
  // Jobs that ended while the pool wound down.
  for (auto& [ji, end] : m_job_ends) {
    if (end.first == JobEnd::ok) ++done;
    else if (end.first == JobEnd::failed) ++failed;
    if (end.first != JobEnd::cancelled) ended.push_back({ji, end.first == JobEnd::ok, end.second});
  }
  flush();
  report_ended();
  result.progress = progress();
  if (hooks.progress) hooks.progress(result.progress);
  if (cancelled()) result.outcome = cancel_outcome;
  else result.outcome = failed > 0 ? Outcome::failed : Outcome::succeeded;
  return result;
}

}  // namespace

Result run(const Work& work, const TargetFactory& factory, const Options& options, const Hooks& hooks) {
  Runner runner(work, factory, options);
  return runner.run(hooks);
}

}  // namespace emco::sync
