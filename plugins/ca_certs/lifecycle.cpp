// The lifecycle of a CA certificate: enrollment/{instantiate,update,terminate}
// and distribution/{instantiate,update,terminate}, run by core's
// lifecycle::run through this OperationOwner.
//
// State: the certificate's stateInfo keeps one history per phase,
//   {"statusctxid": "", "actions": [Created],
//    "enrollment":   {"statusctxid": "<ctx>", "actions": [...]},
//    "distribution": {"statusctxid": "<ctx>", "actions": [...]}}
// (upstream keeps two state records beside the certificate). Every context
// is owned by the certificate, saved and queued before delivery and driven
// by the sync engine, so `emco sync` resumes it after an interruption.
//
// Enrollment's private keys are stored in the workspace's credentials table
// under the certificate's key, named after their CertificateRequest; they go
// when the enrollment that made them is replaced or terminated.

#include <thread>

#include "core/lifecycle/lifecycle.hpp"
#include "core/status/status.hpp"
#include "core/store/credentials.hpp"
#include "core/sync/queue.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "plugins/ca_certs/ca_certs.hpp"
#include "plugins/ca_certs/plugin.hpp"

namespace emco::plugins::ca_certs {

using nlohmann::json;
using resource::Key;
using resource::Kind;
namespace ac = emco::appcontext;
namespace lc = emco::lifecycle;
using namespace std::chrono;

namespace {

bool instantiated(const std::string& state) { return state == "Instantiated" || state == "Updated"; }

json& phase_of(json& si, const std::string& phase) {
  if (!si.contains(phase) || !si[phase].is_object()) si[phase] = {{"statusctxid", ""}, {"actions", json::array()}};
  return si[phase];
}

std::string state_of(const json& ph) {
  const json& a = ph["actions"];
  return a.empty() ? "Created" : a.back().value("state", "Created");
}

int next_revision(const json& ph) {
  const json& a = ph["actions"];
  return a.empty() ? 1 : a.back().value("revision", 0) + 1;
}

json read_state(store::Store& st, const Key& key, const std::string& what) {
  auto r = st.get(key);
  if (!r) fail(ErrorKind::not_found, what + " does not exist");
  json si = r->state_info.empty() ? json::object() : json::parse(r->state_info);
  return si.is_object() ? si : json::object();
}

// The CertificateRequest manifests of an enrollment context, by edge cluster id.
std::map<std::string, std::string> requests_of(store::Store& st, const Intent& in, const std::string& ctx) {
  ac::AppContext c = ac::load(st, ctx);
  const ac::App* app = c.find_app(k_enrollment_app);
  const ac::Cluster* cl = app ? app->find_cluster(in.cert.issuing_cluster) : nullptr;
  std::map<std::string, std::string> out;
  for (const auto& e : in.clusters) {
    const ac::Resource* r = cl ? cl->find(object_name(ctx, in.cert, e, "cr") + "+CertificateRequest") : nullptr;
    if (r) out[e.id()] = r->text();
  }
  return out;
}

// Reads the enrollment's CertificateRequests back from the issuing cluster
// until every one is signed, one is refused, or the deadline passes.
// `missing`: edge clusters the enrollment has no request for (clusters
// added since: enrollment/update enrolls them).
struct Reading {
  std::map<std::string, Issued> issued;  // by edge cluster id (key filled in)
  std::vector<std::string> refused;      // "<cr>: <why>"
  std::vector<std::string> pending;      // CR names not signed yet
  std::vector<std::string> missing;
};

Reading read_issued(store::Store& st, const Intent& in, const std::string& ctx, const lc::OperationOptions& o,
                    steady_clock::time_point deadline, bool wait) {
  const auto requests = requests_of(st, in, ctx);
  sync::TargetFactory factory = o.factory ? o.factory : lc::live_targets(st, o.runtime);
  for (;;) {
    Reading r;
    std::shared_ptr<sync::Target> target;
    std::string unreachable;
    try {
      target = factory(in.cert.issuing_cluster, "default");
    } catch (const Error& e) {
      unreachable = e.message();
    }
    for (const auto& e : in.clusters) {
      auto req = requests.find(e.id());
      const std::string cr = object_name(ctx, in.cert, e, "cr");
      if (req == requests.end()) {
        r.missing.push_back(e.id());
        continue;
      }
      std::string text;
      if (target) {
        try {
          text = target->read(req->second);
        } catch (const sync::TargetError& err) {
          unreachable = err.message();
        }
      }
      std::string problem;
      std::optional<Issued> is;
      if (!text.empty()) {
        const json live = json::parse(text, nullptr, false);
        if (live.is_discarded())
          problem = "the issuing cluster answered something that is not a JSON object";
        else
          is = issued_by(live, problem);
      }
      if (is) {
        auto key = store::credential(st, in.cert.key.str(), cr);
        if (!key) {
          r.refused.push_back(cr + ": its private key is not in the workspace");
          continue;
        }
        is->key = *key;
        r.issued[e.id()] = std::move(*is);
      } else if (!problem.empty()) {
        r.refused.push_back(cr + ": " + problem);
      } else {
        r.pending.push_back(cr + (text.empty() ? (unreachable.empty() ? " (absent)" : " (" + unreachable + ")") : ""));
      }
    }
    bool stop = !wait || r.pending.empty() || steady_clock::now() >= deadline || (o.interrupt && o.interrupt->load());
    if (stop) return r;
    std::this_thread::sleep_for(milliseconds(250));
  }
}

// Removes the enrollment keys of context `ctx` (their names start with it).
void remove_keys(store::Store& st, const Key& cert, const std::string& ctx) {
  for (const auto& name : store::credential_names(st, cert.str()))
    if (name.rfind(ctx + "-", 0) == 0) store::remove_credentials(st, cert.str(), name);
}

// After enrollment's context is delivered: wait until the issuer signed every request.
void await_signing(lc::OperationResult& out, store::Store& st, const Intent& in, const std::string& ctx,
                   const lc::OperationOptions& o, steady_clock::time_point deadline) {
  if (out.delivery != lc::Delivery::done) return;
  Reading r = read_issued(st, in, ctx, o, deadline, true);
  for (const auto& f : r.refused) out.failures.push_back(in.cert.issuing_cluster + ": " + f);
  if (!r.refused.empty()) {
    out.delivery = lc::Delivery::failed;
  } else if (!r.pending.empty()) {
    out.delivery = lc::Delivery::pending;
    out.status = "waiting for " + in.cert.issuing_cluster + " to sign " + join(r.pending, ", ");
  }
}

class Owner : public lc::OperationOwner {
public:
  std::string name() const override { return "ca-certs"; }
  bool owns(const Kind& k) const override { return k.id == "caCertCp" || k.id == "caCertLc"; }

