// tac at the hook points (runtime.hpp OperationHooks), in upstream's order
// (src/tac/internal/action): at a pre point, the worker DIGs of that point's
// hooks are instantiated (only those Approved or Terminated: an Instantiated
// one is someone else's and left alone; any other state refuses the
// operation), then each hook's workflow is started through its client; at
// the post point, those worker DIGs are terminated, then the post hooks run.
// A hook is blocking unless spec.hookBlocking is false (upstream's example
// sets it; upstream fails the operation on any hook error).

#include <algorithm>
#include <thread>

#include "core/lifecycle/lifecycle.hpp"
#include "core/status/status.hpp"
#include "core/util/error.hpp"
#include "plugins/tac/tac.hpp"

namespace emco::plugins::tac {

using nlohmann::json;
using resource::Key;
namespace lc = emco::lifecycle;
using namespace std::chrono;

namespace {

json spec_of(const store::Resource& r) { return json::parse(r.data).value("spec", json::object()); }
std::string anchor_of(const store::Resource& r) { return resource::resource_anchor(*r.kind, r.key); }

lc::HookPoint pre_of(lc::HookPoint p) {
  switch (p) {
    case lc::HookPoint::post_install: return lc::HookPoint::pre_install;
    case lc::HookPoint::post_update: return lc::HookPoint::pre_update;
    case lc::HookPoint::post_termination: return lc::HookPoint::pre_termination;
    default: return p;
  }
}
bool is_pre(lc::HookPoint p) { return pre_of(p) == p; }

std::vector<store::Resource> hooks_at(const store::Store& st, const Key& dig, lc::HookPoint p) {
  std::vector<store::Resource> out;
  for (auto& r : st.list(resource::kind("workflowHookIntent"), dig))
    if (spec_of(r).value("hookType", "") == lc::hook_point_name(p)) out.push_back(std::move(r));
  return out;
}

struct Worker {
  Key dig;
  long long timeout_ms = 0;
  std::string label;  // "worker DIG 'ca/v1/dig'"
};

// The worker DIGs emco manages for the hooks at pre point `p`: Approved or
// Terminated ones (upstream verifyWorkers), each once.
std::vector<Worker> managed_workers(const store::Store& st, const Key& dig, lc::HookPoint p) {
  std::vector<Worker> out;
  for (const auto& h : hooks_at(st, dig, p))
    for (const auto& w : st.list(resource::kind("workerIntent"), h.key)) {
      json s = spec_of(w);
      Key key;
      key.parts = {dig.parts.front(), {"compositeApp", s.value("compositeApp", "")},
                   {"compositeAppVersion", s.value("compositeAppVersion", "")},
                   {"deploymentIntentGroup", s.value("deploymentIntentGroup", "")}};
      const std::string where = "tac worker '" + anchor_of(w) + "'";
      const std::string names = "deployment intent group '" + s.value("compositeApp", "") + "/" +
                                s.value("compositeAppVersion", "") + "/" + s.value("deploymentIntentGroup", "") + "'";
      auto r = st.get(key);
      if (!r)
        fail(ErrorKind::not_found, where + ": its worker " + names + " does not exist",
             "create and approve the worker DIG first, or fix spec.compositeApp, spec.compositeAppVersion and "
             "spec.deploymentIntentGroup");
      std::string state = lc::current_state(r->state_info);
      if (state == "Instantiated") continue;  // already running: not emco's to manage
      if (state != "Approved" && state != "Terminated")
        fail(ErrorKind::conflict, where + ": its worker " + names + " is " + (state.empty() ? "Created" : state) +
                                      "; a worker DIG must be Approved (tac instantiates and terminates it) or "
                                      "already Instantiated",
             "approve it: 'emco dig approve " + s.value("compositeApp", "") + "/" + s.value("compositeAppVersion", "") +
                 "/" + s.value("deploymentIntentGroup", "") + "' (with -p PROJECT)");
      if (std::none_of(out.begin(), out.end(), [&](const Worker& o) { return o.dig == key; }))
        out.push_back({key, s.value("startToCloseTimeout", 1000000LL), "worker DIG '" + names.substr(25)});
    }
  return out;
}

// As upstream's deployWorkers: a worker DIG must also be Ready (its DIG
// status' readyStatus: every object present and ready) within its
// startToCloseTimeout (o.timeout), counted from `started`. Sets out.ok false
// with the reason when it is not.
void await_ready(const lc::HookCall& call, const Key& worker, const lc::OperationOptions& o,
                 steady_clock::time_point started, lc::HookOutcome& out) {
  status::Query ready;
  ready.status = "ready";
  ready.output = "summary";
  const sync::TargetFactory live = o.factory ? o.factory : lc::live_targets(call.st, o.runtime);
  for (;;) {
    const std::string now = status::dig_status(call.st, worker, ready, live).value("readyStatus", "");
    if (now == "Ready") {
      out.message += ", Ready";
      return;
    }
    if (steady_clock::now() >= started + o.timeout || (o.interrupt && o.interrupt->load())) {
      out.ok = false;
      out.message += ": not Ready within its startToCloseTimeout (readyStatus " + now + ")";
      return;
    }
    if (call.keepalive) call.keepalive();
    std::this_thread::sleep_for(milliseconds(200));
  }
}

class TacHooks : public lc::OperationHooks {
public:
  std::string name() const override { return "tac"; }

