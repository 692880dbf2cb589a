#include "core/lifecycle/lifecycle.hpp"
#include "core/lifecycle/credentials.hpp"
#include "core/lifecycle/internal.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include <thread>

#include "core/appcontext/job_rows.hpp"
#include "core/store/credentials.hpp"
#include "core/sync/queue.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::lifecycle {

using nlohmann::json;
using resource::Key;
using resource::Kind;
namespace ac = emco::appcontext;
using namespace std::chrono;

std::string initial_state_info(Clock& clock) {
  json si = {{"statusctxid", ""},
             {"actions", json::array({{{"state", "Created"}, {"instance", ""}, {"time", clock.now_rfc3339()}, {"revision", 0}}})}};
  return si.dump();
}

std::string current_state(const std::string& state_info) {
  if (state_info.empty()) return "";
  auto si = json::parse(state_info, nullptr, false);
  if (!si.is_object() || !si.contains("actions") || si["actions"].empty()) return "";
  return si["actions"].back().value("state", "");
}

std::string last_instance(const json& si) {
  if (!si.contains("actions") || si["actions"].empty()) return "";
  return si["actions"].back().value("instance", "");
}

void append_action(json& si, const std::string& state, const std::string& instance, int revision, Clock& clock) {
  si["actions"].push_back({{"state", state}, {"instance", instance}, {"time", clock.now_rfc3339()}, {"revision", revision}});
}