  lc::OperationResult run(store::Store& st, const Kind& k, const Key& key, const std::string& op, const json&,
                          Clock& clock, const lc::OperationOptions& o) const override {
    auto slash = op.find('/');
    const std::string phase = slash == std::string::npos ? "" : op.substr(0, slash);
    const std::string verb = slash == std::string::npos ? op : op.substr(slash + 1);
    if ((phase != "enrollment" && phase != "distribution") ||
        (verb != "instantiate" && verb != "terminate" && verb != "update"))
      fail(ErrorKind::invalid, "'" + op + "' is not an operation of a " + k.display,
           "CA certificates support enrollment/{instantiate,update,terminate} and distribution/{instantiate,update,terminate}");
    if (verb == "terminate") return terminate(st, k, key, phase, clock, o);
    return deliver_new(st, k, key, phase, verb == "update", clock, o);
  }

  // Upstream's CaCertStatus: the owner ("clusterProvider" or "project"), the
  // phase's stateInfo as "states", and the status of its context with the
  // one app's clusters lifted to "clusters". Like upstream's ca-certs
  // service, the query defaults to status=ready (the DIG's default is the
  // deprecated rsync names) and the list queries (apps, clusters,
  // resources) are not answered.
  json status(store::Store& st, const Kind& k, const Key& key, const std::string& what, const std::string& query,
              const sync::TargetFactory& live) const override {
    const std::string phase = what.substr(0, what.find('/'));
    if ((phase != "enrollment" && phase != "distribution") || what != phase + "/status")
      fail(ErrorKind::not_found, "'" + what + "' is not a status of a " + k.display,
           "CA certificates answer enrollment/status and distribution/status");
    status::Query q = status::parse_query(query);
    if (q.status.empty() && q.type.empty()) q.status = "ready";
    q.list_apps = q.list_clusters = q.list_resources = false;
    json si = read_state(st, key, store::describe(k, key));
    const std::string owner = k.id == "caCertCp" ? "clusterProvider" : "project";
    json out = {{owner, key.parts.front().second}};
    out = status::history_status(st, k, key, phase_of(si, phase).dump(), q, live, std::move(out), json::object());
    if (out.contains("apps")) {
      if (!out["apps"].empty()) out["clusters"] = out["apps"][0]["clusters"];
      out.erase("apps");
    }
    return out;
  }

private:
  // instantiate and update: a new context from the current intent.
  static lc::OperationResult deliver_new(store::Store& st, const Kind& k, const Key& key, const std::string& phase,
                                         bool update, Clock& clock, const lc::OperationOptions& o) {
    lc::OperationResult out;
    const std::string what = store::describe(k, key);
    const bool enrollment = phase == "enrollment";
    auto deadline = lc::deadline_of(o);
    lc::finish_queued(st, key, o, deadline);
    json si = read_state(st, key, what);
    const std::string state = state_of(phase_of(si, phase));
    const std::string from = lc::last_instance(phase_of(si, phase));
    if (update && !instantiated(state)) {
      out.message = phase + " not instantiated (unchanged)";
      return out;
    }
    if (!update && instantiated(state))
      fail(ErrorKind::conflict, what + ": " + phase + " is already instantiated",
           "use " + phase + "/update to roll out changes, or " + phase + "/terminate first");
    if (update && ac::exists(st, from) && sync::held_by_live_process(st, from))
      fail(ErrorKind::conflict, what + ": its " + phase + " is still being delivered", "wait for the other emco process");

    // Plan outside the write transaction: RSA keys take a while; a failure changes nothing.
    Intent in = load_intent(st, k, key);
    const std::string id = random_context_id();
    ac::AppContext ctx;
    std::map<std::string, std::string> keys;  // by CertificateRequest name
    if (enrollment) {
      std::map<std::string, std::string> csrs;
      for (const auto& e : in.clusters) {
        std::string pem = generate_key(in.cert.key_size);
        csrs[e.id()] = make_csr(in.cert, common_name(in.cert, e), pem);
        keys[object_name(id, in.cert, e, "cr")] = std::move(pem);
      }
      ctx = enrollment_context(in, id, csrs, clock.now_rfc3339());
    } else {
      json esi = phase_of(si, "enrollment");
      const std::string ectx = lc::last_instance(esi);
      if (!instantiated(state_of(esi)) || !ac::exists(st, ectx))
        fail(ErrorKind::conflict, what + ": enrollment is not instantiated",
             "run '" + resource::resource_anchor(k, key) + "/enrollment/instantiate' first");
      std::string estatus = ac::header(st, ectx).status;
      if (estatus != ac::status::instantiated && estatus != ac::status::updated)
        fail(ErrorKind::conflict, what + ": enrollment is not complete (its context is " + estatus + ")",
             "run 'emco sync' to finish it");
      Reading r = read_issued(st, in, ectx, o, deadline, false);
      if (!r.missing.empty())
        fail(ErrorKind::conflict, what + ": cluster " + join(r.missing, ", ") + " is not enrolled",
             "run '" + resource::resource_anchor(k, key) + "/enrollment/update' to enroll the clusters added since");
      if (!r.refused.empty() || !r.pending.empty()) {
        std::vector<std::string> all = r.refused;
        all.insert(all.end(), r.pending.begin(), r.pending.end());
        fail(ErrorKind::conflict, what + ": enrollment is not ready: " + join(all, "; "),
             "wait for the issuer on " + in.cert.issuing_cluster + " to sign, or run '" +
                 resource::resource_anchor(k, key) + "/enrollment/update'");
      }
      ctx = distribution_context(in, id, r.issued, clock.now_rfc3339());
    }

    st.write([&] {
      json cur = read_state(st, key, what);
      json& ph = phase_of(cur, phase);
      int rev = next_revision(ph);
      if (update) {
        ctx.status_context = ph.value("statusctxid", "");
        ac::set_stop(st, from, false);
        ac::save(st, ctx);
        sync::enqueue_to_deliver(st, ctx.id, ac::event::update, from);
        lc::append_action(ph, "Updated", from, rev, clock);
        lc::append_action(ph, "Instantiated", ctx.id, rev + 1, clock);
        out.revision = rev + 1;
      } else {
        // Earlier instantiations' contexts of this phase are dropped.
        for (const auto& a : ph["actions"]) {
          std::string old = a.value("instance", "");
          if (!old.empty() && ac::exists(st, old) && !sync::held_by_live_process(st, old)) ac::remove(st, old);
        }
        ac::save(st, ctx);
        sync::enqueue_to_deliver(st, ctx.id, ac::event::instantiate);
        lc::append_action(ph, "Instantiated", ctx.id, rev, clock);
        ph["statusctxid"] = ctx.id;
        out.revision = rev;
      }
      for (const auto& [name, pem] : keys) store::put_credential(st, key.str(), name, pem, clock.now_rfc3339());
      if (cur.empty() || !cur.contains("actions")) cur.update(json::parse(lc::initial_state_info(clock)));
      st.set_state_info(key, cur.dump());
    });
    lc::deliver_into(out, st, ctx.id, ac::status::instantiated, o, deadline);
    if (enrollment) {
      await_signing(out, st, in, ctx.id, o, deadline);
      // The replaced enrollment's keys are no longer needed once the new one is signed.
      if (update && out.delivery == lc::Delivery::done) remove_keys(st, key, from);
    }
    out.message = phase + (update ? " updated to revision " + std::to_string(out.revision) : " instantiated");
    return out;
  }

