#pragma once
// Runs the documents of emcoctl files against the store with emcoctl's
// semantics (emcoctl-format.md §3), made atomic:
//   apply  — file order; declarative documents create (`created`), update
//            (`configured`) or leave alone (`unchanged`) their resource, all in
//            one transaction; lifecycle anchors run after the commit, in order.
//   update — like apply, but every resource must already exist.
//   get    — file order; lifecycle documents skipped.
//   delete — reverse order; `.../instantiate` and `.../apply` documents become
//            terminate (run first), approve/status/update/rollback/migrate/clone
//            are skipped, everything else is deleted in one transaction.
// With continue_on_error each document commits on its own and errors are
// collected (emcoctl's keep-going behaviour).

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/lifecycle/runtime.hpp"
#include "core/manifest/manifest.hpp"
#include "core/store/store.hpp"
#include "core/util/clock.hpp"

namespace emco::manifest {

enum class Verb { apply, update, get, remove };

struct ItemResult;

struct BatchOptions {
  bool continue_on_error = false;
  bool ignore_not_found = false;  // delete: a missing resource is not an error
  // apply: a resource that already exists is Error(conflict) "<kind> '<name>'
  // already exists" and stays as it is (upstream's POST answers 409; emcoctl
  // mode and `emco serve` POST so) instead of being updated.
  bool create_only = false;
  bool stop_at_first_error = false;  // with continue_on_error: keep what ran, stop there (emcoctl -s)
  bool show_secrets = false;      // get: credential values instead of <redacted>
  Clock* clock = nullptr;         // defaults to system_clock()
  // The plugins' content preparers and what lifecycle anchors run with
  // (required for files with lifecycle anchors; plugins/builtin.cpp).
  const lifecycle::Runtime* runtime = nullptr;
  // Lifecycle anchors: true = run and deliver them here (lifecycle::run_operation,
  // waiting up to its timeout); false = record the operation and queue its
  // delivery only (lifecycle::run without waiting: `emco serve`, whose
  // delivery thread drives the queue as 'emco sync' does). Either way,
  // earlier work still queued on the resource that could not be finished
  // first is Error(conflict): the operation is not recorded.
  bool deliver = true;
  // Called for each finished item as soon as it is final (declarative items
  // after their transaction committed), so output survives a later error.
  std::function<void(const ItemResult&)> on_item;
  // Called with each warning ("FILE:LINE: ..." or a feature-wide sentence),
  // once per distinct text, as soon as what it is about is final: the
  // documents' own (ignored fields, '<no value>'), inputs upstream accepts
  // but that look wrong, and features emco stores but cannot run
  // (lifecycle::stored_only_plugin, lifecycle::missing_controller).
  std::function<void(const std::string&)> on_warning;
};

struct ItemResult {
  std::string where;     // FILE:LINE
  std::string anchor;    // resource anchor (or the lifecycle anchor)
  std::string document_anchor;  // the anchor as the document wrote it
  std::string kind;      // kind id
  std::string name;
  std::string outcome;   // created|configured|unchanged|deleted|approved|...|skipped|error
  std::string error;     // message when outcome == "error"
  std::string hint;
  int exit_kind = 0;     // ErrorKind of the error, as int
  std::string object;    // get: the resource as JSON text
};

struct BatchResult {
  std::vector<ItemResult> items;
  int errors = 0;
};

// Runs `verb` over every document of `files`. Without continue_on_error the
// first error throws (emco::Error with FILE:LINE context) and nothing the
// declarative part did is kept.
BatchResult run_batch(store::Store& st, Verb verb, const std::vector<File>& files, const BatchOptions& opts);

// Builds the stored form of one declarative document (validation, file
// contents, canonical data). An attached file of a kind the runtime has a
// content preparer for is checked and rewritten by it (a kubeconfig naming
// certificate files is stored with their contents inlined); `runtime` may
// be null (no preparers). Inputs upstream accepts that look wrong add a
// "FILE:LINE: ..." line to `warnings` when given. A GitOps cluster's file is
// the placeholder upstream's multipart API needs unless it is a kubeconfig
// (emco then reads deployed objects back with it): one that is not is
// dropped, as upstream drops every GitOps cluster's file. Exposed for noun
// commands and tests.
store::Resource prepare_resource(const Document& doc, Clock& clock, const lifecycle::Runtime* runtime,
                                 std::vector<std::string>* warnings = nullptr);

// The resource key a declarative document names.
resource::Key document_key(const Document& doc);

// The resource as upstream's GET returns it: {"metadata":…,"spec":…}
// (labels: {"clusterLabel":…}); secret specs redacted unless show_secrets;
// with "status": `status` (a JSON object's text) when it is not empty.
std::string render_object(const store::Resource& r, bool show_secrets, const std::string& status = {});

// What emco records about a resource besides its spec, as render_object's
// `status`: a cluster's last check (core/store/cluster_checks.hpp); "" for
// anything else and for a cluster never checked.
std::string status_of(store::Store& st, const store::Resource& r);

}  // namespace emco::manifest