namespace detail {

std::string lc_level(const store::Resource& lc) {
  auto data = json::parse(lc.data);
  return data.value("spec", json::object()).value("level", "1");
}

// Drives `ctx` until its queue drains, waiting for another process that
// holds it, until the deadline or an interrupt.
Delivered deliver(store::Store& st, const std::string& ctx, const std::string& goal, const OperationOptions& o,
                  steady_clock::time_point deadline) {
  Delivered d;
  d.status = ac::header(st, ctx).status;
  if (!o.wait) {
    // --no-wait: the work is left to `emco sync` or the next command, which
    // must find it unheld (enqueue_to_deliver held it for this process).
    sync::release_lease(st, ctx);
    return d;
  }
  // The operation's pre hooks run before anything is delivered, its post
  // hooks once the context reached the operation's goal.
  std::vector<std::string> notes;
  if (auto pre = run_hooks(st, ctx, "pre", o, deadline)) {
    if (pre->delivery != Delivery::done) return *pre;
    notes = pre->failures;
  }
  auto finish = [&](Delivered r) {
    const std::string hooked = hook_goal(st, ctx);
    if (!hooked.empty() && r.delivery == Delivery::done && r.status == hooked) {
      if (auto post = run_hooks(st, ctx, "post", o, deadline)) {
        if (post->delivery != Delivery::done) r.delivery = post->delivery;
        r.failures.insert(r.failures.end(), post->failures.begin(), post->failures.end());
      }
    } else if (!hooked.empty()) {
      abandon_hooks(st, ctx);  // delivery failed: the post hooks do not run
    }
    r.failures.insert(r.failures.begin(), notes.begin(), notes.end());
    return r;
  };
  sync::DriveOptions drive;
  drive.engine = o.engine;
  drive.engine.parallel = o.parallel;
  drive.engine.interrupt = o.interrupt;
  drive.engine.deadline = deadline;
  drive.factory = o.factory ? o.factory : cluster_targets(st, ctx, o.runtime);
  drive.progress = o.progress;
  for (;;) {
    // A rollout in waves (rollout.cpp) runs its gates and opens its waves between drives.
    const RolloutTurn turn = rollout_turn(st, ctx, o, deadline, drive.factory);
    if (turn.stop) return *turn.stop;
    drive.engine.deadline = turn.deadline;
    auto r = sync::drive(st, ctx, drive);
    d.status = r.status;
    d.failures = r.failures;
    if (r.end == sync::DriveEnd::stage) continue;
    // The open wave's progress deadline ended the drive: its gate decides.
    const bool wave_over = turn.deadline < deadline && steady_clock::now() >= turn.deadline;
    if (r.end == sync::DriveEnd::interrupted && wave_over && !(o.interrupt && o.interrupt->load())) continue;
    if (r.end == sync::DriveEnd::interrupted) return d;
    if (r.end == sync::DriveEnd::drained) {
      bool reached = goal.empty() ? !ends_with(d.status, "Failed") : d.status == goal;
      d.delivery = reached && d.failures.empty() ? Delivery::done : Delivery::failed;
      return finish(d);
    }
    // Another live process is delivering this context: wait for it.
    if (!o.wait_for_others) {
      d.delivery = Delivery::pending;
      return d;
    }
    if ((o.interrupt && o.interrupt->load()) || steady_clock::now() >= deadline) return d;
    std::this_thread::sleep_for(milliseconds(250));
  }
}


void fill(OperationResult& out, const std::string& ctx, const Delivered& d) {
  out.context = ctx;
  out.delivery = d.delivery;
  out.status = d.status;
  out.failures = d.failures;
}


void owe_children(store::Store& st, const std::string& ctx, const std::string& from) {
  std::vector<std::string> replaced;
  if (!from.empty()) {
    // `from` may still owe children itself (its delivery failed, or its
    // children step never ran): it gets none now, but the children of what it
    // replaced are still running and go with it.
    if (auto owed = ac::owed_children(st, from)) replaced = owed->replaced;
    if (std::find(replaced.begin(), replaced.end(), from) == replaced.end()) replaced.push_back(from);
  }
  ac::owe_children(st, ctx, replaced);
}

bool current_deployment(store::Store& st, const std::string& ctx) {
  if (!ac::exists(st, ctx)) return false;
  const ac::Header h = ac::header(st, ctx);
  if (h.status != ac::status::instantiated || h.owner_kind != "deploymentIntentGroup") return false;
  auto owner = st.get(Key::parse(h.owner_key));
  if (!owner || owner->state_info.empty()) return false;
  const json si = json::parse(owner->state_info);
  return current_state(owner->state_info) == "Instantiated" && last_instance(si) == ctx;
}

namespace {

// How an unfinished delivery of child context `id` reads in its parent's
// operation: each failure names the child, or the state it was left in.
Delivered of_child(const std::string& id, Delivered d) {
  for (auto& f : d.failures) f = "child context " + id + ": " + f;
  if (d.failures.empty()) d.failures.push_back("child context " + id + " is " + d.status);
  return d;
}

// Terminates the children of `ctx` that are not Terminated (a context the
// owing one replaced), each Terminate queued once however many processes
// get here, and waits for them.
Delivered terminate_children(store::Store& st, const std::string& ctx, const OperationOptions& o,
                             steady_clock::time_point deadline) {
  Delivered d;
  d.delivery = Delivery::done;
  if (!ac::exists(st, ctx)) return d;  // removed with an earlier instantiation's history
  std::vector<std::string> children;
  st.write([&] {
    children.clear();  // a re-run body starts afresh
    for (const auto& c : ac::header(st, ctx).children) {
      if (!ac::exists(st, c) || ac::header(st, c).status == ac::status::terminated) continue;
      const auto queued = ac::queue(st, c);
      const bool requested = std::any_of(queued.begin(), queued.end(), [](const ac::QueueEntry& e) {
        return e.event == ac::event::terminate && e.status == ac::queue_status::pending;
      });
      if (!requested) sync::request_terminate(st, c);
      children.push_back(c);
    }
  });
  for (const auto& c : children) {
    d = deliver(st, c, ac::status::terminated, o, deadline);
    if (d.delivery != Delivery::done) return of_child(c, std::move(d));
  }
  return d;
}

}  // namespace

// A planner that fails or times out after the parent was delivered does not
// undo it: the operation ends failed or pending with its message, and the
// parent keeps owing its children for the next resume.
Delivered with_children(store::Store& st, const std::string& parent, Clock& clock, const OperationOptions& o,
                        steady_clock::time_point deadline, Delivered parent_d) {
  if (parent_d.delivery != Delivery::done) return parent_d;
  const auto owed = ac::owed_children(st, parent);
  // Replaced or terminated since it was delivered: whatever replaced it owes
  // the children now.
  if (!owed || !current_deployment(st, parent)) return parent_d;
  // A failure is kept with the record for the status (a wait that ran out is
  // not one: the next resume simply goes on).
  auto unfinished = [&](Delivered d) {
    if (d.delivery == Delivery::failed && !d.failures.empty()) ac::note_children_error(st, parent, d.failures.front());
    return d;
  };
  // The replaced contexts' children first: the new children are the same
  // objects, which the old ones' terminate would delete.
  for (const auto& old : owed->replaced) {
    Delivered d = terminate_children(st, old, o, deadline);
    if (d.delivery != Delivery::done) return unfinished(d);
  }
  // Planners may wait for and read the clusters: outside any transaction.
  std::vector<ac::AppContext> kids;
  if (o.runtime && !o.runtime->child_planners.empty()) {
    const ac::Header head = ac::header(st, parent);
    const ac::Owner owner{head.owner_kind, resource::Key::parse(head.owner_key)};
    std::optional<ac::AppContext> parent_ctx;
    auto load_parent = [&]() -> const ac::AppContext& {
      if (!parent_ctx) parent_ctx = ac::load(st, parent);
      return *parent_ctx;
    };
    ChildCall call{st, owner, load_parent, o.factory ? o.factory : live_targets(st, o.runtime), deadline, o.interrupt};
    for (const auto& planner : o.runtime->child_planners) {
      try {
        for (auto& kid : planner->children(call)) kids.push_back(std::move(kid));
      } catch (const Error& e) {
        Delivered d = parent_d;
        d.delivery = e.kind() == ErrorKind::pending ? Delivery::pending : Delivery::failed;
        d.failures.push_back("child contexts (" + planner->name() + "): " + e.message());
        return unfinished(d);
      }
    }
    for (auto& kid : kids) {
      kid.id = random_context_id();
      kid.parent = parent;
      kid.owner = owner;
      kid.created = clock.now_rfc3339();
      kid.revision = head.revision;
    }
  }
  // The claim: of the processes that planned them, the one that finds the
  // record still there stores the children; the others discard their plans,
  // as does anyone once the parent was replaced or terminated meanwhile.
  bool claimed = false;
  st.write([&] {
    claimed = false;  // a re-run body decides afresh
    if (!current_deployment(st, parent) || !ac::settle_children(st, parent)) return;
    for (const auto& kid : kids) {
      ac::save(st, kid);
      sync::enqueue_to_deliver(st, kid.id, ac::event::instantiate);
    }
    claimed = true;
  });
  if (!claimed) return parent_d;
  for (const auto& kid : kids) {
    Delivered d = deliver(st, kid.id, ac::status::instantiated, o, deadline);
    if (d.delivery != Delivery::done) return of_child(kid.id, std::move(d));
  }
  return parent_d;
}

}  // namespace detail