  static lc::OperationResult terminate(store::Store& st, const Kind& k, const Key& key, const std::string& phase,
                                       Clock& clock, const lc::OperationOptions& o) {
    lc::OperationResult out;
    const std::string what = store::describe(k, key);
    auto deadline = lc::deadline_of(o);
    lc::finish_queued(st, key, o, deadline);
    std::string ctx;
    st.write([&] {
      json si = read_state(st, key, what);
      json& ph = phase_of(si, phase);
      std::string state = state_of(ph);
      if (!instantiated(state)) fail(ErrorKind::conflict, what + ": " + phase + " is not instantiated (state " + state + ")");
      ctx = lc::last_instance(ph);
      if (!ac::exists(st, ctx)) fail(ErrorKind::failed, what + ": its " + phase + " context " + ctx + " is missing");
      if (ac::header(st, ctx).stop) ac::set_stop(st, ctx, false);
      sync::request_terminate(st, ctx);
      lc::append_action(ph, "Terminated", ctx, next_revision(ph), clock);
      st.set_state_info(key, si.dump());
      // Upstream deletes the private keys with the enrollment.
      if (phase == "enrollment") remove_keys(st, key, ctx);
    });
    lc::deliver_into(out, st, ctx, ac::status::terminated, o, deadline);
    out.message = phase + " terminated";
    return out;
  }
};

}  // namespace

std::vector<PhaseStatus> status(store::Store& st, const Kind& k, const Key& key) {
  json si = read_state(st, key, store::describe(k, key));
  std::vector<PhaseStatus> out;
  for (const char* phase : {"enrollment", "distribution"}) {
    const json& ph = phase_of(si, phase);
    PhaseStatus ps;
    ps.phase = phase;
    ps.state = state_of(ph);
    ps.actions = ph["actions"];
    ps.context = lc::last_instance(ph);
    if (!ps.context.empty() && ac::exists(st, ps.context)) {
      ac::AppContext c = ac::load(st, ps.context, ac::Sealed::keep);  // names and states only
      ps.context_status = c.status;
      std::map<std::string, ac::ResourceState> recorded;
      for (auto& r : ac::resource_states(st, c.status_id())) recorded[r.cluster + "\n" + r.resource] = r;
      for (const auto& app : c.apps)
        for (const auto& cl : app.clusters)
          for (const auto& r : cl.resources) {
            auto it = recorded.find(cl.name + "\n" + r.name);
            ps.objects.push_back({cl.name, r.name, it == recorded.end() ? ac::resource_status::pending : it->second.status,
                                  it == recorded.end() ? "" : it->second.message});
          }
    }
    out.push_back(std::move(ps));
  }
  return out;
}

void install_lifecycle(lifecycle::Runtime& runtime) { runtime.operation_owners.push_back(std::make_unique<Owner>()); }

}  // namespace emco::plugins::ca_certs
