// Hooks around DIG operations (runtime.hpp, OperationHooks): their steps are
// part of the persisted operation.
//
// The record lives in the operation's context, meta "hooks": a list of
// operations (the context's hook log; the last one is current), each
//   {"operation", "dig", "revision", "undo": {...}, "steps": [
//      {"provider","name","ref","blocking","point","phase": "pre"|"post",
//       "state": "pending"|"started"|"done"|"failed", "message","log","time"}]}
// It is written in the same transaction that records the operation, so a
// process killed at any point leaves either no operation or one whose hooks
// `emco sync` continues: each step is marked started before it runs and
// done or failed after, in transactions of their own. A step found started
// (its process died while it ran) runs again and the log says why: emco
// cannot know whether the client saw it (for a workflow hook, its workflow
// id makes a second start of a running workflow fail on the Temporal side).
//
// The workspace meta "hooks.unfinished" lists the contexts with steps still
// to run, so resume finds post steps whose delivery already drained.

#include "core/lifecycle/internal.hpp"

#include <algorithm>
#include <exception>
#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/appcontext/header_rows.hpp"
#include "core/appcontext/persistence.hpp"
#include "core/appcontext/queue_rows.hpp"
#include "core/sync/queue.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::lifecycle {

using nlohmann::json;
namespace ac = emco::appcontext;
using namespace std::chrono;

void HookCall::keep_alive_during(const std::function<void()>& work) const {
  if (!keepalive) return work();
  std::exception_ptr failure;
  std::future<void> done = std::async(std::launch::async, [&] {
    try {
      work();
    } catch (...) {
      failure = std::current_exception();
    }
  });
  while (done.wait_for(seconds(1)) != std::future_status::ready) keepalive();
  done.get();
  if (failure) std::rethrow_exception(failure);
}

std::string hook_point_name(HookPoint p) {
  switch (p) {
    case HookPoint::pre_install: return "pre-install";
    case HookPoint::post_install: return "post-install";
    case HookPoint::pre_update: return "pre-update";
    case HookPoint::post_update: return "post-update";
    case HookPoint::pre_termination: return "pre-termination";
    case HookPoint::post_termination: return "post-termination";
  }
  return "";
}