steady_clock::time_point deadline_of(const OperationOptions& o) { return steady_clock::now() + o.timeout; }

// Contexts of `owner` with queued work and no live process on them: finish
// them before a new operation builds on their state.
void finish_queued(store::Store& st, const Key& owner, const OperationOptions& o, steady_clock::time_point deadline) {
  auto owned = ac::list(st, owner);
  for (const auto& id : sync::resumable(st)) {
    if (std::find(owned.begin(), owned.end(), id) == owned.end()) continue;
    auto d = detail::deliver(st, id, "", o, deadline);
    if (d.delivery == Delivery::pending)
      fail(ErrorKind::conflict, "earlier work on this resource is still queued (context " + id + ")",
           "run 'emco sync' to finish it, then retry");
  }
}

void deliver_into(OperationResult& out, store::Store& st, const std::string& ctx, const std::string& goal,
                  const OperationOptions& o, steady_clock::time_point deadline) {
  detail::fill(out, ctx, detail::deliver(st, ctx, goal, o, deadline));
}

using namespace detail;

void check_modify_allowed(const Kind& k, const store::Resource& existing) {
  if (k.id != "deploymentIntentGroup") return;
  std::string state = current_state(existing.state_info);
  if (state != "Created" && !state.empty())
    fail(ErrorKind::conflict,
         store::describe(k, existing.key) + " is in " + state + " state; it can only be modified while Created",
         "change its intents instead and run 'emco dig update', or terminate and delete it first");
}

void check_inputs_changeable(const store::Store& st, const Runtime& runtime, const Kind& k, const Key& key) {
  for (const auto& p : runtime.resource_planners) {
    const auto& inputs = p->inputs();
    if (std::find(inputs.begin(), inputs.end(), k.id) == inputs.end()) continue;
    const Kind& owner_kind = resource::kind(p->kind());
    Key owner;
    owner.parts.assign(key.parts.begin(), key.parts.begin() + static_cast<long>(resource::key_size(owner_kind)));
    auto r = st.get(owner);
    if (!r) continue;  // the store's references report a missing parent
    std::string state = current_state(r->state_info);
    if (detail::frozen_state(state))
      fail(ErrorKind::conflict,
           "the " + p->what() + " of " + store::describe(owner_kind, owner) + " are " + state +
               "; a " + k.display + " cannot change until they are terminated",
           "terminate them first: 'emco apply " + resource::resource_anchor(owner_kind, owner) + "/terminate'");
  }
}

namespace {

// A resource whose lifecycle a plugin runs (a ResourcePlanner's or an
// OperationOwner's kind): what was applied for it must be off the clusters
// and its contexts at rest; they and the secrets kept under its key go with it.
void before_owned_delete(store::Store& st, const Kind& k, const store::Resource& existing) {
  std::string state = current_state(existing.state_info);
  if (frozen_state(state))
    fail(ErrorKind::conflict,
         "cannot delete " + store::describe(k, existing.key) + ": what was applied for it is still on the clusters (" +
             state + ")",
         "terminate it first (e.g. 'emco cluster network terminate', or a .../terminate anchor)");
  auto contexts = ac::list(st, existing.key);
  for (const auto& id : contexts) {
    std::string status = ac::header(st, id).status;
    bool at_rest = status == ac::status::terminated || status == ac::status::terminate_failed ||
                   status == ac::status::instantiate_failed || status == ac::status::created;
    if (!at_rest || sync::held_by_live_process(st, id))
      fail(ErrorKind::conflict,
           "cannot delete " + store::describe(k, existing.key) + ": its context " + id + " is " + status,
           "terminate what it delivered first (a .../terminate anchor), or run 'emco sync' to finish queued work");
  }
  for (const auto& id : contexts)
    if (ac::exists(st, id)) ac::remove(st, id);
  store::remove_credentials(st, existing.key.str());
}

}  // namespace

