#pragma once
// Lifecycle operations run from the command line (dig and lc instantiate,
// terminate, update, rollback, stop; `emco sync`): their flags, waiting for
// the delivery with a progress display, the result as a line or a document,
// and the exit status (0 delivered, 1 failed, 8 still in progress).

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cli/context.hpp"
#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "core/lifecycle/lifecycle.hpp"

namespace emco::cli {

// --timeout, --no-wait, --parallel and -o table|json|yaml.
std::vector<FlagSpec> wait_flags();
// --wait-wave: a rollout in waves stops after the current wave's gate.
FlagSpec wait_wave_flag();
// The operation options of those flags (and --wait-wave where a command has it), reporting progress to `view` and
// stopping at Ctrl-C (an InterruptGuard must be alive). Error(usage) for a
// bad --timeout or --parallel.
lifecycle::OperationOptions options_of(Context& ctx, const Invocation& inv, ProgressView& view);
// The exit status of a delivery: 0 (none or done), 1 (failed), 8 (pending).
int exit_of(lifecycle::Delivery d);
// "none", "done", "failed", "pending": the delivery field of -o json|yaml.
const char* delivery_name(lifecycle::Delivery d);
// Notes why work is still queued (Ctrl-C, --no-wait, --timeout) and that
// 'emco sync' continues it; `what` names the work.
void explain_pending(Context& ctx, const std::string& what, const lifecycle::OperationOptions& o);
// Runs lifecycle operation `op` on the resource `key` of kind `k` with the
// request `body`, resuming work earlier processes left queued first, and
// prints the result in the -o format. Returns the exit status.
int run_op(Context& ctx, const Invocation& inv, const resource::Kind& k, const resource::Key& key, const std::string& op,
           const nlohmann::json& body);

// Prints the result `r` of operation `op` on `key` in the -o format (a DIG's
// resource counts and rollout) and returns the exit status: exit_of, except
// that a rollout waiting for 'emco dig rollout resume' (--wait-wave: its
// wave passed) is 0.
int report_op(Context& ctx, const Invocation& inv, const resource::Kind& k, const resource::Key& key,
              const std::string& op, lifecycle::OperationResult& r, const lifecycle::OperationOptions& o);

// A lifecycle operation offered as `emco NOUN NAME ADDRESS`.
struct LifecycleOperation {
  std::string name, summary, description;
  std::vector<FlagSpec> flags;   // after wait_flags() (rollback's --revision)
  std::string example_flags;     // after the example's address (" --revision 1")
  // The request body from the flags; {} when empty.
  std::function<nlohmann::json(const Invocation&)> body;
};

// Appends one command per operation for the resources of kind `k`, under
// the command words `noun` ({"lc"}, {"cluster", "network"}): the
// argument is `address` ("PROJECT/LOGICAL-CLOUD", or the anchor) described
// as `what` ("the logical cloud"), the example uses `example_address`; the
// flags are wait_flags() and the operation's, except for "stop", which does
// not wait and takes only -o. The handler runs run_op.
void add_lifecycle_operations(std::vector<CommandSpec>& out, const std::vector<std::string>& noun, const resource::Kind& k,
                              const std::string& address, const std::string& what, const std::string& example_address,
                              const std::vector<LifecycleOperation>& ops);

}  // namespace emco::cli
