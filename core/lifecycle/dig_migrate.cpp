// DIG migrate and clone (lifecycle.md §2; upstream orchestrator's
// update.go Migrate and instantiation.go CloneDig).
//
// migrate moves a running deployment to another DIG of the same composite
// app (usually under a newer composite app version): the target is planned
// with the source's running context as "update from", so delivery is an
// update — only the difference reaches the clusters. Where upstream leaves
// the source's contexts behind, emco hands them to the target together with
// the source's revisions, so the target can be rolled back across the
// migrate and deleting the retired source cannot remove a context the target
// may return to.
//
// clone copies a DIG with every resource below it (group intents, placement
// and app intents, controller intents) under new names; the copies start
// Created. Upstream copies only the group and placement intents and leaves
// controller intents behind, so its clones of a DIG naming gac or dtc
// intents fail at instantiate; emco copies the whole tree.

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

// A spec field given as a string (emcoctl files) or a number.
int int_field(const json& spec, const std::string& name, int fallback, const std::string& what) {
  if (!spec.contains(name)) return fallback;
  const json& v = spec[name];
  try {
    if (v.is_number_integer()) return v.get<int>();
    if (v.is_string()) {
      size_t used = 0;
      int n = std::stoi(v.get<std::string>(), &used);
      if (used == v.get<std::string>().size()) return n;
    }
  } catch (const std::exception&) {
  }
  fail(ErrorKind::invalid, what + ": spec." + name + " must be a whole number, not " + v.dump());
}

std::string string_field(const json& spec, const std::string& name, const std::string& what, const std::string& hint) {
  if (!spec.contains(name) || !spec[name].is_string() || spec[name].get<std::string>().empty())
    fail(ErrorKind::invalid, what + " needs spec." + name, hint);
  return spec[name].get<std::string>();
}

// `key` with its DIG part (and composite app version, when given) replaced.
Key rekey(const Key& key, const std::string& dig, const std::string& version = {}) {
  Key out = key;
  for (auto& [element, value] : out.parts) {
    if (element == "deploymentIntentGroup") value = dig;
    if (element == "compositeAppVersion" && !version.empty()) value = version;
  }
  return out;
}

// Copies every resource below `from` (depth first, parents before children)
// to the same place below `to`.
void copy_tree(store::Store& st, const Key& from, const Key& to) {
  for (const auto& child : st.children(from)) {
    Key child_from = child.key;
    store::Resource copy = *st.get(child_from);  // children() leaves attached files out
    copy.id = 0;
    copy.key.parts.assign(to.parts.begin(), to.parts.end());
    copy.key.parts.insert(copy.key.parts.end(), child_from.parts.begin() + static_cast<long>(from.parts.size()),
                          child_from.parts.end());
    Key child_to = copy.key;
    st.put(std::move(copy));
    copy_tree(st, child_from, child_to);
  }
}

}  // namespace