void before_delete(store::Store& st, const Kind& k, const store::Resource& existing) {
  const bool dig = k.id == "deploymentIntentGroup";
  if (!dig && k.id != "logicalCloud") {
    if (k.lifecycle) before_owned_delete(st, k, existing);
    return;
  }
  const std::string noun = dig ? "dig" : "lc";
  std::string state = current_state(existing.state_info);
  // A DIG whose last state is Updated was migrated away (its contexts moved
  // to the target); a logical cloud in Updated still runs.
  if (state == "Instantiated" || state == "InstantiateStopped" || (!dig && state == "Updated"))
    fail(ErrorKind::conflict, "cannot delete " + store::describe(k, existing.key) + ": it is " + state,
         "terminate it first (emco " + noun + " terminate, or a .../terminate anchor)");
  auto contexts = ac::list(st, existing.key);
  for (const auto& id : contexts)
    if (sync::held_by_live_process(st, id))
      fail(ErrorKind::conflict,
           "cannot delete " + store::describe(k, existing.key) + ": an emco process is still delivering it",
           "wait for it, or stop it with 'emco " + noun + " stop'");
  // lifecycle.md §2: after a terminate (or a stop) the last context must have
  // finished terminating, or have failed.
  if (!existing.state_info.empty() &&
      (state == "Terminated" || state == "TerminateStopped")) {
    std::string last = last_instance(json::parse(existing.state_info));
    if (!last.empty() && ac::exists(st, last)) {
      std::string status = ac::header(st, last).status;
      if (status != ac::status::terminated && status != ac::status::terminate_failed &&
          status != ac::status::instantiate_failed)
        fail(ErrorKind::conflict,
             "cannot delete " + store::describe(k, existing.key) + ": it has not completed terminating (" + status + ")",
             "run 'emco sync' to finish the terminate, then delete it");
    }
  }
  // Every AppContext of its history goes (ac::remove takes children first);
  // one already gone (removed with its parent, or by a re-instantiate) is skipped.
  for (const auto& id : contexts)
    if (ac::exists(st, id)) ac::remove(st, id);
  if (!dig) remove_tenant_kubeconfigs(st, existing.key);  // and the cloud's key
}

namespace detail {

int last_revision(const json& si) {
  int r = 0;
  for (const auto& a : si["actions"])
    if (a.value("state", "") == "Instantiated") r = a.value("revision", 0);
  return r;
}

appcontext::AppContext plan_dig(store::Store& st, const Key& key, const OperationOptions& o,
                                const std::string& status_context, const std::string& update_from) {
  if (o.planner) return o.planner(st, key, status_context, update_from);
  if (!o.runtime) fail(ErrorKind::internal, "planning needs the runtime's controllers");
  return default_planner(*o.runtime, o.factory ? o.factory : live_targets(st, o.runtime))(st, key, status_context,
                                                                                           update_from);
}

std::string drop_planned(appcontext::AppContext& planned) {
  std::string id = planned.id;
  appcontext::AppContext released = std::move(planned);
  return id;
}

// The DIG's logical cloud must be Instantiated (lifecycle.md §2).
void check_logical_cloud(store::Store& st, const store::Resource& dig, const std::string& what) {
  auto data = json::parse(dig.data);
  std::string lc_name = data.value("spec", json::object()).value("logicalCloud", "");
  Key lc_key;
  lc_key.parts = {dig.key.parts.front(), {"logicalCloud", lc_name}};
  auto lc = st.get(lc_key);
  const std::string lc_what = "logical cloud '" + lc_name + "'";
  if (!lc) fail(ErrorKind::not_found, "cannot instantiate " + what + ": " + lc_what + " does not exist");
  std::string state = current_state(lc->state_info);
  if (state == "Instantiated" || state == "Updated") return;
  std::string hint = "instantiate it first: 'emco apply " + resource::resource_anchor(resource::kind("logicalCloud"), lc_key) +
                     "/instantiate'";
  if (state == "Created" || state.empty())
    fail(ErrorKind::conflict, "cannot instantiate " + what + ": " + lc_what + " has never been instantiated", hint);
  if (state == "Terminated" || state == "TerminateStopped")
    fail(ErrorKind::conflict, "cannot instantiate " + what + ": " + lc_what + " is terminated", hint);
  fail(ErrorKind::conflict, "cannot instantiate " + what + ": " + lc_what + " is " + state, hint);
}

std::string busy_hint(store::Store& st, const std::string& ctx) {
  return sync::held_by_live_process(st, ctx) ? "another emco process is delivering it; wait for it or run 'emco dig stop'"
                                             : "run 'emco sync' to finish the queued work first";
}

}  // namespace detail

