// Progressive rollouts (rollout.hpp): the waves, their gates and the
// rollout's state, kept in the context's meta "rollout":
//   {"strategy", "operation", "dig", "seq", "from", "state", "message", "current",
//    "minSuccessMs", "deadlineMs", "maxFailures", "rollback",
//    "waves": [{"name", "clusters", "state", "failed", "started", "ended",
//               "readySince", "gateMs"}]}
// (times in Unix milliseconds: a wave's progress deadline holds across
// processes). Every change of it is one transaction with the stage it opens,
// so a process killed at any point leaves a rollout the next one continues.

#include "core/lifecycle/rollout.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/appcontext/job_rows.hpp"
#include "core/lifecycle/internal.hpp"
#include "core/sync/queue.hpp"
#include "core/util/error.hpp"
#include "core/util/parallel.hpp"

namespace emco::lifecycle {

using nlohmann::json;
using resource::Key;
namespace ac = emco::appcontext;
using namespace std::chrono;

namespace rollout {

size_t Amount::of(size_t total) const {
  if (value <= 0) return 0;
  if (!percent) return static_cast<size_t>(value);
  return (total * static_cast<size_t>(value) + 99) / 100;
}

std::string Amount::text() const { return std::to_string(value) + (percent ? "%" : ""); }

std::vector<Wave> plan_waves(const Strategy& s, const std::vector<std::string>& clusters,
                             const std::function<std::vector<std::string>(const std::string&)>& labels_of) {
  std::vector<Wave> base;
  const size_t n = clusters.size();
  if (!s.groups.empty()) {
    std::vector<std::vector<std::string>> labels;
    for (const auto& c : clusters) labels.push_back(labels_of(c));
    std::vector<bool> placed(n, false);
    for (const auto& g : s.groups) {
      Wave w{"group " + g, {}};
      for (size_t i = 0; i < n; ++i)
        if (!placed[i] && std::find(labels[i].begin(), labels[i].end(), g) != labels[i].end()) {
          w.clusters.push_back(clusters[i]);
          placed[i] = true;
        }
      if (!w.clusters.empty()) base.push_back(std::move(w));
    }
    Wave rest{"the other clusters", {}};
    for (size_t i = 0; i < n; ++i)
      if (!placed[i]) rest.clusters.push_back(clusters[i]);
    if (!rest.clusters.empty()) base.push_back(std::move(rest));
  } else {
    size_t size = n;
    if (s.waves > 0) size = (n + s.waves - 1) / s.waves;
    else if (s.wave_size) size = s.wave_size->of(n);
    size = std::max<size_t>(size, 1);
    for (size_t i = 0; i < n; i += size)
      base.push_back({"", std::vector<std::string>(clusters.begin() + static_cast<long>(i),
                                                   clusters.begin() + static_cast<long>(std::min(n, i + size)))});
  }
  size_t cap = std::numeric_limits<size_t>::max();
  if (s.max_concurrency) cap = std::min(cap, std::max<size_t>(1, s.max_concurrency->of(n)));
  if (s.max_unavailable) cap = std::min(cap, std::max<size_t>(1, s.max_unavailable->of(n)));
  std::vector<Wave> out;
  for (const auto& w : base) {
    const size_t parts = (w.clusters.size() - 1) / cap + 1;  // waves are never empty
    for (size_t p = 0; p < parts; ++p) {
      Wave part;
      part.clusters.assign(w.clusters.begin() + static_cast<long>(p * cap),
                           w.clusters.begin() + static_cast<long>(std::min(w.clusters.size(), (p + 1) * cap)));
      part.name = w.name.empty() || parts == 1 ? w.name
                                               : w.name + " (" + std::to_string(p + 1) + "/" + std::to_string(parts) + ")";
      out.push_back(std::move(part));
    }
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i].name.empty()) out[i].name = "wave " + std::to_string(i + 1);
  return out;
}

}  // namespace rollout

