// Commands backed by plugins and core libraries: `emco template` (in-process
// Helm), `emco sim` (the Kubernetes simulator), `emco cluster check`.

#include <csignal>
#include <limits>
#include <nlohmann/json.hpp>

#include "cli/batch_output.hpp"
#include "cli/table.hpp"
#include "core/helm/helm.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "sim/sim.hpp"
#include "plugins/targets/kube/cluster_check.hpp"
#include "plugins/targets/kube/kubeconfig.hpp"

namespace emco::cli {

using nlohmann::json;

namespace {

int parse_int(const Invocation& inv, const std::string& flag, int fallback) {
  long long v = inv.get_int(flag, fallback);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    fail(ErrorKind::usage, "'--" + flag + " " + inv.get(flag) + "' is out of range");
  return static_cast<int>(v);
}

double parse_double(const Invocation& inv, const std::string& flag, double fallback) {
  if (!inv.has(flag)) return fallback;
  try {
    return std::stod(inv.get(flag));
  } catch (const std::exception&) {
    fail(ErrorKind::usage, "'--" + flag + " " + inv.get(flag) + "' is not a number");
  }
}

int run_template(Context& ctx, const Invocation& inv) {
  helm::TemplateArgs a;
  a.chart = inv.args.at(0);
  a.value_files = inv.all("values");
  a.set = inv.all("set");
  a.set_string = inv.all("set-string");
  a.namespace_name = inv.get("namespace", "default");
  a.release_name = inv.get("release-name", "release-name");
  a.include_crds = inv.has("include-crds");
  a.skip_tests = inv.has("skip-tests");
  return helm::template_main(a, ctx.out, ctx.err);
}

std::string sim_dir(const Invocation& inv) { return inv.get("dir", ".emco-sim"); }

sim::Fault fault_from_flags(const Invocation& inv) {
  sim::Fault f;
  f.latency_ms = parse_int(inv, "latency-ms", 0);
  f.error_rate = parse_double(inv, "error-rate", 0);
  if (f.error_rate < 0 || f.error_rate > 1) fail(ErrorKind::usage, "'--error-rate' must be between 0 and 1");
  f.error_code = parse_int(inv, "error-code", 503);
  f.refuse = inv.has("refuse");
  f.expired_credentials = inv.has("expired-credentials");
  if (inv.has("down-for-ms"))
    f.down_until_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count() + parse_int(inv, "down-for-ms", 0);
  f.flap_period_ms = parse_int(inv, "flap-period-ms", 0);
  f.flap_down_ms = parse_int(inv, "flap-down-ms", 0);
  return f;
}

int run_sim_start_cmd(Context&, const Invocation& inv) {
  sim::SimStartArgs a;
  a.options.clusters = parse_int(inv, "clusters", 3);
  if (a.options.clusters < 1) fail(ErrorKind::usage, "'--clusters' must be at least 1");
  a.options.dir = sim_dir(inv);
  a.options.port = parse_int(inv, "port", 0);
  a.options.own_ports = inv.has("own-ports");
  a.options.ready_delay_ms = parse_int(inv, "ready-delay-ms", 1000);
  a.options.persist = inv.has("persist");
  if (inv.get("auth") == "client-cert") a.options.auth = sim::AuthMode::client_cert;
  for (const auto& n : inv.all("name")) a.options.names.push_back(n);
  // Any fault flag at start applies to every cluster ('emco sim fault' sets them per cluster later).
  sim::Fault start_fault = fault_from_flags(inv);
  if (!(start_fault == sim::Fault{})) a.options.faults["*"] = start_fault;
  return sim::run_sim_start(a);
}

int run_sim_stop_cmd(Context&, const Invocation& inv) { return sim::run_sim_stop(sim_dir(inv), parse_int(inv, "timeout", 10)); }

int run_sim_fault_cmd(Context&, const Invocation& inv) {
  sim::SimFaultArgs a;
  a.dir = sim_dir(inv);
  a.clusters = inv.args;
  a.clear = inv.has("clear");
  a.fault = fault_from_flags(inv);
  return sim::run_sim_fault(a);
}

std::vector<FlagSpec> fault_flags() {
  return {{.name = "latency-ms", .value = "MS", .help = "added latency per request"},
          {.name = "error-rate", .value = "FRACTION", .help = "fraction of requests answered with --error-code"},
          {.name = "error-code", .value = "CODE", .help = "HTTP status of injected errors", .choices = {"500", "503", "429"}},
          {.name = "refuse", .help = "refuse connections"},
          {.name = "down-for-ms", .value = "MS", .help = "refuse connections for this long"},
          {.name = "flap-period-ms", .value = "MS", .help = "flap: every period, be down for --flap-down-ms"},
          {.name = "flap-down-ms", .value = "MS", .help = "flap: down time within each period"},
          {.name = "expired-credentials", .help = "answer every authenticated request with 401"}};
}

int run_cluster_check(Context& ctx, const Invocation& inv) {
  auto& st = ctx.store();
  const auto& cluster_kind = resource::kind("cluster");
  std::vector<store::Resource> clusters;
  if (inv.args.empty()) {
    clusters = st.list(cluster_kind);
  } else {
    for (const auto& a : inv.args) {
      auto parts = split(a, '/');
      if (parts.size() != 2) fail(ErrorKind::usage, "'" + a + "' does not name a cluster", "expected PROVIDER/CLUSTER");
      resource::Key key{{{"clusterProvider", parts[0]}, {"cluster", parts[1]}}};
      auto r = st.get(key);
      if (!r) fail(ErrorKind::not_found, store::describe(cluster_kind, key) + " does not exist");
      clusters.push_back(*r);
    }
  }
  std::vector<kube::ClusterCheckInput> inputs;
  for (const auto& c : clusters) {
    auto full = st.get(c.key);
    std::string kubeconfig;
    for (const auto& content : full->contents)
      if (content.name == "file") kubeconfig = content.data;
    if (kubeconfig.empty()) {
      ctx.note("skipping " + c.key.parts[0].second + "+" + c.key.parts[1].second + ": a GitOps cluster has no kubeconfig");
      continue;
    }
    inputs.push_back({c.key.parts[0].second + "+" + c.key.parts[1].second, kubeconfig, "", inv.get("namespace")});
  }
  kube::ClusterCheckOptions opts;
  opts.parallelism = static_cast<size_t>(std::max(1, parse_int(inv, "parallel", 16)));
  opts.timeout = std::chrono::milliseconds(parse_int(inv, "timeout-ms", 5000));
  auto results = kube::check_clusters(inputs, opts);
  Format f = parse_format(inv.get("output", "table"));
  if (f == Format::json) ctx.out << kube::check_results_json(results) << "\n";
  else if (f == Format::yaml) print_yaml(ctx.out, json::parse(kube::check_results_json(results)));
  else if (f == Format::name) {
    for (const auto& r : results)
      if (r.failed()) ctx.out << r.cluster << "\n";
  } else ctx.out << kube::format_check_table(results);
  return kube::check_exit_code(results);
}

}  // namespace

void install_content_preparers() {
  manifest::register_content_preparer("cluster", [](const std::string& data, const std::string& path,
                                                    const std::string& label) {
    return kube::prepare_kubeconfig(data, path, label);
  });
}

std::vector<CommandSpec> tool_commands() {
  std::vector<CommandSpec> v;
  v.push_back({.path = {"template"},
               .summary = "render a Helm chart locally, exactly as 'helm template' prints it",
               .description = "In-process Helm: no helm binary is needed. Output is byte-identical to helm 3.17.3's.",
               .args = {{.name = "CHART", .help = "chart directory or .tgz package", .complete = Complete::file}},
               .flags = {{.name = "values", .short_name = 'f', .value = "FILE", .help = "values file", .repeatable = true,
                          .complete = Complete::file},
                         {.name = "set", .value = "KEY=VALUE", .help = "set a value (helm --set syntax)", .repeatable = true},
                         {.name = "set-string", .value = "KEY=VALUE", .help = "set a string value", .repeatable = true},
                         {.name = "namespace", .short_name = 'n', .value = "NS", .help = "release namespace", .default_value = "default"},
                         {.name = "release-name", .value = "NAME", .help = "release name", .default_value = "release-name"},
                         {.name = "include-crds", .help = "include the chart's crds/ files"},
                         {.name = "skip-tests", .help = "leave out test hooks"}},
               .needs_workspace = false,
               .examples = {"emco template ./mychart -f prod.yaml --set image.tag=1.2.3 --namespace web"},
               .handler = run_template});
  v.push_back({.path = {"sim", "start"},
               .summary = "run simulated Kubernetes clusters until stopped",
               .description = "Serves N simulated clusters over HTTPS on loopback (path prefix /clusters/<name> on one\n"
                              "port), writes DIR/kubeconfigs/<name>.yaml and DIR/ca.crt, and runs until 'emco sim stop'\n"
                              "or SIGTERM. kubectl works against them.",
               .flags = [] {
                 std::vector<FlagSpec> f = {
                     {.name = "clusters", .value = "N", .help = "number of clusters", .default_value = "3"},
                     {.name = "name", .value = "NAME", .help = "cluster name (instead of cluster-1..N)", .repeatable = true},
                     {.name = "dir", .value = "DIR", .help = "state directory", .complete = Complete::directory,
                      .default_value = ".emco-sim"},
                     {.name = "port", .value = "PORT", .help = "shared HTTPS port (0 = any free port)"},
                     {.name = "own-ports", .help = "also give every cluster a port of its own"},
                     {.name = "auth", .value = "MODE", .help = "credentials in the kubeconfigs", .choices = {"token", "client-cert"}},
                     {.name = "ready-delay-ms", .value = "MS", .help = "workloads become ready after this delay"},
                     {.name = "persist", .help = "keep cluster state in DIR across restarts"}};
                 for (auto& x : fault_flags()) f.push_back(x);
                 return f;
               }(),
               .needs_workspace = false,
               .examples = {"emco sim start --clusters 100 --dir /tmp/fleet &", "kubectl --kubeconfig /tmp/fleet/kubeconfigs/cluster-001.yaml get ns"},
               .handler = run_sim_start_cmd});
  v.push_back({.path = {"sim", "stop"},
               .summary = "stop a running simulator",
               .flags = {{.name = "dir", .value = "DIR", .help = "state directory", .complete = Complete::directory,
                          .default_value = ".emco-sim"},
                         {.name = "timeout", .value = "SECONDS", .help = "how long to wait for it to exit"}},
               .needs_workspace = false,
               .handler = run_sim_stop_cmd});
  v.push_back({.path = {"sim", "fault"},
               .summary = "inject faults into running simulated clusters",
               .args = {{.name = "CLUSTER", .help = "cluster names, or * for all", .variadic = true}},
               .flags = [] {
                 std::vector<FlagSpec> f = {{.name = "dir", .value = "DIR", .help = "state directory",
                                             .complete = Complete::directory, .default_value = ".emco-sim"},
                                            {.name = "clear", .help = "remove the clusters' faults"}};
                 for (auto& x : fault_flags()) f.push_back(x);
                 return f;
               }(),
               .needs_workspace = false,
               .examples = {"emco sim fault cluster-002 --flap-period-ms 4000 --flap-down-ms 1000", "emco sim fault '*' --clear"},
               .handler = run_sim_fault_cmd});
  v.push_back({.path = {"cluster", "check"},
               .summary = "check registered clusters: reachability, TLS, credentials, version, permissions",
               .description = "Checks every named cluster (default: all) in parallel. Exits 1 when any check fails.",
               .args = {{.name = "PROVIDER/CLUSTER", .help = "clusters to check", .optional = true, .variadic = true}},
               .flags = {{.name = "namespace", .value = "NS", .help = "namespace whose create/delete permission is checked"},
                         {.name = "parallel", .value = "N", .help = "clusters checked at once", .default_value = "16"},
                         {.name = "timeout-ms", .value = "MS", .help = "per-request time limit", .default_value = "5000"},
                         output_flag()},
               .handler = run_cluster_check});
  return v;
}

}  // namespace emco::cli
