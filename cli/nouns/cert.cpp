// `emco cert`: the lifecycle of CA certificates (ca-certs) — enrollment and
// distribution, each instantiate/update/terminate with waiting and progress
// like 'emco lc instantiate' — and their status. The certificates, cluster
// groups and logical clouds themselves are documents (`emco apply -f`).

#include <nlohmann/json.hpp>

#include "cli/address.hpp"
#include "cli/context.hpp"
#include "cli/operations.hpp"
#include "cli/output.hpp"
#include "cli/table.hpp"
#include "core/util/error.hpp"
#include "plugins/ca_certs/ca_certs.hpp"

namespace emco::cli {

using nlohmann::json;
using resource::Key;

namespace {

constexpr char k_cert_address[] = "PROVIDER/CERT";

// The certificate an argument names: PROVIDER/CERT (cluster-provider
// variant), PROJECT/CERT with --project (logical-cloud variant), or either
// variant's anchor.
std::pair<const resource::Kind*, Key> certificate_of(const Invocation& inv) {
  const std::string& text = inv.args[0];
  bool project = inv.has("project") || text.rfind("projects/", 0) == 0;
  const resource::Kind& k = resource::kind(project ? "caCertLc" : "caCertCp");
  return {&k, resolve_address(k, text, project ? "PROJECT/CERT" : k_cert_address)};
}

// A function, not a namespace-scope FlagSpec built at every process's start.
FlagSpec project_flag() {
  return {.name = "project", .help = "the address is PROJECT/CERT (a logical-cloud certificate)"};
}

int status_cmd(Context& ctx, const Invocation& inv) {
  auto [k, key] = certificate_of(inv);
  auto phases = plugins::ca_certs::status(ctx.store(), *k, key);
  Format f = parse_format(inv.get("output", "table"));
  if (f == Format::json || f == Format::yaml) {
    json out = {{"name", key.parts.back().second}};
    for (const auto& p : phases) {
      json objects = json::array();
      for (const auto& o : p.objects) {
        json jo = {{"cluster", o.cluster}, {"resource", o.resource}, {"status", o.status}};
        if (!o.message.empty()) jo["message"] = o.message;
        objects.push_back(jo);
      }
      out[p.phase] = {{"state", p.state}, {"context", p.context}, {"contextStatus", p.context_status},
                      {"resources", objects}, {"actions", p.actions}};
    }
    if (f == Format::json) print_json(ctx.out, out);
    else print_yaml(ctx.out, out);
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : phases)
    rows.push_back({p.phase, p.state, p.context.empty() ? "-" : p.context, p.context_status.empty() ? "-" : p.context_status});
  print_table(ctx.out, {"PHASE", "STATE", "CONTEXT", "CONTEXT STATUS"}, rows);
  rows.clear();
  for (const auto& p : phases)
    for (const auto& o : p.objects) rows.push_back({p.phase, o.cluster, o.resource, o.status});
  if (!rows.empty()) {
    ctx.out << "\n";
    print_table(ctx.out, {"PHASE", "CLUSTER", "RESOURCE", "STATUS"}, rows);
  }
  return 0;
}

struct PhaseOp {
  const char* phase;
  const char* op;
  const char* summary;
  const char* description;
};

}  // namespace

std::vector<CommandSpec> cert_commands() {
  std::vector<CommandSpec> v;
  static const PhaseOp ops[] = {
      {"enrollment", "instantiate", "enroll a CA certificate's clusters with the issuing cluster",
       "Makes a private key and a cert-manager CertificateRequest per edge cluster of the certificate's cluster\n"
       "groups, applies the requests on the issuing cluster and waits (up to --timeout) until its issuer signed\n"
       "them. The keys stay in the workspace; they are never printed."},
      {"enrollment", "update", "enroll again with the current cluster groups",
       "New keys and requests for every edge cluster (clusters added since are enrolled); the old requests and\n"
       "keys go once the new ones are signed. Run 'emco cert distribution update' afterwards."},
      {"enrollment", "terminate", "delete the enrollment's requests and keys", "Deletes the CertificateRequests from the issuing cluster and the keys from the workspace."},
      {"distribution", "instantiate", "give the edge clusters their signed intermediate CAs",
       "Per edge cluster: the signed chain and its key as a Secret in cert-manager's namespace, a ClusterIssuer\n"
       "using it, a KNCC ConfigCtrl handing the chain to Istio and, for logical-cloud certificates, an Istio\n"
       "ProxyConfig per cloud namespace. Needs a signed enrollment."},
      {"distribution", "update", "distribute again from the current enrollment and cluster groups",
       "Replaces the distributed objects with new ones (new names) from the current enrollment."},
      {"distribution", "terminate", "remove the distributed objects from the edge clusters",
       "Deletes what distribution instantiate created, in reverse order."},
  };
  for (const auto& o : ops) {
    auto flags = wait_flags();
    flags.push_back(project_flag());
    v.push_back({.path = {"cert", o.phase, o.op},
                 .summary = o.summary,
                 .description = o.description,
                 .args = {{.name = k_cert_address, .help = "the certificate (PROJECT/CERT with --project, or its anchor)",
                           .complete = Complete::anchor}},
                 .flags = flags,
                 .examples = {std::string("emco cert ") + o.phase + " " + o.op + " edge/cert1",
                              std::string("emco cert ") + o.phase + " " + o.op + " proj1/cert1 --project"},
                 .handler = [phase = std::string(o.phase), op = std::string(o.op)](Context& ctx, const Invocation& inv) {
                   auto [k, key] = certificate_of(inv);
                   return run_op(ctx, inv, *k, key, phase + "/" + op, json::object());
                 }});
  }
  v.push_back({.path = {"cert", "status"},
               .summary = "show a CA certificate's enrollment and distribution",
               .description = "Per phase: its state and context, then every object (CertificateRequests on the issuing "
                              "cluster, Secrets, ClusterIssuers, ConfigCtrls and ProxyConfigs on the edge clusters) "
                              "with its deploy status. -o json|yaml adds each phase's history.",
               .args = {{.name = k_cert_address, .help = "the certificate (PROJECT/CERT with --project, or its anchor)",
                         .complete = Complete::anchor}},
               .flags = {output_flag({Format::table, Format::json, Format::yaml}), project_flag()},
               .examples = {"emco cert status edge/cert1", "emco cert status proj1/cert1 --project -o json"},
               .handler = status_cmd});
  return v;
}

}  // namespace emco::cli
