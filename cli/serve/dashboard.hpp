#pragma once
// The dashboard of `emco serve` (issue 25): a single-page app compiled into
// emco (cli/serve/dashboard/, dashboard_assets.hpp) and the few JSON
// endpoints it needs beyond EMCO's REST API.
//
//   GET /, /index.html, /app.js, /app.css   the app; ETag and
//       "Cache-Control: no-cache" (If-None-Match answers 304). Public, also
//       with --token-file: the files hold no data, and the app asks for the
//       token before it reads any.
//   GET /dashboard/config      {"actions": bool, "token": bool} (public)
//   GET /dashboard/overview    status::workspace_status: every DIG and
//       logical cloud with state, revision, deployed status and counts
//   GET /dashboard/matrix?dig=<anchor>&status=deployed|ready&by=provider|label|cluster
//       [&group=G][&offset=N&limit=M]
//       a DIG's apps x clusters, aggregated: without `group`, one column per
//       provider (or per label; a cluster carrying no label is in "(none)")
//       with each app's clusters counted by status; with `group`, that
//       provider's or label's clusters one column each. Either way one page
//       of columns: `limit` (default 100, at most 500) from `offset`, and
//       "total" columns in all. The cell status of an app on a cluster is
//       the worst of its resources' (the same status JSON as
//       .../status?status=...&output=all, lifecycle::anchor_status).
//   GET /dashboard/plan?dig=<anchor>
//       what `emco dig plan <anchor> -o json` prints (the command itself, run
//       through the command table): the changes an instantiate or update of
//       the DIG's current intents would make, per app and cluster
//   GET /dashboard/check?provider=P
//       what `emco cluster check P/C1 P/C2 ... -o json` prints for the
//       provider's clusters (reachability, TLS, credentials, version,
//       permissions; contacts every one of them, 16 at a time)
//
// Actions: the dashboard's writes are EMCO's lifecycle POSTs on /v2/. A
// request from a browser (it carries Origin, Sec-Fetch-Site or the
// dashboard's X-EMCO-Client header) that is not a GET, HEAD or OPTIONS is
// refused 403 unless `emco serve --allow-actions`, and with it when its
// Origin is not the server's own (another site's page posting to a local
// server). Clients without these headers (curl, emcoctl, scripts) are not
// browsers and are not affected: the rule guards the browser, the token
// guards the server.

#include <optional>

#include "cli/context.hpp"
#include "cli/serve/http.hpp"

namespace emco::cli::serve {

struct DashboardOptions {
  bool allow_actions = false;
  bool token = false;  // the server requires a token
};

// The app's files and /dashboard/config, answered without the token;
// nullopt for any other request.
std::optional<http::Response> dashboard_public(const http::Request& req, const DashboardOptions& options);

// The 403 of a browser's write (see above); nullopt when the request may go on.
std::optional<http::Response> refuse_browser_write(const http::Request& req, const DashboardOptions& options);

// /dashboard/overview, /dashboard/matrix, /dashboard/plan and /dashboard/check on `ctx` (a request's context);
// nullopt for a path outside /dashboard/.
std::optional<http::Response> dashboard_api(Context& ctx, const http::Request& req);

}  // namespace emco::cli::serve