namespace {

constexpr const char* k_meta = "rollout";

namespace state {
constexpr const char* running = "running";
constexpr const char* waiting = "waiting";
constexpr const char* paused = "paused";
constexpr const char* done = "done";
constexpr const char* aborted = "aborted";
}  // namespace state

int64_t now_ms() { return system_clock().now_unix_ms(); }

std::optional<json> load(store::Store& st, const std::string& ctx) {
  const auto field = ac::find_meta_field(st, ctx, k_meta);
  if (!field || field->empty()) return std::nullopt;
  json r = json::parse(*field, nullptr, false);
  if (!r.is_object()) return std::nullopt;
  return r;
}

void save(store::Store& st, const std::string& ctx, const json& r) { ac::set_meta(st, ctx, k_meta, r.dump()); }

size_t failures(const json& r) {
  size_t n = 0;
  for (const auto& w : r["waves"]) n += w.value("failed", json::array()).size();
  return n;
}

std::vector<std::string> strings(const json& a) {
  std::vector<std::string> out;
  for (const auto& s : a) out.push_back(s.get<std::string>());
  return out;
}

std::string position(const json& r) {
  return std::to_string(r.value("current", 0) + 1) + " of " + std::to_string(r["waves"].size());
}

// The clusters of the waves that started (their deliveries are what a rollback undoes).
std::vector<std::string> started_clusters(const json& r) {
  std::vector<std::string> out;
  for (const auto& w : r["waves"])
    if (w.value("state", "pending") != "pending")
      for (const auto& c : w["clusters"]) out.push_back(c.get<std::string>());
  return out;
}

// Opens wave `i` as the event's stage (in the caller's transaction).
void open_wave(store::Store& st, const std::string& ctx, json& r, size_t i) {
  r["current"] = i;
  json& w = r["waves"][i];
  w["state"] = "applying";
  w["started"] = now_ms();
  w["readySince"] = 0;
  w["failed"] = json::array();
  sync::open_stage(st, ctx, {r.value("seq", int64_t{0}), strings(w["clusters"]), false, false});
}

// Ends the rollout of `ctx` (its event Error, the context its error state,
// the rollout aborted) in the caller's transaction; with `rollback`, queues
// what undoes the waves that started and returns the context that holds it
// ("" without rollback).
std::string end_rollout(store::Store& st, const std::string& ctx, json& r, bool rollback, const std::string& why,
                        Clock& clock) {
  const int64_t seq = r.value("seq", int64_t{0});
  const std::string op = r.value("operation", "");
  const sync::Transition& t = sync::transition(op == "update" ? ac::event::update : ac::event::instantiate);
  ac::mark(st, ctx, seq, ac::queue_status::error, why);
  ac::jobs::forget(st, ctx, seq);
  ac::set_status(st, ctx, t.error);
  if (!ac::next_pending(st, ctx)) ac::deactivate(st, ctx);
  r["state"] = state::aborted;
  r["message"] = why;
  r["rolledBack"] = rollback;
  // The revision an update replaced stays what the clusters it did not reach
  // run: Updated, as after any update, so that 'emco dig rollback' to it is
  // accepted (an Update event is valid only from Created or Updated).
  if (op == "update" && !rollback && ac::exists(st, r.value("from", ""))) ac::set_status(st, r.value("from", ""), ac::status::updated);
  save(st, ctx, r);
  if (!rollback) return "";
  const std::vector<std::string> clusters = started_clusters(r);
  const Key dig = Key::parse(r.value("dig", ""));
  auto res = st.get(dig);
  if (!res) fail(ErrorKind::not_found, "the rollout's deployment intent group " + r.value("dig", "") + " no longer exists");
  json si = json::parse(res->state_info);
  if (op == "instantiate") {
    const int64_t term = sync::enqueue_to_deliver(st, ctx, ac::event::terminate);
    sync::open_stage(st, ctx, {term, clusters, true, false});
    append_action(si, "Terminated", ctx, 0, clock);
    st.set_state_info(dig, si.dump());
    r["message"] = why + "; rolled back: its objects are deleted from the " + std::to_string(clusters.size()) +
                   " clusters of the waves that started";
    save(st, ctx, r);
    return ctx;
  }
  // An update: the clusters of the waves that started get the revision it
  // replaced back, as 'emco dig rollback' delivers it (a new revision).
  const std::string from = r.value("from", "");
  if (!ac::exists(st, from)) fail(ErrorKind::failed, "cannot roll back: the context the update replaced is gone");
  // Update accepts the context it delivers again only from Created or
  // Updated (as a rollback's target is): the replaced revision is Updated.
  ac::set_status(st, from, ac::status::updated);
  ac::set_stop(st, from, false);
  const int64_t up = sync::enqueue_to_deliver(st, from, ac::event::update, ctx);
  sync::open_stage(st, from, {up, clusters, true, false});
  const int rev = detail::last_revision(si);
  append_action(si, "Updated", ctx, rev, clock);
  append_action(si, "Instantiated", from, rev + 1, clock);
  st.set_state_info(dig, si.dump());
  r["message"] = why + "; rolled back: the " + std::to_string(clusters.size()) +
                 " clusters of the waves that started get the previous revision again (revision " +
                 std::to_string(rev + 1) + ")";
  save(st, ctx, r);
  return from;
}

enum class GateEnd { passed, failed, pending, cancelled };

// Reads the wave's objects until they are all ready for minSuccessTime, its
// progress deadline passes, the operation's deadline or an interrupt, or the
// context is stopped or a terminate is pending (cancelled).
// Records readySince, the failed clusters, the end and the time spent.
GateEnd gate(store::Store& st, const std::string& ctx, json& r, const OperationOptions& o,
             steady_clock::time_point deadline, const sync::TargetFactory& factory) {
  const auto began = steady_clock::now();
  json& w = r["waves"][r.value("current", 0)];
  const std::vector<std::string> clusters = strings(w["clusters"]);
  const std::set<std::string> in_wave(clusters.begin(), clusters.end());
  const ac::Header h = ac::header(st, ctx);
  // A cluster whose apply was refused fails at once.
  std::set<std::string> refused;
  for (const auto& s : ac::resource_states(st, h.status_context.empty() ? ctx : h.status_context))
    if (in_wave.count(s.cluster) &&
        (s.status == ac::resource_status::failed || s.status == ac::resource_status::skipped))
      refused.insert(s.cluster);
  // What the new revision has on the others.
  const ac::AppContext c = ac::load(st, ctx);
  const auto ns_it = c.meta.find("Namespace");
  const std::string ns = ns_it == c.meta.end() ? "" : ns_it->second;
  std::map<std::string, std::vector<std::string>> texts;
  for (const auto& a : c.apps)
    for (const auto& cl : a.clusters)
      if (in_wave.count(cl.name) && !refused.count(cl.name))
        for (const auto& res : cl.resources) texts[cl.name].push_back(res.text());
  std::vector<std::string> probed;
  for (const auto& [name, _] : texts) probed.push_back(name);
  std::vector<std::shared_ptr<sync::Target>> targets(probed.size());
  const int64_t min_success = r.value("minSuccessMs", int64_t{0});
  const int64_t wave_deadline = w.value("started", int64_t{0}) + r.value("deadlineMs", int64_t{0});
  auto spent = [&] { w["gateMs"] = w.value("gateMs", int64_t{0}) + duration_cast<milliseconds>(steady_clock::now() - began).count(); };
  for (;;) {
    std::vector<char> ready(probed.size(), 0);
    parallel_for(probed.size(), static_cast<size_t>(std::max(1, o.parallel)), [&](size_t i) {
      try {
        if (!targets[i]) targets[i] = factory(probed[i], ns);
        for (const auto& text : texts.at(probed[i]))
          if (!targets[i]->state(text).ready) return;
        ready[i] = 1;
      } catch (const Error&) {
        // Unreachable or refused: not ready (the deadline decides).
      }
    });
    const bool all = std::all_of(ready.begin(), ready.end(), [](char b) { return b != 0; });
    const int64_t now = now_ms();
    int64_t since = w.value("readySince", int64_t{0});
    if (all && since == 0) since = now;
    if (!all) since = 0;
    w["readySince"] = since;
    if (all && now - since >= min_success) {
      w["failed"] = json(std::vector<std::string>(refused.begin(), refused.end()));
      w["state"] = refused.empty() ? "passed" : "failed";
      w["ended"] = now;
      spent();
      return refused.empty() ? GateEnd::passed : GateEnd::failed;
    }
    if (!all && now >= wave_deadline) {
      std::set<std::string> failed = refused;
      for (size_t i = 0; i < probed.size(); ++i)
        if (!ready[i]) failed.insert(probed[i]);
      w["failed"] = json(std::vector<std::string>(failed.begin(), failed.end()));
      w["state"] = "failed";
      w["ended"] = now;
      spent();
      return GateEnd::failed;
    }
    if ((o.interrupt && o.interrupt->load()) || steady_clock::now() >= deadline) {
      spent();
      return GateEnd::pending;
    }
    // 'emco dig stop' or a terminate: the next drive ends the operation.
    if (const ac::Header now_h = ac::header(st, ctx); now_h.stop || now_h.pending_terminate) {
      spent();
      return GateEnd::cancelled;
    }
    // Poll again: sooner when the wait that is left is shorter.
    int64_t wait = 500;
    if (all) wait = std::min(wait, since + min_success - now);
    else wait = std::min(wait, wave_deadline - now);
    sync::renew_lease(st, ctx);
    std::this_thread::sleep_for(milliseconds(std::max<int64_t>(wait, 10)));
  }
}

detail::Delivered stopped(store::Store& st, const std::string& ctx, Delivery how, const std::string& why) {
  detail::Delivered d;
  d.delivery = how;
  d.status = ac::header(st, ctx).status;
  d.failures.push_back(why);
  return d;
}

}  // namespace

