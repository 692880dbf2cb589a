#pragma once
// Shared by the batch commands (apply/get/delete/update) and the noun
// commands: printing batch results and single resources.

#include <string>
#include <vector>

#include "cli/context.hpp"
#include "cli/output.hpp"
#include "core/manifest/batch.hpp"
#include "core/util/error.hpp"

namespace emco::cli {

// Prints one line per document ("projects/p1 created") or, for -o json|yaml,
// an array of {where, anchor, kind, name, outcome[, error]}. Returns the exit
// code: 0, or the exit code of the first error (continue-on-error runs).
int print_batch_result(Context& ctx, const manifest::BatchResult& result, Format format);

// Runs a batch, printing table/name lines as items finish (so work done
// before an error is reported) and JSON/YAML at the end. Returns the exit code.
int run_and_print(Context& ctx, manifest::Verb verb, const std::vector<manifest::File>& files,
                  manifest::BatchOptions opts, Format format);

// Prints resources as a table (NAME plus kind-specific columns), JSON/YAML
// (the upstream GET shape, with "status" where emco records one: a cluster's
// last check; one object, or an array when `as_list`), or names (their
// anchors).
void print_resources(Context& ctx, const std::vector<store::Resource>& resources, Format format, bool as_list,
                     bool show_secrets = false);

}  // namespace emco::cli

namespace emco::cli {
// EMCO's HTTP status codes, one place for emcoctl mode (the codes it prints)
// and `emco serve` (the codes it answers): for an error kind 404 not found,
// 409 conflict (also earlier work still queued that kept an operation from
// being recorded), 400 invalid or usage, 501 not implemented, 202 pending
// (recorded and accepted, still being delivered), else 500; for a batch item 201 created,
// 200 updated, unchanged or read, 204 deleted, 202 a lifecycle operation,
// 0 skipped (no request), or the error's code.
int http_status(ErrorKind kind);
int http_status(const manifest::ItemResult& it);

// `emco get|apply|delete ANCHOR` (cli/anchor.cpp).
int run_anchor(Context& ctx, manifest::Verb verb, const std::string& anchor, Format format, const manifest::BatchOptions& opts);
}  // namespace emco::cli
