#pragma once
// EMCO's REST API v2 over the workspace (`emco serve`): a request on
// /v2/<anchor> becomes what emcoctl's document of that anchor is to
// `emco ctl` — one document of a batch run through manifest::run_batch
// (validation, references, lifecycle rules: one place decides), a GET through
// run_anchor (resources, collections, status anchors with EMCO's query
// parameters) — so the server and the command line are two front ends of the
// same code.
//
//   GET    /v2/<collection|resource|status>[?query]  200 JSON, 404
//   POST   /v2/<collection>          create (201); 409 when it exists: JSON
//          {metadata, spec | clusterLabel}, or multipart/form-data with a
//          "metadata" part (that JSON) and a "file" part or "files" parts
//          (kubeconfig, Helm chart .tgz, profile .tgz, templates), as
//          upstream's emcoctl sends them
//   PUT    /v2/<resource>            the same body, for that resource (201/200)
//   POST   /v2/<resource>/<operation> a lifecycle operation (approve,
//          instantiate, update, rollback, terminate, stop, migrate, clone,
//          ...): recorded and queued, answered 202; delivery continues in
//          the background and shows in .../status
//   DELETE /v2/<resource>            204
// Errors are answered as upstream's http.Error: text/plain, the message and
// a newline, with 400 (invalid), 404, 405 (method), 409 (conflict: a POST
// of what exists, a state that refuses the operation, earlier work still
// queued), 501 (not
// implemented in emco), 500.

#include <functional>
#include <string>
#include <vector>

#include "cli/context.hpp"
#include "cli/serve/http.hpp"

namespace emco::cli::serve {

struct ApiOptions {
  // Called after a lifecycle operation was recorded and its delivery queued.
  std::function<void()> queued;
  // Called with each warning a request's batch reports (the server's log).
  std::function<void(const std::string&)> warn;
};

// Answers one request on `ctx`, a context of the request's thread with a
// connection to the workspace of its own.
http::Response handle(Context& ctx, const http::Request& req, const ApiOptions& options);

// One part of a multipart/form-data body.
struct Part {
  std::string name;      // the form field ("metadata", "file", "files")
  std::string filename;  // "" when the part is not a file
  std::string data;
};
// Splits a multipart/form-data body (RFC 7578) by the boundary of
// `content_type`. Error(invalid) when there is no boundary or the body is
// not made of parts.
std::vector<Part> parse_multipart(const std::string& body, const std::string& content_type);

}  // namespace emco::cli::serve