  std::vector<lc::HookStep> steps(const store::Store& st, const Key& dig, lc::HookPoint point) const override {
    std::vector<lc::HookStep> out;
    const std::string action = is_pre(point) ? "instantiate" : "terminate";
    for (const auto& w : managed_workers(st, dig, pre_of(point)))
      out.push_back({"tac", w.label + ": " + action,
                     action + "|" + std::to_string(w.timeout_ms) + "|" + w.dig.str(), true});
    for (const auto& h : hooks_at(st, dig, point))
      out.push_back({"tac", "tac intent '" + h.key.parts.back().second + "'", h.key.str(),
                     spec_of(h).value("hookBlocking", true)});
    return out;
  }

  lc::HookOutcome run(const lc::HookCall& call, const lc::HookStep& step) const override {
    lc::HookOutcome out;
    const auto left = duration_cast<milliseconds>(call.deadline - steady_clock::now());
    if (step.ref.find('|') == std::string::npos) {
      auto r = call.st.get(Key::parse(step.ref));
      if (!r) {
        out.message = step.name + " no longer exists";
        return out;
      }
      const json spec = spec_of(*r);
      Answer a;
      call.keep_alive_during([&] { a = invoke(spec, std::max(milliseconds(1000), left)); });
      out.ok = a.ok;
      out.message = a.message;
      return out;
    }
    // A worker DIG: instantiate or terminate it and wait for the delivery,
    // at most its startToCloseTimeout (milliseconds, as upstream).
    const auto bar = step.ref.find('|'), bar2 = step.ref.find('|', bar + 1);
    const std::string action = step.ref.substr(0, bar);
    const milliseconds limit(std::stoll(step.ref.substr(bar + 1, bar2 - bar - 1)));
    const Key key = Key::parse(step.ref.substr(bar2 + 1));
    lc::OperationOptions o = call.options;
    o.timeout = std::max(milliseconds(1), std::min(limit, left));
    // The worker's delivery reports progress on this thread: keep the
    // operation's context held meanwhile.
    o.progress = [&call, outer = call.options.progress](const std::string& ctx, const std::string& event,
                                                          const sync::Progress& p) {
      if (call.keepalive) call.keepalive();
      if (outer) outer(ctx, event, p);
    };
    const auto& k = resource::kind("deploymentIntentGroup");
    const auto started = steady_clock::now();
    auto r = call.st.get(key);
    if (!r) {
      out.message = step.name + ": the DIG no longer exists";
      return out;
    }
    const std::string state = lc::current_state(r->state_info);
    const bool there = action == "instantiate" ? state == "Instantiated" : state == "Terminated";
    if (there) {
      // A process killed while it ran this step recorded the operation:
      // finish its delivery.
      lc::finish_queued(call.st, key, o, lc::deadline_of(o));
      out.ok = true;
      out.message = "worker DIG already " + state + " (finished its queued work)";
      if (action == "instantiate") await_ready(call, key, o, started, out);
      return out;
    }
    lc::OperationResult res = lc::run(call.st, k, key, action, json::object(), call.clock, o);
    out.ok = res.delivery == lc::Delivery::done || res.delivery == lc::Delivery::none;
    out.message = "worker DIG " + res.message + " (" + res.status + ")";
    if (!out.ok) {
      out.message += res.delivery == lc::Delivery::pending ? ": not ready within its startToCloseTimeout" : "";
      if (!res.failures.empty()) out.message += ": " + res.failures.front();
      return out;
    }
    if (action == "instantiate") await_ready(call, key, o, started, out);
    return out;
  }
};

}  // namespace

std::unique_ptr<lc::OperationHooks> make_hooks() { return std::make_unique<TacHooks>(); }

}  // namespace emco::plugins::tac