namespace detail {

void record_rollout(store::Store& st, const Runtime* runtime, const Key& dig, const std::string& ctx,
                    const std::string& op, int64_t seq, const std::string& from) {
  if (!runtime || !runtime->rollouts) return;
  auto strategy = runtime->rollouts->strategy(st, dig);
  if (!strategy) return;
  std::set<std::string> names;
  ac::for_each_resource_name(st, ctx, [&](std::string_view, std::string_view cluster, std::string_view) {
    names.emplace(cluster);
  });
  if (!from.empty())
    for (const auto& c : ac::departed_clusters(st, from, ctx)) names.insert(c);
  const std::vector<std::string> clusters(names.begin(), names.end());
  auto labels_of = [&](const std::string& cluster) {
    std::vector<std::string> out;
    const auto plus = cluster.find('+');
    Key key;
    key.parts = {{"clusterProvider", cluster.substr(0, plus)}, {"cluster", cluster.substr(plus + 1)}};
    for (const auto& l : st.list(resource::kind("clusterLabel"), key)) out.push_back(l.key.parts.back().second);
    return out;
  };
  const auto waves = rollout::plan_waves(*strategy, clusters, labels_of);
  if (waves.empty()) return;
  json r = {{"strategy", strategy->name},
            {"operation", op},
            {"dig", dig.str()},
            {"seq", seq},
            {"from", from},
            {"state", state::running},
            {"message", ""},
            {"current", 0},
            {"minSuccessMs", strategy->min_success.count()},
            {"deadlineMs", strategy->progress_deadline.count()},
            {"maxFailures", strategy->max_failures.of(clusters.size())},
            {"rollback", strategy->rollback_on_failure},
            {"waves", json::array()}};
  for (const auto& w : waves)
    r["waves"].push_back({{"name", w.name}, {"clusters", w.clusters}, {"state", "pending"}, {"failed", json::array()}});
  open_wave(st, ctx, r, 0);
  save(st, ctx, r);
}

void refuse_during_rollout(store::Store& st, const std::string& ctx, const std::string& what, const std::string& op,
                           const std::string& rollback_target) {
  auto r = load(st, ctx);
  if (!r) return;
  const std::string s = r->value("state", "");
  if (s == state::aborted && !r->value("rolledBack", false)) {
    const std::string operation = r->value("operation", "");
    const std::string from = r->value("from", "");
    if (op == "rollback" && operation == "update" && rollback_target == from) return;
    size_t total = 0;
    for (const auto& w : (*r)["waves"]) total += w["clusters"].size();
    // The revision the update replaced, for the hint.
    std::string replaced;
    if (auto dig = st.get(Key::parse(r->value("dig", ""))); dig && !dig->state_info.empty())
      for (const auto& a : json::parse(dig->state_info).value("actions", json::array()))
        if (!from.empty() && a.value("instance", "") == from && a.value("revision", 0) > 0)
          replaced = std::to_string(a.value("revision", 0));
    fail(ErrorKind::conflict,
         "cannot " + op + " " + what + ": its " + operation + " was aborted at " +
             (*r)["waves"][r->value("current", 0)].value("name", "") + " (" + position(*r) + ") without rollback: " +
             std::to_string(started_clusters(*r).size()) + " of " + std::to_string(total) +
             " clusters run its revision, the others " + (operation == "update" ? "the one before" : "nothing"),
         operation == "update"
             ? "roll back to the revision the update replaced first ('emco dig rollback " + r->value("dig", "") +
                   " --revision " + (replaced.empty() ? "N" : replaced) + "'), then " + op
             : "terminate it ('emco dig terminate'), then instantiate it again");
  }
  auto entry = ac::next_pending(st, ctx);
  if (s == state::done || s == state::aborted || !entry || entry->seq != r->value("seq", int64_t{0})) return;
  fail(ErrorKind::conflict,
       "cannot " + op + " " + what + ": its rollout is " + s + " at " +
           (*r)["waves"][r->value("current", 0)].value("name", "") + " (" + position(*r) + ")",
       "finish it with 'emco dig rollout resume', or end it with 'emco dig rollout abort [--rollback]'");
}

RolloutTurn rollout_turn(store::Store& st, const std::string& ctx, const OperationOptions& o,
                         steady_clock::time_point deadline, const sync::TargetFactory& factory) {
  RolloutTurn turn{deadline, std::nullopt};
  auto loaded = load(st, ctx);
  if (!loaded) return turn;
  json r = *loaded;
  const std::string s = r.value("state", "");
  if (s == state::done || s == state::aborted) return turn;
  // A stop or a terminate ends the rollout's event: drive() decides.
  const ac::Header h = ac::header(st, ctx);
  auto entry = ac::next_pending(st, ctx);
  if (!entry || entry->seq != r.value("seq", int64_t{0}) || h.stop || h.pending_terminate) return turn;
  if (s == state::paused || s == state::waiting) {
    turn.stop = stopped(st, ctx, s == state::paused ? Delivery::failed : Delivery::pending, r.value("message", ""));
    return turn;
  }
  // One process moves the rollout on: the one holding the context's lease.
  const sync::LeaseScope lease(st, ctx);
  if (!sync::take_lease(st, ctx)) return turn;  // drive() finds it busy and deliver() waits
  r = *load(st, ctx);
  for (;;) {
    const size_t cur = r.value("current", 0);
    json& w = r["waves"][cur];
    if (w.value("state", "") == "applying") {
      auto stage = sync::current_stage(st, ctx);
      const int64_t wave_deadline = w.value("started", int64_t{0}) + r.value("deadlineMs", int64_t{0});
      const int64_t left = wave_deadline - now_ms();
      if (stage && stage->seq == r.value("seq", int64_t{0}) && !stage->ended && left > 0) {
        turn.deadline = std::min(deadline, steady_clock::now() + milliseconds(left));
        return turn;
      }
      // Its jobs ended (or its progress deadline passed): the gate decides.
      w["state"] = "gating";
      st.write([&] { save(st, ctx, r); });
    }
    const GateEnd g = gate(st, ctx, r, o, deadline, factory);
    if (g == GateEnd::cancelled) {
      st.write([&] { save(st, ctx, r); });
      return turn;
    }
    if (g == GateEnd::pending) {
      st.write([&] { save(st, ctx, r); });
      turn.stop = stopped(st, ctx, Delivery::pending,
                          "rollout: " + w.value("name", "") + " (" + position(r) + ") is not ready yet");
      return turn;
    }
    const size_t failed = failures(r);
    const size_t tolerated = r.value("maxFailures", size_t{0});
    if (failed > tolerated) {
      const std::string why = "rollout stopped at " + w.value("name", "") + " (" + position(r) + "): " +
                              std::to_string(failed) + " cluster(s) failed, " + std::to_string(tolerated) +
                              " tolerated" + (w["failed"].empty() ? std::string() : " (" + strings(w["failed"]).front() +
                              (w["failed"].size() > 1 ? ", ..." : "") + ")");
      if (r.value("rollback", false)) {
        std::string undo;
        st.write([&] {
          json copy = r;  // a re-run body starts from the rollout as it was
          undo = end_rollout(st, ctx, copy, true, why, system_clock());
          r = copy;
        });
        sync::release_lease(st, ctx);
        Delivered d = deliver(st, undo, "", o, deadline);
        d.delivery = d.delivery == Delivery::pending ? Delivery::pending : Delivery::failed;
        d.failures.insert(d.failures.begin(), r.value("message", ""));
        turn.stop = d;
        return turn;
      }
      r["state"] = state::paused;
      r["message"] = why;
      st.write([&] {
        save(st, ctx, r);
        ac::deactivate(st, ctx);
      });
      turn.stop = stopped(st, ctx, Delivery::failed, why);
      return turn;
    }
    const std::string ended = w.value("name", "") + " (" + position(r) + ") " + w.value("state", "");
    if (cur + 1 < r["waves"].size()) {
      st.write([&] {
        json copy = r;
        if (o.wait_wave) {
          // The next wave starts (and its progress deadline runs) when resume opens it.
          copy["current"] = cur + 1;
          copy["state"] = state::waiting;
          copy["message"] = ended + "; 'emco dig rollout resume' starts " + copy["waves"][cur + 1].value("name", "");
          ac::deactivate(st, ctx);
        } else {
          open_wave(st, ctx, copy, cur + 1);
        }
        save(st, ctx, copy);
        r = copy;
      });
      if (o.wait_wave) {
        turn.stop = stopped(st, ctx, Delivery::pending, r.value("message", ""));
        return turn;
      }
      continue;
    }
    // The last wave ended: a final stage without clusters ends the event.
    st.write([&] {
      r["state"] = state::done;
      r["message"] = "every wave ended; " + std::to_string(failed) + " cluster(s) failed";
      sync::open_stage(st, ctx, {r.value("seq", int64_t{0}), {}, true, false});
      save(st, ctx, r);
    });
    return turn;
  }
}

}  // namespace detail