namespace {

OperationResult dig_operation(store::Store& st, const Kind& k, const Key& key, const std::string& op, const json& body,
                              Clock& clock, const OperationOptions& o) {
  OperationResult out;
  const std::string what = store::describe(k, key);
  auto deadline = deadline_of(o);
  auto load = [&] {
    auto r = st.get(key);
    if (!r) fail(ErrorKind::not_found, what + " does not exist");
    return *r;
  };

  if (o.runtime && (op == "instantiate" || op == "update" || op == "terminate" || op == "migrate" || op == "rollback"))
    for (const auto& mechanism : o.runtime->delivery) mechanism->warm_up(st);

  if (op == "approve") {
    st.write([&] {
      auto r = load();
      json si = r.state_info.empty() ? json::parse(initial_state_info(clock)) : json::parse(r.state_info);
      std::string state = current_state(si.dump());
      if (state == "Approved") {
        out.message = "approved (unchanged)";
        return;
      }
      if (state == "Instantiated" || state == "InstantiateStopped")
        fail(ErrorKind::conflict, what + " is already instantiated", "use 'emco dig update' to roll out intent changes");
      if (state != "Created" && state != "Terminated" && state != "Updated")
        fail(ErrorKind::conflict, what + " cannot be approved in state " + state);
      append_action(si, "Approved", "", 0, clock);
      st.set_state_info(key, si.dump());
      out.message = "approved";
    });
    return out;
  }

  if (op == "instantiate") {
    finish_queued(st, key, o, deadline);
    {
      auto r = load();
      std::string state = current_state(r.state_info);
      if (state == "Created")
        fail(ErrorKind::conflict, what + " must be Approved before it is instantiated",
             "approve it first: 'emco dig approve' or a .../approve anchor");
      if (state == "Instantiated" || state == "InstantiateStopped")
        fail(ErrorKind::conflict, what + " is already instantiated", "use 'emco dig update' to roll out intent changes");
      if (state != "Approved" && state != "Terminated" && state != "TerminateStopped")
        fail(ErrorKind::conflict, what + " cannot be instantiated in state " + state);
      check_logical_cloud(st, r, what);
    }
    // Plan outside the write transaction: rendering can take a while and
    // touches no state; a failure leaves everything unchanged.
    ac::AppContext ctx = plan_dig(st, key, o);
    ctx.revision = 1;
    st.write([&] {
      auto r = load();
      json si = json::parse(r.state_info);
      // Earlier instantiations' contexts are dropped (lifecycle.md §1); a
      // child goes with its parent (ac::remove takes children first).
      for (const auto& old : ac::list(st, key))
        if (ac::exists(st, old) && !sync::held_by_live_process(st, old)) ac::remove(st, old);
      ac::save(st, ctx);
      const int64_t seq = sync::enqueue_to_deliver(st, ctx.id, ac::event::instantiate);
      owe_children(st, ctx.id, "");
      record_rollout(st, o.runtime, key, ctx.id, op, seq, "");
      record_hooks(st, o.runtime, key, ctx.id, op, 1, {{"pop", 1}, {"statusctxid", si.value("statusctxid", "")}, {"remove", true}});
      append_action(si, "Instantiated", ctx.id, 1, clock);
      si["statusctxid"] = ctx.id;
      st.set_state_info(key, si.dump());
    });
    const std::string id = drop_planned(ctx);
    Delivered d = refused_by_hook(deliver(st, id, ac::status::instantiated, o, deadline), what, op);
    fill(out, id, with_children(st, id, clock, o, deadline, d));
    out.message = "instantiated";
    out.revision = 1;
    return out;
  }

  if (op == "terminate") {
    finish_queued(st, key, o, deadline);
    std::string ctx;
    std::vector<std::string> children;
    st.write([&] {
      auto r = load();
      json si = json::parse(r.state_info);
      std::string state = current_state(r.state_info);
      if (state != "Instantiated" && state != "InstantiateStopped")
        fail(ErrorKind::conflict, what + " is not instantiated (state " + state + ")");
      ctx = last_instance(si);
      if (!ac::exists(st, ctx)) fail(ErrorKind::failed, what + ": its deployment context " + ctx + " is missing");
      ac::Header h = ac::header(st, ctx);
      if (state == "InstantiateStopped" || h.stop) ac::set_stop(st, ctx, false);
      children = h.children;
      for (const auto& c : children) sync::request_terminate(st, c);
      sync::request_terminate(st, ctx);
      record_hooks(st, o.runtime, key, ctx, op, 0, {{"pop", 1}, {"remove", false}});
      append_action(si, "Terminated", ctx, 0, clock);
      st.set_state_info(key, si.dump());
    });
    // The pre-termination hooks, then children, then the parent.
    Delivered d;
    if (o.wait)
      if (auto pre = run_hooks(st, ctx, "pre", o, deadline); pre && pre->delivery != Delivery::done) {
        fill(out, ctx, refused_by_hook(*pre, what, op));
        out.message = "terminated";
        return out;
      }
    for (const auto& c : children) {
      d = deliver(st, c, ac::status::terminated, o, deadline);
      if (d.delivery == Delivery::pending) break;
    }
    if (d.delivery != Delivery::pending || children.empty()) d = deliver(st, ctx, ac::status::terminated, o, deadline);
    fill(out, ctx, d);
    out.message = "terminated";
    return out;
  }

  if (op == "stop") {
    st.write([&] {
      auto r = load();
      json si = json::parse(r.state_info);
      std::string state = current_state(r.state_info);
      std::string next = state == "Instantiated" ? "InstantiateStopped" : state == "Terminated" ? "TerminateStopped" : "";
      if (next.empty()) fail(ErrorKind::conflict, what + " cannot be stopped in state " + state);
      std::string ctx = last_instance(si);
      if (!ac::exists(st, ctx)) fail(ErrorKind::conflict, what + " has no deployment in progress");
      // An update's work is on the new context and then its UpdateDelete on
      // the old one: stop whichever is in progress.
      std::vector<std::string> targets;
      for (const auto& id : ac::list(st, key)) {
        auto h = ac::header(st, id);
        if (h.status == ac::status::instantiating || h.status == ac::status::terminating ||
            h.status == ac::status::updating)
          targets.push_back(id);
      }
      if (targets.empty())
        fail(ErrorKind::conflict, what + " has no deployment in progress (its context is " + ac::header(st, ctx).status + ")");
      for (const auto& id : targets) ac::set_stop(st, id, true);
      append_action(si, next, ctx, 0, clock);
      st.set_state_info(key, si.dump());
      out.context = ctx;
      out.message = "stopped";
    });
    return out;
  }

  if (op == "update" || op == "rollback") {
    finish_queued(st, key, o, deadline);
    std::string from, to;
    ac::AppContext fresh;
    {
      auto r = load();
      json si = json::parse(r.state_info);
      std::string state = current_state(r.state_info);
      from = last_instance(si);
      if (op == "update" && ac::exists(st, from)) refuse_during_rollout(st, from, what, op);
      if (op == "update") {
        if (state != "Instantiated" && state != "InstantiateStopped")
          fail(ErrorKind::conflict, what + " is not instantiated (state " + state + ")",
               "instantiate it first; update rolls out intent changes to a running deployment");
        if (ac::exists(st, from) && sync::held_by_live_process(st, from))
          fail(ErrorKind::conflict, what + " is still being delivered", busy_hint(st, from));
        fresh = plan_dig(st, key, o, json::parse(r.state_info).value("statusctxid", ""), from);
        to = fresh.id;
      } else {
        if (state == "Updated")
          fail(ErrorKind::conflict, what + " was migrated; its revisions moved with it",
               "roll back the deployment intent group it was migrated to (see 'emco dig history -o json': migratedTo)");
        json spec = body.is_object() ? body.value("spec", json::object()) : json::object();
        if (!spec.contains("revision"))
          fail(ErrorKind::invalid, "rollback of " + what + " needs spec.revision", "e.g. spec: {revision: 1}");
        int n = 0;
        const json& rv = spec["revision"];
        try {
          n = rv.is_string() ? std::stoi(rv.get<std::string>()) : rv.get<int>();
        } catch (const std::exception&) {
          fail(ErrorKind::invalid, "rollback of " + what + ": revision " + rv.dump() + " is not a number");
        }
        for (const auto& a : si["actions"])
          if (a.value("revision", 0) == n && !a.value("instance", "").empty()) {
            to = a.value("instance", "");
            break;
          }
        if (to.empty()) fail(ErrorKind::not_found, what + " has no revision " + std::to_string(n));
        if (!ac::exists(st, to))
          fail(ErrorKind::not_found, what + ": the context of revision " + std::to_string(n) + " no longer exists",
               "it was removed by a later instantiate");
        if (to == from) fail(ErrorKind::conflict, what + " is already at revision " + std::to_string(n));
      }
      if (op == "rollback" && ac::exists(st, from)) refuse_during_rollout(st, from, what, op, to);
      if (!ac::exists(st, from)) fail(ErrorKind::failed, what + ": its deployment context " + from + " is missing");
    }
    st.write([&] {
      auto r = load();
      json si = json::parse(r.state_info);
      std::string status_ctx = si.value("statusctxid", "");
      int rev = last_revision(si);
      if (op == "update") {
        fresh.status_context = status_ctx;
        fresh.revision = rev + 1;
        ac::save(st, fresh);
      } else {
        ac::set_stop(st, to, false);
      }
      ac::set_stop(st, from, false);
      const int64_t seq = sync::enqueue_to_deliver(st, to, ac::event::update, from);
      owe_children(st, to, from);
      if (op == "update") record_rollout(st, o.runtime, key, to, op, seq, from);
      if (op == "update") record_hooks(st, o.runtime, key, to, op, rev + 1, {{"pop", 2}, {"remove", true}});
      else record_hooks(st, o.runtime, key, to, op, rev + 1, {{"pop", 2}, {"remove", false}});  // post steps only
      append_action(si, "Updated", from, rev, clock);
      append_action(si, "Instantiated", to, rev + 1, clock);
      st.set_state_info(key, si.dump());
      out.revision = rev + 1;
    });
    drop_planned(fresh);
    // The running context's children go with it; the new one gets its own.
    Delivered d = refused_by_hook(deliver(st, to, ac::status::instantiated, o, deadline), what, op);
    fill(out, to, with_children(st, to, clock, o, deadline, d));
    out.message = (op == "update" ? "updated to revision " : "rolled back as revision ") + std::to_string(out.revision);
    return out;
  }
  if (op == "migrate") return migrate_dig(st, k, key, body, clock, o);
  if (op == "clone") return clone_dig(st, k, key, body, clock);
  // An anchor upstream has (the kind lists it) that emco does not run yet.
  fail(ErrorKind::unsupported, "'" + op + "' of a " + k.display + " is not implemented in emco yet",
       "deployment intent groups support approve, instantiate, terminate, stop, update, rollback, migrate, clone");
}

}  // namespace

