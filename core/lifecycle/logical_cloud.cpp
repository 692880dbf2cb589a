// Logical-cloud lifecycle operations (logical-clouds.md): admin (level 0)
// clouds record their state only; they change nothing on clusters.

#include <nlohmann/json.hpp>

#include "core/lifecycle/internal.hpp"
#include "core/util/error.hpp"

namespace emco::lifecycle::detail {

using nlohmann::json;
using resource::Key;
using resource::Kind;

OperationResult lc_operation(store::Store& st, const Kind& k, const Key& key, const std::string& op, const json& body,
                             Clock& clock, const OperationOptions& options) {
  (void)body;
  (void)options;
  OperationResult out;
  st.write([&] {
    auto r = st.get(key);
    if (!r) fail(ErrorKind::not_found, store::describe(k, key) + " does not exist");
    json si = r->state_info.empty() ? json::parse(initial_state_info(clock)) : json::parse(r->state_info);
    std::string state = current_state(si.dump());
    const std::string what = store::describe(k, key);
    if (lc_level(*r) != "0")
      fail(ErrorKind::failed, "instantiating standard and privileged (level 1) logical clouds is not available yet",
           "use an admin logical cloud (spec.level: \"0\") for now");
    int rev = si["actions"].empty() ? 1 : si["actions"].back().value("revision", 0) + 1;
    if (op == "instantiate") {
      if (state == "Instantiated" || state == "Updated") fail(ErrorKind::conflict, what + " is already instantiated");
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
      if (state != "Instantiated" && state != "InstantiateStopped" && state != "Updated")
        fail(ErrorKind::conflict, what + " is not instantiated (state " + state + ")");
      append_action(si, "Terminated", last_instance(si), rev, clock);
      out.message = "terminated";
    } else if (op == "update") {
      // lifecycle.md §3: a no-op unless Instantiated. An admin cloud has
      // nothing on clusters to change, so the update is the new record.
      if (state != "Instantiated" && state != "Updated") {
        out.message = "not instantiated (unchanged)";
        return;
      }
      append_action(si, "Updated", random_context_id(), rev, clock);
      out.message = "updated";
    } else if (op == "stop") {
      // Stop needs delivery in progress; an admin cloud's never is.
      fail(ErrorKind::conflict, what + " has no deployment in progress (state " + state + ")");
    } else {
      fail(ErrorKind::invalid, "'" + op + "' is not an operation of a " + k.display,
           "logical clouds support instantiate, terminate, update, stop");
    }
    st.set_state_info(key, si.dump());
  });
  return out;
}

}  // namespace emco::lifecycle::detail
