#include "core/appcontext/job_rows.hpp"

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "core/store/database.hpp"

namespace emco::appcontext::jobs {

namespace {

// The server's clock in ms: now() is the start of the statement's
// transaction, one value for the whole statement.
#define EMCO_NOW_MS "CAST(EXTRACT(EPOCH FROM now()) * 1000 AS BIGINT)"

// Claimable: ready, or running under a lease that expired; never a job of a
// stopped context.
#define EMCO_CLAIMABLE                                                                                \
  "FROM sync_jobs j JOIN ac_contexts c ON c.id = j.ctx "                                              \
  "WHERE (j.state = 'ready' OR (j.state = 'running' AND j.lease_until < " EMCO_NOW_MS ")) "           \
  "AND c.stop_flag = 0 AND (CAST(? AS TEXT) = '' OR j.ctx = ?) "

}  // namespace

bool available(store::Store& st) { return st.database().shared(); }

int64_t clock_ms(store::Store& st) {
  if (!available(st))
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  auto& s = st.database().statement("SELECT " EMCO_NOW_MS);
  s.step();
  const int64_t v = s.int64(0);
  s.reset();
  return v;
}

void offer(store::Store& st, const std::string& ctx, int64_t seq, const std::string& coordinator,
           const std::vector<Offer>& jobs) {
  if (jobs.empty()) return;
  // One statement for the lot, whatever their number: the jobs travel as
  // one JSON array.
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& j : jobs) rows.push_back({{"job", j.job}, {"app", j.app}, {"cluster", j.cluster}, {"steps", j.steps}});
  auto& s = st.database().statement(
      "INSERT INTO sync_jobs(ctx, seq, job, app, cluster, steps, coordinator) "
      "SELECT ?, ?, r.job, r.app, r.cluster, r.steps, ? "
      "FROM json_to_recordset(CAST(? AS JSON)) AS r(job BIGINT, app TEXT, cluster TEXT, steps BIGINT) "
      "ON CONFLICT(ctx, seq, job) DO UPDATE SET coordinator = excluded.coordinator, collected = 0, "
      "state = CASE WHEN sync_jobs.state = 'failed' THEN 'ready' ELSE sync_jobs.state END");
  s.bind(1, ctx);
  s.bind(2, seq);
  s.bind(3, coordinator);
  s.bind(4, rows.dump());
  s.exec();
}

std::vector<Ended> collect(store::Store& st, const std::string& ctx, int64_t seq, const std::string& coordinator) {
  std::vector<Ended> out;
  auto& s = st.database().statement(
      "UPDATE sync_jobs SET collected = 1 WHERE ctx = ? AND seq = ? AND coordinator = ? AND collected = 0 "
      "AND state IN ('ok', 'failed') RETURNING job, state, message, steps");
  s.bind(1, ctx);
  s.bind(2, seq);
  s.bind(3, coordinator);
  while (s.step()) out.push_back({s.int64(0), s.text(1) == "ok", s.str(2), s.int64(3)});
  s.reset();
  return out;
}

void forget(store::Store& st, const std::string& ctx, int64_t seq) {
  auto& s = st.database().statement("DELETE FROM sync_jobs WHERE ctx = ? AND seq = ?");
  s.bind(1, ctx);
  s.bind(2, seq);
  s.exec();
}

std::vector<Claimed> claim(store::Store& st, const std::string& worker, int64_t lease_ms, size_t limit,
                           const std::string& only_ctx) {
  std::vector<Claimed> out;
  // The subquery locks the rows it picks and skips those another worker's
  // claim has locked: two workers never claim one row, and neither waits.
  auto& s = st.database().statement(
      "UPDATE sync_jobs SET state = 'running', worker = ?, lease_until = " EMCO_NOW_MS " + ?, claims = claims + 1 "
      "WHERE id IN (SELECT j.id " EMCO_CLAIMABLE "ORDER BY j.id LIMIT ? FOR UPDATE OF j SKIP LOCKED) "
      "RETURNING id, ctx, seq, job, app, cluster");
  s.bind(1, worker);
  s.bind(2, lease_ms);
  s.bind(3, only_ctx);
  s.bind(4, only_ctx);
  s.bind(5, static_cast<int64_t>(limit));
  while (s.step()) out.push_back({s.int64(0), s.str(1), s.int64(2), s.int64(3), s.str(4), s.str(5)});
  s.reset();
  std::sort(out.begin(), out.end(), [](const Claimed& a, const Claimed& b) { return a.id < b.id; });
  return out;
}

std::vector<int64_t> renew(store::Store& st, const std::string& worker, int64_t lease_ms) {
  std::vector<int64_t> out;
  auto& s = st.database().statement("UPDATE sync_jobs SET lease_until = " EMCO_NOW_MS
                                    " + ? WHERE worker = ? AND state = 'running' RETURNING id");
  s.bind(1, lease_ms);
  s.bind(2, worker);
  while (s.step()) out.push_back(s.int64(0));
  s.reset();
  return out;
}

bool finish(store::Store& st, int64_t id, const std::string& worker, bool ok, const std::string& message) {
  auto& s = st.database().statement(
      "UPDATE sync_jobs SET state = ?, message = ? WHERE id = ? AND worker = ? AND state = 'running'");
  s.bind(1, ok ? "ok" : "failed");
  s.bind(2, message);
  s.bind(3, id);
  s.bind(4, worker);
  return s.exec() > 0;
}

void release(store::Store& st, int64_t id, const std::string& worker) {
  auto& s = st.database().statement(
      "UPDATE sync_jobs SET state = 'ready', lease_until = 0 WHERE id = ? AND worker = ? AND state = 'running'");
  s.bind(1, id);
  s.bind(2, worker);
  s.exec();
}

bool claimable(store::Store& st, const std::string& only_ctx) {
  auto& s = st.database().statement("SELECT 1 " EMCO_CLAIMABLE "LIMIT 1");
  s.bind(1, only_ctx);
  s.bind(2, only_ctx);
  const bool any = s.step();
  s.reset();
  return any;
}

}  // namespace emco::appcontext::jobs