OperationResult run(store::Store& st, const Kind& k, const Key& key, const std::string& op, const json& body,
                    Clock& clock, const OperationOptions& options) {
  if (k.id == "deploymentIntentGroup") return dig_operation(st, k, key, op, body, clock, options);
  if (k.id == "logicalCloud") return lc_operation(st, k, key, op, body, clock, options);
  if (options.runtime)
    if (const ResourcePlanner* p = resource_planner(*options.runtime, k.id))
      return owned_operation(st, k, key, op, *p, clock, options);
  if (options.runtime)
    for (const auto& owner : options.runtime->operation_owners)
      if (owner->owns(k)) return owner->run(st, k, key, op, body, clock, options);
  // Anchors upstream has (cluster network apply, CA certificate enrollment,
  // services) whose controllers emco does not have yet: named after the
  // stored-only plugin owning the kind or its children (ncm for a cluster's).
  std::string feature;
  if (options.runtime) {
    const PluginInfo* p = stored_only_plugin(*options.runtime, k);
    for (const Kind* c : resource::children_of(k.id))
      if (!p) p = stored_only_plugin(*options.runtime, *c);
    if (p) feature = " (" + p->name + ")";
  }
  fail(ErrorKind::unsupported, "'" + op + "' of a " + k.display + feature + " is not implemented in emco yet",
       "deployment intent groups, logical clouds and the resources of running plugins have lifecycle operations today");
}

