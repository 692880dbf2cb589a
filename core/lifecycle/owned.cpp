// Lifecycle operations of resources a plugin's ResourcePlanner owns
// (runtime.hpp; ncm's cluster network intents, spec/lifecycle.md §4). The
// state machine follows upstream's ncm scheduler: apply from Created,
// Terminated or TerminateStopped (a no-op when already Applied or
// InstantiateStopped); terminate from Applied or InstantiateStopped (a no-op
// when already Terminated or TerminateStopped, refused from Created); stop
// from Applied (→ InstantiateStopped) or Terminated (→ TerminateStopped)
// while the context is Instantiating or Terminating. Each apply makes a new
// context owned by the resource; earlier ones are dropped.

#include <nlohmann/json.hpp>

#include "core/lifecycle/internal.hpp"
#include "core/sync/queue.hpp"
#include "core/util/error.hpp"

namespace emco::lifecycle::detail {

using nlohmann::json;
using resource::Key;
using resource::Kind;
namespace ac = emco::appcontext;

namespace {

std::string state_of(const store::Resource& r) {
  std::string s = current_state(r.state_info);
  return s.empty() ? "Created" : s;
}

}  // namespace

bool frozen_state(const std::string& state) { return !state.empty() && state != "Created" && state != "Terminated"; }

OperationResult owned_operation(store::Store& st, const Kind& k, const Key& key, const std::string& op,
                                const ResourcePlanner& planner, Clock& clock, const OperationOptions& o) {
  OperationResult out;
  const std::string what = planner.what() + " of " + store::describe(k, key);
  auto deadline = deadline_of(o);
  auto load = [&] {
    auto r = st.get(key);
    if (!r) fail(ErrorKind::not_found, store::describe(k, key) + " does not exist");
    return *r;
  };
  auto state_info = [&](const store::Resource& r) {
    return r.state_info.empty() ? json::parse(initial_state_info(clock)) : json::parse(r.state_info);
  };
  const std::string anchor = resource::resource_anchor(k, key);

  if (op == "apply") {
    finish_queued(st, key, o, deadline);
    std::string state = state_of(load());
    if (state == "Applied" || state == "InstantiateStopped") {
      out.message = "applied (unchanged)";
      return out;
    }
    if (state != "Created" && state != "Terminated" && state != "TerminateStopped")
      fail(ErrorKind::conflict, what + " cannot be applied in state " + state);
    // Planned outside the write transaction, like a DIG's: a failure changes nothing.
    ac::AppContext ctx = planner.plan(st, key);
    ctx.id = random_context_id();
    ctx.owner = {k.id, key};
    ctx.created = clock.now_rfc3339();
    ctx.revision = 1;
    st.write([&] {
      auto r = load();
      json si = state_info(r);
      std::string now = current_state(si.dump());
      if (now == "Applied" || now == "InstantiateStopped") fail(ErrorKind::conflict, what + " were applied meanwhile");
      for (const auto& old : ac::list(st, key))
        if (!sync::held_by_live_process(st, old)) ac::remove(st, old);
      ac::save(st, ctx);
      sync::enqueue_to_deliver(st, ctx.id, ac::event::instantiate);
      append_action(si, "Applied", ctx.id, 0, clock);
      si["statusctxid"] = ctx.id;
      st.set_state_info(key, si.dump());
    });
    fill(out, ctx.id, deliver(st, ctx.id, ac::status::instantiated, o, deadline));
    out.message = "applied";
    return out;
  }

  if (op == "terminate") {
    finish_queued(st, key, o, deadline);
    std::string ctx;
    bool noop = false;
    st.write([&] {
      noop = false;  // a re-run body (store::Database::transaction) decides afresh
      auto r = load();
      json si = state_info(r);
      std::string state = state_of(r);
      if (state == "Terminated" || state == "TerminateStopped") {
        noop = true;
        return;
      }
      if (state == "Created")
        fail(ErrorKind::conflict, what + " have not been applied", "apply them first: '" + anchor + "/apply'");
      if (state != "Applied" && state != "InstantiateStopped")
        fail(ErrorKind::conflict, what + " cannot be terminated in state " + state);
      ctx = last_instance(si);
      if (!ac::exists(st, ctx)) fail(ErrorKind::failed, what + ": their context " + ctx + " is missing");
      if (state == "InstantiateStopped" || ac::header(st, ctx).stop) ac::set_stop(st, ctx, false);
      sync::request_terminate(st, ctx);
      append_action(si, "Terminated", ctx, 0, clock);
      st.set_state_info(key, si.dump());
    });
    if (noop) {
      out.message = "terminated (unchanged)";
      return out;
    }
    fill(out, ctx, deliver(st, ctx, ac::status::terminated, o, deadline));
    out.message = "terminated";
    return out;
  }

  if (op == "stop") {
    st.write([&] {
      auto r = load();
      json si = state_info(r);
      std::string state = state_of(r);
      std::string next = state == "Applied" ? "InstantiateStopped" : state == "Terminated" ? "TerminateStopped" : "";
      if (state == "Created") fail(ErrorKind::conflict, what + " have not been applied");
      if (state == "InstantiateStopped" || state == "TerminateStopped")
        fail(ErrorKind::conflict, what + ": " + (state == "InstantiateStopped" ? "apply" : "terminate") +
                                      " is already stopped");
      if (next.empty()) fail(ErrorKind::conflict, what + " cannot be stopped in state " + state);
      std::string ctx = last_instance(si);
      std::string status = ac::exists(st, ctx) ? ac::header(st, ctx).status : "";
      if (status != ac::status::instantiating && status != ac::status::terminating)
        fail(ErrorKind::conflict, what + " are not being applied or terminated (their context is " +
                                      (status.empty() ? "missing" : status) + ")");
      ac::set_stop(st, ctx, true);
      append_action(si, next, ctx, 0, clock);
      st.set_state_info(key, si.dump());
      out.context = ctx;
      out.message = "stopped";
    });
    return out;
  }
  fail(ErrorKind::invalid, "'" + op + "' is not an operation of a " + k.display,
       "the " + planner.what() + " of a " + k.display + " support apply, terminate, stop");
}

}  // namespace emco::lifecycle::detail
