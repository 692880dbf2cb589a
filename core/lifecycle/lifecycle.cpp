#include "core/lifecycle/lifecycle.hpp"

#include <nlohmann/json.hpp>

#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::lifecycle {

using nlohmann::json;
using resource::Key;
using resource::Kind;

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

namespace {

std::string last_instance(const json& si) {
  if (!si.contains("actions") || si["actions"].empty()) return "";
  return si["actions"].back().value("instance", "");
}

void append_action(json& si, const std::string& state, const std::string& instance, int revision, Clock& clock) {
  si["actions"].push_back({{"state", state}, {"instance", instance}, {"time", clock.now_rfc3339()}, {"revision", revision}});
}

std::string lc_level(const store::Resource& lc) {
  auto data = json::parse(lc.data);
  return data.value("spec", json::object()).value("level", "1");
}

}  // namespace

void check_modify_allowed(const Kind& k, const store::Resource& existing) {
  if (k.id != "deploymentIntentGroup") return;
  std::string state = current_state(existing.state_info);
  if (state != "Created" && !state.empty())
    fail(ErrorKind::conflict,
         store::describe(k, existing.key) + " is in " + state + " state; it can only be modified while Created",
         "change its intents instead and run 'emco dig update', or terminate and delete it first");
}

void check_delete_allowed(const store::Store& st, const Kind& k, const store::Resource& existing) {
  std::string state = current_state(existing.state_info);
  if (k.id == "deploymentIntentGroup" && (state == "Instantiated" || state == "InstantiateStopped"))
    fail(ErrorKind::conflict, "cannot delete " + store::describe(k, existing.key) + ": it is " + state,
         "terminate it first (emco dig terminate, or a .../terminate anchor)");
  if (k.id == "logicalCloud" && state == "Instantiated")
    fail(ErrorKind::conflict, "cannot delete " + store::describe(k, existing.key) + ": it is Instantiated",
         "terminate it first (emco lc terminate, or a .../terminate anchor)");
  (void)st;
}

std::string run_operation(store::Store& st, const Kind& k, const Key& key, const std::string& op, const json& body,
                          Clock& clock) {
  (void)body;
  std::string result;
  st.write([&] {
    auto r = st.get(key);
    if (!r) fail(ErrorKind::not_found, store::describe(k, key) + " does not exist");
    json si = r->state_info.empty() ? json::parse(initial_state_info(clock)) : json::parse(r->state_info);
    std::string state = current_state(si.dump());
    const std::string what = store::describe(k, key);

    if (k.id == "deploymentIntentGroup" && op == "approve") {
      if (state == "Approved") {
        result = "approved (unchanged)";
        return;
      }
      if (state == "Instantiated" || state == "InstantiateStopped")
        fail(ErrorKind::conflict, what + " is already instantiated", "use 'emco dig update' to roll out intent changes");
      if (state != "Created" && state != "Terminated" && state != "Updated")
        fail(ErrorKind::conflict, what + " cannot be approved in state " + state);
      append_action(si, "Approved", "", 0, clock);
      st.set_state_info(key, si.dump());
      result = "approved";
      return;
    }
    if (k.id == "logicalCloud" && (op == "instantiate" || op == "terminate")) {
      if (lc_level(*r) != "0")
        fail(ErrorKind::failed, "instantiating standard and privileged (level 1) logical clouds is not available yet",
             "use an admin logical cloud (spec.level: \"0\") for now");
      if (op == "instantiate") {
        if (state == "Instantiated") fail(ErrorKind::conflict, what + " is already instantiated");
        if (st.list(resource::kind("clusterReference"), key).empty())
          fail(ErrorKind::conflict, what + " has no cluster references", "add one under '" +
                                                                                resource::resource_anchor(k, key) +
                                                                                "/cluster-references' first");
        // An admin cloud changes nothing on clusters: record the empty-shell
        // context and the Instantiated state (logical-clouds.md, level 0).
        std::string ctx = random_context_id();
        int rev = si["actions"].empty() ? 1 : si["actions"].back().value("revision", 0) + 1;
        append_action(si, "Instantiated", ctx, rev, clock);
        si["statusctxid"] = ctx;
        st.set_state_info(key, si.dump());
        result = "instantiated";
        return;
      }
      if (state != "Instantiated") fail(ErrorKind::conflict, what + " is not instantiated (state " + state + ")");
      int rev = si["actions"].back().value("revision", 0) + 1;
      append_action(si, "Terminated", last_instance(si), rev, clock);
      st.set_state_info(key, si.dump());
      result = "terminated";
      return;
    }
    fail(ErrorKind::failed, "'" + op + "' on a " + k.display + " is not available in this version of emco",
         "this build records and validates resources; deployment arrives in a later version");
  });
  return result;
}

}  // namespace emco::lifecycle