std::string run_operation(store::Store& st, const Kind& k, const Key& key, const std::string& op, const json& body,
                          Clock& clock, const Runtime& runtime) {
  OperationOptions o;
  o.runtime = &runtime;
  OperationResult r = run(st, k, key, op, body, clock, o);
  if (r.delivery == Delivery::failed)
    fail(ErrorKind::failed,
         store::describe(k, key) + ": " + op + " ended " + r.status +
             (r.failures.empty() ? "" : ": " + r.failures.front()),
         "see 'emco dig status' for each resource");
  if (r.delivery == Delivery::pending)
    fail(ErrorKind::pending, store::describe(k, key) + ": " + op + " is still in progress (" + r.status + ")",
         "run 'emco sync' to continue delivering, 'emco dig status' to follow it");
  return r.message;
}

std::vector<appcontext::OwedChildren> children_due(store::Store& st) {
  auto owed = ac::owed_children_with_status(st, ac::status::instantiated);
  std::erase_if(owed, [&](const ac::OwedChildren& o) { return !current_deployment(st, o.ctx); });
  return owed;
}

std::vector<ResumeResult> resume(store::Store& st, const OperationOptions& options) {
  std::vector<ResumeResult> out;
  auto deadline = deadline_of(options);
  // Pre hooks first: a terminate records its children's Terminate together
  // with the parent's pre-termination hooks, which must run before any child
  // is delivered (as in the uninterrupted run); a refused one undoes the
  // operation, children included, before the queues are listed.
  if (options.wait)
    for (const auto& id : contexts_with_hooks(st)) {
      if (!ac::exists(st, id)) continue;
      auto pre = run_hooks(st, id, "pre", options, deadline);
      if (!pre || pre->delivery == Delivery::done) continue;
      out.push_back({id, pre->delivery, pre->status, pre->failures});
      // Interrupted, or another process runs them (a delivery worker goes
      // on with the rest: that process delivers this one).
      const bool interrupted = options.interrupt && options.interrupt->load();
      if (pre->status != k_hook_refused && (options.wait_for_others || interrupted)) return out;
    }
  // Every context with queued work, also one another live process holds:
  // deliver() waits for that process (or for its lease to go stale) rather
  // than reporting "nothing queued" while work is queued.
  std::vector<std::string> ids = ac::active_contexts(st);
  // Contexts whose delivery drained before their post hooks ran, and
  // delivered ones whose children are still to make.
  for (const auto& id : contexts_with_hooks(st))
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  for (const auto& owed : children_due(st))
    if ((options.retry_children || owed.error.empty()) && std::find(ids.begin(), ids.end(), owed.ctx) == ids.end())
      ids.push_back(owed.ctx);
  // Children before their parent, as terminate delivers them (a parent's
  // post hooks run once it is done, after its children).
  const std::set<std::string> queued(ids.begin(), ids.end());
  std::stable_partition(ids.begin(), ids.end(), [&](const std::string& id) {
    return ac::exists(st, id) && queued.count(ac::header(st, id).parent) > 0;
  });
  for (const auto& id : ids) {
    if (!ac::exists(st, id)) {
      abandon_hooks(st, id);
      continue;
    }
    // What a waited operation does once its context is delivered: a DIG's
    // children, a logical cloud's user credentials.
    auto d = with_children(st, id, system_clock(), options, deadline, deliver(st, id, "", options, deadline));
    if (d.delivery == Delivery::done) {
      auto unserved = lc_resumed(st, id, options, deadline);
      if (!unserved.empty()) d.delivery = Delivery::failed;
      d.failures.insert(d.failures.end(), unserved.begin(), unserved.end());
    }
    out.push_back({id, d.delivery, d.status, d.failures});
    if (d.delivery == Delivery::pending && (options.wait_for_others || (options.interrupt && options.interrupt->load())))
      break;
  }
  return out;
}