namespace detail {

json read_log(store::Store& st, const std::string& ctx);

namespace {

constexpr const char* k_meta = "hooks";
constexpr const char* k_unfinished = "hooks.unfinished";

std::vector<std::string> unfinished(const store::Store& st) {
  auto v = st.meta(k_unfinished);
  std::vector<std::string> out;
  if (!v || v->empty()) return out;
  for (const auto& id : json::parse(*v)) out.push_back(id.get<std::string>());
  return out;
}

void set_unfinished(store::Store& st, const std::string& ctx, bool on) {
  auto ids = unfinished(st);
  auto it = std::find(ids.begin(), ids.end(), ctx);
  if (on && it == ids.end()) ids.push_back(ctx);
  if (!on && it != ids.end()) ids.erase(it);
  st.set_meta(k_unfinished, json(ids).dump());
}

}  // namespace

json read_log(store::Store& st, const std::string& ctx) {
  const auto field = ac::find_meta_field(st, ctx, k_meta);
  if (!field || field->empty()) return json::array();
  json log = json::parse(*field, nullptr, false);
  return log.is_array() ? log : json::array();
}

namespace {

void write_log(store::Store& st, const std::string& ctx, const json& log) { ac::set_meta(st, ctx, k_meta, log.dump()); }

// The points an operation runs hooks at, as upstream calls its action
// controllers: migrate is an update of the target (the scheduler runs its
// pre-update hooks, then the post-update event); rollback only sends the
// post-update event (it restores a context, no scheduler call).
std::vector<std::pair<HookPoint, const char*>> points_of(const std::string& op) {
  if (op == "instantiate") return {{HookPoint::pre_install, "pre"}, {HookPoint::post_install, "post"}};
  if (op == "update" || op == "migrate") return {{HookPoint::pre_update, "pre"}, {HookPoint::post_update, "post"}};
  if (op == "rollback") return {{HookPoint::post_update, "post"}};
  return {{HookPoint::pre_termination, "pre"}, {HookPoint::post_termination, "post"}};
}

const OperationHooks* provider(const OperationOptions& o, const std::string& name) {
  if (!o.runtime) return nullptr;
  for (const auto& h : o.runtime->hooks)
    if (h->name() == name) return h.get();
  return nullptr;
}

HookPoint point_named(const std::string& s) {
  for (HookPoint p : {HookPoint::pre_install, HookPoint::post_install, HookPoint::pre_update, HookPoint::post_update,
                      HookPoint::pre_termination, HookPoint::post_termination})
    if (hook_point_name(p) == s) return p;
  fail(ErrorKind::internal, "unknown hook point '" + s + "'");
}

// Puts the DIG back where it was before the operation was recorded: a
// blocking pre step failed, so nothing was delivered (upstream fails the
// call before it records the operation). A migrate's undo also gives the
// source DIG back its last action and its contexts.
void undo(store::Store& st, const std::string& ctx, const json& rec, const std::string& why) {
  const json& u = rec["undo"];
  auto pop_actions = [&](const resource::Key& dig, int pop, const json* statusctxid) {
    auto r = st.get(dig);
    if (!r || r->state_info.empty()) return;
    json si = json::parse(r->state_info);
    for (int i = 0; i < pop && !si["actions"].empty(); ++i) si["actions"].erase(si["actions"].size() - 1);
    if (statusctxid) si["statusctxid"] = *statusctxid;
    st.set_state_info(dig, si.dump());
  };
  st.write([&] {
    pop_actions(resource::Key::parse(rec.value("dig", "")), u.value("pop", 0),
                u.contains("statusctxid") ? &u["statusctxid"] : nullptr);
    if (u.contains("source")) {
      const resource::Key source = resource::Key::parse(u["source"].value("dig", ""));
      pop_actions(source, u["source"].value("pop", 0), nullptr);
      for (const auto& id : u["source"].value("contexts", json::array()))
        if (ac::exists(st, id.get<std::string>())) ac::set_owner(st, id.get<std::string>(), source);
    }
    std::vector<std::string> cancel = {ctx};
    for (const auto& c : ac::header(st, ctx).children) cancel.push_back(c);
    for (const auto& id : cancel) {
      for (const auto& e : ac::queue(st, id))
        if (e.status == ac::queue_status::pending) ac::mark(st, id, e.seq, ac::queue_status::skip, why);
      ac::deactivate(st, id);
      ac::set_pending_terminate(st, id, false);
    }
    set_unfinished(st, ctx, false);
    if (u.value("remove", false)) ac::remove(st, ctx);
  });
}

}  // namespace

void record_hooks(store::Store& st, const Runtime* runtime, const resource::Key& dig, const std::string& ctx,
                  const std::string& op, long revision, const json& undo_info) {
  if (!runtime || runtime->hooks.empty()) return;
  json steps = json::array();
  for (auto [point, phase] : points_of(op))
    for (const auto& h : runtime->hooks)
      for (const HookStep& s : h->steps(st, dig, point))
        steps.push_back({{"provider", s.provider},
                         {"name", s.name},
                         {"ref", s.ref},
                         {"blocking", s.blocking},
                         {"point", hook_point_name(point)},
                         {"phase", phase},
                         {"state", "pending"}});
  if (steps.empty()) return;
  json log = read_log(st, ctx);
  log.push_back({{"operation", op}, {"dig", dig.str()}, {"revision", revision}, {"undo", undo_info}, {"steps", steps}});
  write_log(st, ctx, log);
  set_unfinished(st, ctx, true);
}

std::optional<Delivered> run_hooks(store::Store& st, const std::string& ctx, const std::string& phase,
                                   const OperationOptions& o, steady_clock::time_point deadline) {
  json log = read_log(st, ctx);
  if (log.empty()) return std::nullopt;
  const size_t current = log.size() - 1;
  json rec = log[current];
  const std::string op = rec.value("operation", "");
  const resource::Key dig = resource::Key::parse(rec.value("dig", ""));
  bool pending_steps = false;
  for (const auto& step : rec["steps"])
    pending_steps = pending_steps || (step.value("phase", "") == phase && step.value("state", "") != "done" &&
                                      step.value("state", "") != "failed");
  if (!pending_steps) {
    if (phase == "post") st.write([&] { set_unfinished(st, ctx, false); });
    return std::nullopt;
  }
  // One process runs the hooks: the one holding the context's lease (as
  // one delivers it); another waits for it, as deliver() does.
  const sync::LeaseScope lease(st, ctx);
  while (!sync::take_lease(st, ctx)) {
    // A delivery worker leaves them to that process (lifecycle::work).
    if (!o.wait_for_others || (o.interrupt && o.interrupt->load()) || steady_clock::now() >= deadline) {
      Delivered d;
      d.status = ac::header(st, ctx).status;
      d.failures.push_back("another emco process is running the hooks of this operation");
      return d;
    }
    std::this_thread::sleep_for(milliseconds(250));
  }
  // Another process may have run them while this one waited.
  log = read_log(st, ctx);
  if (log.size() != current + 1) return std::nullopt;
  rec = log[current];
  auto last_beat = steady_clock::now();
  std::function<void()> keepalive = [&] {
    if (steady_clock::now() - last_beat < seconds(2)) return;
    last_beat = steady_clock::now();
    sync::renew_lease(st, ctx);
  };
  std::optional<Delivered> out;
  std::vector<std::string> soft_failures;
  for (size_t i = 0; i < rec["steps"].size(); ++i) {
    json step = rec["steps"][i];
    if (step.value("phase", "") != phase) continue;
    const std::string state = step.value("state", "");
    if (state == "done" || state == "failed") continue;
    if ((o.interrupt && o.interrupt->load()) || steady_clock::now() >= deadline) {
      Delivered d;
      d.status = ac::header(st, ctx).status;
      d.failures.push_back("waiting ended before " + step.value("name", "") + " ran");
      return d;
    }
    std::string again;
    if (state == "started")
      again = "ran again: the process running it was killed before its outcome was recorded, so emco cannot know "
              "whether it took effect";
    st.write([&] {
      json l = read_log(st, ctx);
      l[current]["steps"][i]["state"] = "started";
      l[current]["steps"][i]["time"] = system_clock().now_rfc3339();
      write_log(st, ctx, l);
    });
    HookOutcome result;
    const OperationHooks* p = provider(o, step.value("provider", ""));
    HookStep hs{step.value("provider", ""), step.value("name", ""), step.value("ref", ""), step.value("blocking", true)};
    if (!p) {
      result.message = "no hook provider '" + hs.provider + "' in this emco";
    } else {
      HookCall call{st,       dig,      ctx, op, rec.value("revision", 0L), point_named(step.value("point", "")), o,
                    system_clock(), deadline, keepalive};
      try {
        result = p->run(call, hs);
      } catch (const Error& e) {
        result.ok = false;
        result.message = e.message();
      }
    }
    if (!again.empty()) result.message = again + "; " + result.message;
    st.write([&] {
      json l = read_log(st, ctx);
      json& s = l[current]["steps"][i];
      s["state"] = result.ok ? "done" : "failed";
      s["message"] = result.message;
      if (!result.log.empty()) s["log"] = result.log;
      s["time"] = system_clock().now_rfc3339();
      write_log(st, ctx, l);
    });
    if (result.ok) continue;
    const std::string what = step.value("point", "") + " " + hs.name + " failed: " + result.message;
    if (!hs.blocking) {
      soft_failures.push_back(what + " (not blocking)");
      continue;
    }
    Delivered d;
    d.delivery = Delivery::failed;
    d.failures.push_back(what);
    if (phase == "pre") {
      sync::release_lease(st, ctx);  // before the context may go with the undo
      undo(st, ctx, rec, what);
      d.status = k_hook_refused;
      return d;
    }
    d.status = ac::header(st, ctx).status;
    out = d;
    break;
  }
  // Every step of this phase ran (or a blocking post step failed: the rest
  // would run after it, so they are not run at all).
  if (phase == "post" || out) st.write([&] { set_unfinished(st, ctx, false); });
  if (!out && !soft_failures.empty()) {
    Delivered d;
    d.delivery = Delivery::done;
    d.status = ac::header(st, ctx).status;
    d.failures = soft_failures;
    return d;
  }
  return out;
}

Delivered refused_by_hook(const Delivered& d, const std::string& what, const std::string& op) {
  if (d.status != k_hook_refused) return d;
  fail(ErrorKind::failed, what + ": " + op + " refused by a hook: " + (d.failures.empty() ? "" : d.failures.front()),
       "nothing was delivered and its state is as before; fix the hook or what it calls, then run " + op + " again");
}

std::string hook_goal(store::Store& st, const std::string& ctx) {
  json log = read_log(st, ctx);
  if (log.empty()) return "";
  return log.back().value("operation", "") == "terminate" ? ac::status::terminated : ac::status::instantiated;
}

std::vector<std::string> contexts_with_hooks(store::Store& st) { return unfinished(st); }

void abandon_hooks(store::Store& st, const std::string& ctx) {
  st.write([&] { set_unfinished(st, ctx, false); });
}

}  // namespace detail

json hook_log(store::Store& st, const std::string& ctx) {
  json log = detail::read_log(st, ctx);
  for (auto& rec : log) rec.erase("undo");
  return log;
}

}  // namespace emco::lifecycle