OperationResult migrate_dig(store::Store& st, const Kind& k, const Key& key, const json& body, Clock& clock,
                            const OperationOptions& o) {
  OperationResult out;
  const std::string what = store::describe(k, key);
  const json spec = body.is_object() ? body.value("spec", json::object()) : json::object();
  const std::string hint = "e.g. spec: {targetCompositeAppVersion: v2, targetDeploymentIntentGroup: dig2}";
  const std::string target_version = string_field(spec, "targetCompositeAppVersion", "migrate of " + what, hint);
  const std::string target_dig = string_field(spec, "targetDeploymentIntentGroup", "migrate of " + what, hint);
  const Key target = rekey(key, target_dig, target_version);
  const std::string target_what = store::describe(k, target);
  if (target == key) fail(ErrorKind::invalid, "cannot migrate " + what + " to itself", hint);
  auto deadline = deadline_of(o);
  finish_queued(st, key, o, deadline);
  finish_queued(st, target, o, deadline);

  // Checks and planning outside the write transaction (rendering takes a
  // while); the write below checks the states again.
  std::string from;
  auto check = [&](const store::Resource& source, const store::Resource& dest) {
    std::string state = current_state(source.state_info);
    if (state != "Instantiated" && state != "InstantiateStopped")
      fail(ErrorKind::conflict, "cannot migrate " + what + ": it is not instantiated (state " + state + ")",
           "migrate moves a running deployment; instantiate it first");
    from = last_instance(json::parse(source.state_info));
    if (!ac::exists(st, from)) fail(ErrorKind::failed, what + ": its deployment context " + from + " is missing");
    refuse_during_rollout(st, from, what, "migrate");
    if (sync::held_by_live_process(st, from))
      fail(ErrorKind::conflict, "cannot migrate " + what + ": it is still being delivered", busy_hint(st, from));
    std::string target_state = current_state(dest.state_info);
    if (target_state != "Approved")
      fail(ErrorKind::conflict,
           "cannot migrate " + what + " to " + target_what + ": the target must be Approved (it is " + target_state + ")",
           target_state == "Created" ? "approve it first: 'emco dig approve'" : "migrate into a new, approved deployment intent group");
  };
  auto load = [&](const Key& which, const std::string& role) {
    auto r = st.get(which);
    if (!r) fail(ErrorKind::not_found, "cannot migrate " + what + ": " + role + " " + store::describe(k, which) + " does not exist");
    return *r;
  };
  std::string status_ctx;
  {
    auto source = load(key, "the source");
    auto dest = load(target, "the target");
    check(source, dest);
    check_logical_cloud(st, dest, target_what);
    status_ctx = json::parse(source.state_info).value("statusctxid", "");
  }
  ac::AppContext fresh = plan_dig(st, target, o, status_ctx, from);

  st.write([&] {
    auto source = load(key, "the source");
    auto dest = load(target, "the target");
    check(source, dest);
    json ssi = json::parse(source.state_info);
    json tsi = json::parse(dest.state_info);
    int rev = last_revision(ssi);
    fresh.status_context = ssi.value("statusctxid", "");
    fresh.revision = rev + 1;
    ac::save(st, fresh);
    // The source's contexts and revisions move to the target.
    const std::vector<std::string> moved_contexts = ac::list(st, key);
    for (const auto& id : moved_contexts) ac::set_owner(st, id, target);
    const size_t target_actions = tsi["actions"].size();
    const json target_statusctxid = tsi.value("statusctxid", json(""));
    const std::string source_name = key.get("compositeAppVersion").value_or("") + "/" + key.parts.back().second;
    for (const auto& a : ssi["actions"])
      if (a.value("state", "") == "Instantiated" && !a.value("instance", "").empty()) {
        json moved = a;
        moved["migratedFrom"] = source_name;
        tsi["actions"].push_back(moved);
      }
    ac::set_stop(st, from, false);
    sync::enqueue_to_deliver(st, fresh.id, ac::event::update, from);
    owe_children(st, fresh.id, from);
    append_action(ssi, "Updated", from, rev, clock);
    ssi["actions"].back()["migratedTo"] = target_version + "/" + target_dig;
    st.set_state_info(key, ssi.dump());
    append_action(tsi, "Instantiated", fresh.id, rev + 1, clock);
    tsi["statusctxid"] = fresh.status_context;
    st.set_state_info(target, tsi.dump());
    // The target's pre- and post-update hooks (upstream: its scheduler and
    // the UPDATE post event); a refusing pre hook undoes all of the above.
    record_hooks(st, o.runtime, target, fresh.id, "migrate", rev + 1,
                 {{"pop", tsi["actions"].size() - target_actions},
                  {"statusctxid", target_statusctxid},
                  {"remove", true},
                  {"source", {{"dig", key.str()}, {"pop", 1}, {"contexts", moved_contexts}}}});
  });
  out.revision = static_cast<int>(fresh.revision);
  const std::string id = drop_planned(fresh);
  // As for update: the source context's children go, the new one gets its own.
  Delivered d = refused_by_hook(deliver(st, id, ac::status::instantiated, o, deadline), what, "migrate");
  fill(out, id, with_children(st, id, clock, o, deadline, d));
  out.message = "migrated to " + target_what + " as revision " + std::to_string(out.revision);
  return out;
}

OperationResult clone_dig(store::Store& st, const Kind& k, const Key& key, const json& body, Clock& clock) {
  OperationResult out;
  const std::string what = store::describe(k, key);
  // Upstream's REST body has the fields at the top level; emcoctl files can
  // only send them under spec. Both are read.
  json spec = body.is_object() ? body.value("spec", json::object()) : json::object();
  if (body.is_object())
    for (const char* f : {"cloneDigNamePrefix", "numberOfClones", "startNumber"})
      if (!spec.contains(f) && body.contains(f)) spec[f] = body[f];
  const std::string hint = "e.g. spec: {cloneDigNamePrefix: dig, numberOfClones: 2, startNumber: 1}";
  const std::string prefix = string_field(spec, "cloneDigNamePrefix", "clone of " + what, hint);
  const int count = int_field(spec, "numberOfClones", 0, "clone of " + what);
  const int start = int_field(spec, "startNumber", 0, "clone of " + what);
  if (count < 1 || count > 10000)
    fail(ErrorKind::invalid, "clone of " + what + ": spec.numberOfClones must be between 1 and 10000 (got " +
                                 std::to_string(count) + ")", hint);
  std::vector<std::string> names;
  st.write([&] {
    names.clear();  // a re-run body starts afresh
    auto source = st.get(key);
    if (!source) fail(ErrorKind::not_found, what + " does not exist");
    for (int i = 0; i < count; ++i) {
      const std::string name = prefix + "-" + std::to_string(start + i);
      Key copy_key = rekey(key, name);
      if (st.get(copy_key))
        fail(ErrorKind::conflict, "cannot clone " + what + ": " + store::describe(k, copy_key) + " already exists",
             "choose another cloneDigNamePrefix or startNumber");
      json data = json::parse(source->data);
      data["metadata"]["name"] = name;
      // As upstream: the copy's version is the source's with the clone's
      // ordinal (from 0), and it offers or consumes no services.
      json& s = data["spec"];
      if (s.contains("version") && s["version"].is_string())
        s["version"] = s["version"].get<std::string>() + "-" + std::to_string(i);
      for (const char* f : {"services", "instantiatedServices"})
        if (s.contains(f)) s[f] = json::object();
      store::Resource copy = *source;
      copy.id = 0;
      copy.key = copy_key;
      copy.data = data.dump();
      copy.state_info = initial_state_info(clock);
      st.put(std::move(copy));
      copy_tree(st, key, copy_key);
      names.push_back(name);
    }
  });
  out.message = "cloned as ";
  for (size_t i = 0; i < names.size(); ++i) out.message += (i ? ", " : "") + names[i];
  return out;
}

}  // namespace emco::lifecycle::detail