namespace rollout {

namespace {

json view(const json& r, bool clusters) {
  json out = {{"strategy", r.value("strategy", "")},
              {"operation", r.value("operation", "")},
              {"state", r.value("state", "")},
              {"message", r.value("message", "")},
              {"wave", r.value("current", 0) + 1},
              {"waveCount", r["waves"].size()},
              {"failures", failures(r)},
              {"maxFailures", r.value("maxFailures", 0)},
              {"minSuccessTimeMs", r.value("minSuccessMs", 0)},
              {"progressDeadlineMs", r.value("deadlineMs", 0)},
              {"rollbackOnFailure", r.value("rollback", false)},
              {"waves", json::array()}};
  for (const auto& w : r["waves"]) {
    json v = {{"name", w.value("name", "")},
              {"clusterCount", w["clusters"].size()},
              {"state", w.value("state", "")},
              {"failed", w.value("failed", json::array())}};
    if (clusters) v["clusters"] = w["clusters"];
    if (w.value("started", int64_t{0})) v["started"] = rfc3339_ms(w.value("started", int64_t{0}));
    if (w.value("ended", int64_t{0})) v["ended"] = rfc3339_ms(w.value("ended", int64_t{0}));
    if (w.contains("gateMs")) v["gateMs"] = w["gateMs"];
    out["waves"].push_back(std::move(v));
  }
  return out;
}

// The context of the DIG's current deployment, "" when none.
std::string current_context(store::Store& st, const Key& dig) {
  auto r = st.get(dig);
  if (!r) fail(ErrorKind::not_found, store::describe(resource::kind("deploymentIntentGroup"), dig) + " does not exist");
  return r->state_info.empty() ? "" : last_instance(json::parse(r->state_info));
}

// The context of the DIG's current deployment and its rollout.
std::pair<std::string, json> current(store::Store& st, const Key& dig) {
  const std::string ctx = current_context(st, dig);
  if (ctx.empty()) return {"", nullptr};
  auto rec = load(st, ctx);
  return {ctx, rec ? *rec : json(nullptr)};
}

// The rollout of `dig` that is still in progress, else Error(conflict).
std::pair<std::string, json> in_progress(store::Store& st, const Key& dig, const std::string& verb) {
  const std::string what = store::describe(resource::kind("deploymentIntentGroup"), dig);
  auto found = current(st, dig);
  const std::string ctx = found.first;
  const json r = found.second;
  if (r.is_null()) fail(ErrorKind::conflict, what + " has no rollout to " + verb,
                        "a rollout starts with instantiate or update when the DIG has an emco-rollout-strategies resource");
  const std::string s = r.value("state", "");
  auto entry = ac::next_pending(st, ctx);
  if (s == state::done || s == state::aborted || !entry || entry->seq != r.value("seq", int64_t{0}))
    fail(ErrorKind::conflict, what + ": its rollout is " + (s == state::done || s == state::aborted ? s : "over") +
                                  " (nothing to " + verb + ")",
         "'emco dig rollout status' shows how it ended");
  if (sync::held_by_live_process(st, ctx))
    fail(ErrorKind::conflict, what + ": another emco process is delivering its rollout",
         "wait for it, or stop it with 'emco dig stop'");
  return {ctx, r};
}

}  // namespace

json of_context(store::Store& st, const std::string& ctx) {
  auto r = load(st, ctx);
  return r ? view(*r, true) : json(nullptr);
}

json of_dig(store::Store& st, const Key& dig, bool clusters) { return of_current(st, current_context(st, dig), clusters); }

json of_current(store::Store& st, const std::string& ctx, bool clusters) {
  if (ctx.empty()) return nullptr;
  const auto rec = load(st, ctx);
  if (!rec) return nullptr;
  const json& r = *rec;
  json v = view(r, clusters);
  // A terminate or a stop ended the operation before the rollout did.
  const std::string s = v.value("state", "");
  auto entry = ac::next_pending(st, ctx);
  if ((s == state::running || s == state::waiting || s == state::paused) &&
      (!entry || entry->seq != r.value("seq", int64_t{0})))
    v["state"] = "ended";
  return v;
}

OperationResult resume(store::Store& st, const Key& dig, Clock& clock, const OperationOptions& o) {
  const auto found = in_progress(st, dig, "resume");
  const std::string& ctx = found.first;
  const json& r = found.second;
  const auto deadline = deadline_of(o);
  st.write([&] {
    json copy = r;
    // Waiting: the next wave starts now. Paused: the failed wave runs again,
    // its failures no longer counted. Running: where a killed process left it.
    if (copy.value("state", "") != state::running) open_wave(st, ctx, copy, copy.value("current", 0));
    copy["state"] = state::running;
    copy["message"] = "";
    save(st, ctx, copy);
    ac::activate(st, ctx);
  });
  OperationResult out;
  detail::Delivered d = detail::deliver(st, ctx, ac::status::instantiated, o, deadline);
  detail::fill(out, ctx, detail::with_children(st, ctx, clock, o, deadline, d));
  json now = of_context(st, ctx);
  out.message = "rollout " + now.value("state", "") + " at wave " + std::to_string(now.value("wave", 0)) + " of " +
                std::to_string(now.value("waveCount", 0));
  return out;
}

OperationResult abort(store::Store& st, const Key& dig, bool rollback, Clock& clock, const OperationOptions& o) {
  const auto found = in_progress(st, dig, "abort");
  const std::string& ctx = found.first;
  const json& r = found.second;
  const auto deadline = deadline_of(o);
  const bool undo = rollback || r.value("rollback", false);
  std::string target;
  json ended;
  st.write([&] {
    json copy = r;
    target = end_rollout(st, ctx, copy, undo, "aborted at " + copy["waves"][copy.value("current", 0)].value("name", "") +
                                                  " (" + position(copy) + ") by 'emco dig rollout abort'",
                         clock);
    ended = copy;
  });
  OperationResult out;
  out.message = ended.value("message", "");
  if (target.empty()) {
    detail::Delivered d;
    d.delivery = Delivery::none;
    d.status = ac::header(st, ctx).status;
    detail::fill(out, ctx, d);
    return out;
  }
  detail::fill(out, target, detail::deliver(st, target, "", o, deadline));
  return out;
}

}  // namespace rollout

}  // namespace emco::lifecycle