WorkerReport work(store::Store& st, const OperationOptions& options, bool until_idle) {
  if (!ac::jobs::available(st))
    fail(ErrorKind::usage, "delivery workers need a workspace on PostgreSQL; this one is SQLite, delivered by one process",
         "run 'emco sync' to deliver queued work, or create a team workspace with 'emco init --store postgresql://...'");
  WorkerReport report;
  OperationOptions o = options;
  o.wait_for_others = false;
  o.retry_children = false;  // resume() runs over and over
  o.timeout = hours(24 * 365 * 100);  // a worker runs until interrupted
  const Runtime* runtime = o.runtime;
  sync::WorkerOptions wo;
  wo.engine = o.engine;
  wo.engine.parallel = o.parallel;
  wo.engine.interrupt = o.interrupt;
  wo.until_idle = true;  // back to look for contexts to drive
  wo.factory = [runtime, factory = o.factory](store::Store& s, const std::string& ctx) {
    return factory ? factory : cluster_targets(s, ctx, runtime);
  };
  auto interrupted = [&] { return o.interrupt && o.interrupt->load(); };
  while (!interrupted()) {
    // Contexts with queued work (or hooks) that no live process drives, as
    // emco sync drives them; those another process holds come back pending.
    bool drove = false;
    for (auto& r : resume(st, o)) {
      if (r.delivery == Delivery::pending && !interrupted()) continue;
      report.driven.push_back(std::move(r));
      drove = true;
    }
    const auto stats = sync::run_jobs(st, wo);
    report.jobs.jobs += stats.jobs;
    report.jobs.failed += stats.failed;
    report.jobs.lost += stats.lost;
    const bool busy = stats.jobs > 0 || stats.lost > 0;
    if (!drove && !busy && until_idle && ac::active_contexts(st).empty() && contexts_with_hooks(st).empty() &&
        !ac::jobs::claimable(st))
      break;
    if (!busy) std::this_thread::sleep_for(wo.idle_poll);
  }
  // The jobs of contexts this worker drove ran on its JobThreads, each
  // with a connection of its own.
  const auto threads = sync::job_thread_totals();
  report.jobs.jobs += threads.jobs;
  report.jobs.failed += threads.failed;
  report.jobs.lost += threads.lost;
  report.round_trips = st.round_trips() + threads.round_trips;
  return report;
}

}  // namespace emco::lifecycle
