// Logical-cloud lifecycle operations (logical-clouds.md, lifecycle.md §3).
// Admin (level 0) clouds record their state only; they change nothing on
// clusters. Standard and privileged (level 1) clouds deliver their objects
// (lc_dcm.hpp) with the clusters' admin kubeconfigs through the sync engine,
// then emco approves the user's CSR on every direct cluster, waits for the
// certificate and stores the user's kubeconfig (credentials.hpp) — only then
// is the cloud ready for DIGs (upstream reports Instantiated too early).

#include <thread>

#include <nlohmann/json.hpp>

#include "core/lifecycle/credentials.hpp"
#include "core/lifecycle/internal.hpp"
#include "core/lifecycle/lc_dcm.hpp"
#include "core/sync/queue.hpp"
#include "core/util/error.hpp"

namespace emco::lifecycle::detail {

using nlohmann::json;
using resource::Key;
using resource::Kind;
namespace ac = emco::appcontext;
using namespace std::chrono;

namespace {

bool is_instantiated(const std::string& state) {
  return state == "Instantiated" || state == "Updated" || state == "InstantiateStopped";
}

int next_revision(const json& si) { return si["actions"].empty() ? 1 : si["actions"].back().value("revision", 0) + 1; }

// Deployment intent groups instantiated in the cloud block its terminate:
// their workloads would lose their namespace and credentials underneath them.
void check_no_instantiated_digs(store::Store& st, const Key& lc, const std::string& what) {
  std::vector<std::string> running;
  const auto& dig_kind = resource::kind("deploymentIntentGroup");
  for (const auto& r : st.referrers(lc)) {
    if (r.kind != &dig_kind) continue;
    std::string state = current_state(r.state_info);
    if (state == "Instantiated" || state == "InstantiateStopped") running.push_back(resource::resource_anchor(dig_kind, r.key));
  }
  if (running.empty()) return;
  std::string list;
  for (const auto& a : running) list += (list.empty() ? "'" : ", '") + a + "'";
  fail(ErrorKind::conflict,
       "cannot terminate " + what + ": " + std::to_string(running.size()) + " deployment intent group" +
           (running.size() == 1 ? " is" : "s are") + " instantiated in it: " + list,
       "terminate " + std::string(running.size() == 1 ? "it" : "them") + " first (emco dig terminate)");
}

std::string admin_kubeconfig(store::Store& st, const std::string& cluster) {
  auto plus = cluster.find('+');
  Key ck;
  ck.parts = {{"clusterProvider", cluster.substr(0, plus)}, {"cluster", cluster.substr(plus + 1)}};
  auto r = st.get(ck);
  if (r)
    for (const auto& f : r->contents) {
      if (f.name == "file" && f.sealed) st.fail_sealed(f.data, "the kubeconfig of " + store::describe(*r->kind, ck));
      if (f.name == "file" && !f.data.empty()) return f.data;
    }
  fail(ErrorKind::not_found, "cluster '" + cluster + "' has no kubeconfig",
       "attach one with the cluster's 'file:' (emco cluster update ... --kubeconfig FILE)");
}

const ClusterAdmin& cluster_admin(const OperationOptions& o) {
  if (!o.runtime || !o.runtime->cluster_admin)
    fail(ErrorKind::internal, "logical clouds need the runtime's cluster-admin operations");
  return *o.runtime->cluster_admin;
}

// Issues and stores the user's kubeconfig on every direct cluster of `ctx`
// that has none yet; removes those of clusters the context no longer has.
// Returns one failure per cluster it could not serve.
std::vector<std::string> sync_credentials(store::Store& st, const lc::Cloud& c, const ac::AppContext& ctx,
                                          const std::string& key_pem, Clock& clock, const OperationOptions& o,
                                          steady_clock::time_point deadline) {
  std::map<std::string, const lc::ClusterRef*> refs;
  for (const auto& r : c.clusters) refs[r.cluster] = &r;
  std::set<std::string> wanted;
  if (const ac::App* app = ctx.find_app("logical-cloud"))
    for (const auto& cl : app->clusters)
      if (cl.find(lc::csr_name(c) + "+CertificateSigningRequest")) wanted.insert(cl.name);
  for (const auto& have : tenant_clusters(st, c.key))
    if (!wanted.count(have)) remove_tenant_kubeconfigs(st, c.key, have);
  std::vector<std::string> failures;
  for (const auto& cluster : wanted) {
    if (tenant_kubeconfig(st, c.key, cluster)) continue;
    try {
      std::string admin = admin_kubeconfig(st, cluster);
      const ClusterAdmin& ca = cluster_admin(o);
      std::string cert = ca.issue_certificate(cluster, admin, lc::csr_name(c), deadline, o.interrupt);
      std::string ref = refs.count(cluster) ? refs[cluster]->ref : cluster;
      store_tenant_kubeconfig(st, c.key, cluster, ca.user_kubeconfig(ref, c.user, c.ns, admin, cert, key_pem),
                              clock.now_rfc3339());
    } catch (const Error& e) {
      failures.push_back(cluster + ": user credentials not issued: " + e.message());
    }
  }
  return failures;
}

void finish_credentials(OperationResult& out, std::vector<std::string> failures) {
  if (failures.empty()) return;
  out.delivery = Delivery::failed;
  out.failures.insert(out.failures.end(), failures.begin(), failures.end());
}

// The cloud's key: the stored one, else a new one (stored by the caller).
std::string key_of(store::Store& st, const Key& lc, bool& fresh) {
  auto k = tenant_key(st, lc);
  fresh = !k;
  return k ? *k : lc::generate_key();
}

OperationResult level1_instantiate(store::Store& st, const Kind& k, const Key& key, Clock& clock,
                                   const OperationOptions& o) {
  OperationResult out;
  const std::string what = store::describe(k, key);
  auto deadline = deadline_of(o);
  finish_queued(st, key, o, deadline);
  auto check_state = [&] {
    auto r = st.get(key);
    if (!r) fail(ErrorKind::not_found, what + " does not exist");
    std::string state = current_state(r->state_info);
    if (is_instantiated(state))
      fail(ErrorKind::conflict, what + " is already instantiated",
           "use 'emco lc update' to roll out changes, or 'emco lc terminate' first");
    return *r;
  };
  check_state();
  lc::Cloud c = lc::load(st, key);
  lc::check_level1(c);
  // The key and CSR are made outside the write transaction: 4096-bit RSA
  // generation takes a while and touches no state.
  bool fresh_key = false;
  std::string key_pem = key_of(st, key, fresh_key);
  ac::AppContext ctx = lc::build_context(c, lc::make_csr(key_pem, c.user), nullptr, clock.now_rfc3339());
  ctx.revision = 1;
  st.write([&] {
    auto r = check_state();
    json si = r.state_info.empty() ? json::parse(initial_state_info(clock)) : json::parse(r.state_info);
    for (const auto& old : ac::list(st, key))
      if (!sync::held_by_live_process(st, old)) ac::remove(st, old);
    if (fresh_key) store_tenant_key(st, key, key_pem, clock.now_rfc3339());
    ac::save(st, ctx);
    sync::enqueue_to_deliver(st, ctx.id, ac::event::instantiate);
    append_action(si, "Instantiated", ctx.id, next_revision(si), clock);
    si["statusctxid"] = ctx.id;
    st.set_state_info(key, si.dump());
  });
  fill(out, ctx.id, deliver(st, ctx.id, ac::status::instantiated, o, deadline));
  out.message = "instantiated";
  if (out.delivery == Delivery::done) finish_credentials(out, sync_credentials(st, c, ctx, key_pem, clock, o, deadline));
  return out;
}

OperationResult level1_update(store::Store& st, const Kind& k, const Key& key, Clock& clock, const OperationOptions& o) {
  OperationResult out;
  const std::string what = store::describe(k, key);
  auto deadline = deadline_of(o);
  auto r = st.get(key);
  if (!r) fail(ErrorKind::not_found, what + " does not exist");
  if (!is_instantiated(current_state(r->state_info))) {
    out.message = "not instantiated (unchanged)";
    return out;
  }
  finish_queued(st, key, o, deadline);
  std::string from = last_instance(json::parse(r->state_info));
  if (!ac::exists(st, from)) fail(ErrorKind::failed, what + ": its deployment context " + from + " is missing");
  if (sync::held_by_live_process(st, from))
    fail(ErrorKind::conflict, what + " is still being delivered", "another emco process is delivering it; wait for it");
  lc::Cloud c = lc::load(st, key);
  lc::check_level1(c);
  bool fresh_key = false;
  std::string key_pem = key_of(st, key, fresh_key);
  ac::AppContext old = ac::load(st, from);
  ac::AppContext fresh = lc::build_context(c, lc::make_csr(key_pem, c.user), &old, clock.now_rfc3339());
  size_t changed = 0;
  for (const auto& d : ac::diff(old, fresh))
    if (!d.empty() || d.presence != ac::ClusterDiff::Presence::both) ++changed;
  if (fresh_key) store_tenant_key(st, key, key_pem, clock.now_rfc3339());
  if (changed == 0) {
    // Nothing to deliver; credentials a failed run left unissued are retried.
    out.message = "unchanged on clusters";
    out.context = from;
    out.status = old.status;
    finish_credentials(out, sync_credentials(st, c, old, key_pem, clock, o, deadline));
    return out;
  }
  st.write([&] {
    auto cur = st.get(key);
    json si = json::parse(cur->state_info);
    fresh.status_context = si.value("statusctxid", "");
    int rev = next_revision(si);
    fresh.revision = rev + 1;
    ac::save(st, fresh);
    ac::set_stop(st, from, false);
    sync::enqueue_to_deliver(st, fresh.id, ac::event::update, from);
    append_action(si, "Updated", from, rev, clock);
    append_action(si, "Instantiated", fresh.id, rev + 1, clock);
    st.set_state_info(key, si.dump());
    out.revision = rev + 1;
  });
  fill(out, fresh.id, deliver(st, fresh.id, ac::status::instantiated, o, deadline));
  out.message = "updated (" + std::to_string(changed) + " cluster" + (changed == 1 ? "" : "s") + " changed)";
  if (out.delivery == Delivery::done) finish_credentials(out, sync_credentials(st, c, fresh, key_pem, clock, o, deadline));
  return out;
}

OperationResult level1_terminate(store::Store& st, const Kind& k, const Key& key, Clock& clock,
                                 const OperationOptions& o) {
  OperationResult out;
  const std::string what = store::describe(k, key);
  auto deadline = deadline_of(o);
  finish_queued(st, key, o, deadline);
  std::string ctx;
  st.write([&] {
    auto r = st.get(key);
    if (!r) fail(ErrorKind::not_found, what + " does not exist");
    std::string state = current_state(r->state_info);
    if (!is_instantiated(state)) fail(ErrorKind::conflict, what + " is not instantiated (state " + state + ")");
    check_no_instantiated_digs(st, key, what);
    json si = json::parse(r->state_info);
    ctx = last_instance(si);
    if (!ac::exists(st, ctx)) fail(ErrorKind::failed, what + ": its deployment context " + ctx + " is missing");
    if (ac::header(st, ctx).stop) ac::set_stop(st, ctx, false);
    sync::request_terminate(st, ctx);
    append_action(si, "Terminated", ctx, next_revision(si), clock);
    st.set_state_info(key, si.dump());
    // The user's credentials go with the cloud (upstream deletes the level-1
    // CloudConfigs); the key too: a new instantiate issues new ones.
    remove_tenant_kubeconfigs(st, key);
  });
  fill(out, ctx, deliver(st, ctx, ac::status::terminated, o, deadline));
  out.message = "terminated";
  return out;
}

OperationResult level1_stop(store::Store& st, const Kind& k, const Key& key, Clock& clock) {
  OperationResult out;
  const std::string what = store::describe(k, key);
  st.write([&] {
    auto r = st.get(key);
    if (!r) fail(ErrorKind::not_found, what + " does not exist");
    json si = json::parse(r->state_info.empty() ? initial_state_info(clock) : r->state_info);
    std::string state = current_state(si.dump());
    std::string next = is_instantiated(state) ? "InstantiateStopped" : state == "Terminated" ? "TerminateStopped" : "";
    std::vector<std::string> targets;
    for (const auto& id : ac::list(st, key)) {
      auto h = ac::header(st, id);
      if (h.status == ac::status::instantiating || h.status == ac::status::terminating || h.status == ac::status::updating)
        targets.push_back(id);
    }
    if (next.empty() || targets.empty())
      fail(ErrorKind::conflict, what + " has no deployment in progress (state " + state + ")");
    for (const auto& id : targets) ac::set_stop(st, id, true);
    append_action(si, next, last_instance(si), next_revision(si), clock);
    st.set_state_info(key, si.dump());
    out.message = "stopped";
  });
  return out;
}

}  // namespace

std::vector<std::string> lc_resumed(store::Store& st, const std::string& ctx, const OperationOptions& o,
                                    steady_clock::time_point deadline) {
  const ac::Header h = ac::header(st, ctx);
  if (h.owner_kind != "logicalCloud" || h.status != ac::status::instantiated) return {};
  const Key key = Key::parse(h.owner_key);
  auto r = st.get(key);
  // Only the cloud's current context: an update's new one, not the old.
  if (!r || r->state_info.empty() || lc_level(*r) == "0" || last_instance(json::parse(r->state_info)) != ctx) return {};
  auto key_pem = tenant_key(st, key);
  if (!key_pem) return {};
  return sync_credentials(st, lc::load(st, key), ac::load(st, ctx), *key_pem, system_clock(), o, deadline);
}

OperationResult lc_operation(store::Store& st, const Kind& k, const Key& key, const std::string& op, const json& body,
                             Clock& clock, const OperationOptions& options) {
  (void)body;
  if (op != "instantiate" && op != "terminate" && op != "update" && op != "stop")
    fail(ErrorKind::invalid, "'" + op + "' is not an operation of a " + k.display,
         "logical clouds support instantiate, terminate, update, stop");
  auto r = st.get(key);
  if (!r) fail(ErrorKind::not_found, store::describe(k, key) + " does not exist");
  if (lc_level(*r) != "0") {
    if (op == "instantiate") return level1_instantiate(st, k, key, clock, options);
    if (op == "update") return level1_update(st, k, key, clock, options);
    if (op == "terminate") return level1_terminate(st, k, key, clock, options);
    return level1_stop(st, k, key, clock);
  }
  OperationResult out;
  st.write([&] {
    auto current = st.get(key);
    if (!current) fail(ErrorKind::not_found, store::describe(k, key) + " does not exist");
    json si = current->state_info.empty() ? json::parse(initial_state_info(clock)) : json::parse(current->state_info);
    std::string state = current_state(si.dump());
    const std::string what = store::describe(k, key);
    int rev = next_revision(si);
    if (op == "instantiate") {
      if (is_instantiated(state))
        fail(ErrorKind::conflict, what + " is already instantiated", "use 'emco lc terminate' first to instantiate it again");
      if (st.list(resource::kind("clusterReference"), key).empty())
        fail(ErrorKind::conflict, what + " has no cluster references",
             "add one under '" + resource::resource_anchor(k, key) + "/cluster-references' first");
      // An admin cloud changes nothing on clusters: record the empty-shell
      // context and the Instantiated state (logical-clouds.md, level 0).
      std::string ctx = random_context_id();
      append_action(si, "Instantiated", ctx, rev, clock);
      si["statusctxid"] = ctx;
      out.message = "instantiated";
    } else if (op == "terminate") {
      // An update of a logical cloud records "Updated": it stays instantiated.
      if (!is_instantiated(state)) fail(ErrorKind::conflict, what + " is not instantiated (state " + state + ")");
      check_no_instantiated_digs(st, key, what);
      append_action(si, "Terminated", last_instance(si), rev, clock);
      out.message = "terminated";
    } else if (op == "update") {
      // lifecycle.md §3: a no-op unless Instantiated. An admin cloud has
      // nothing on clusters to change, so the update is the new record.
      if (!is_instantiated(state)) {
        out.message = "not instantiated (unchanged)";
        return;
      }
      append_action(si, "Updated", random_context_id(), rev, clock);
      out.message = "updated";
    } else {
      // Stop needs delivery in progress; an admin cloud's never is.
      fail(ErrorKind::conflict, what + " has no deployment in progress (state " + state + ")");
    }
    st.set_state_info(key, si.dump());
  });
  return out;
}

}  // namespace emco::lifecycle::detail
