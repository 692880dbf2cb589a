// Noun commands (cluster, project, app, dig, lc, controller) over the same
// store and validation as batch files: each builds an emcoctl document and
// runs it through manifest::run_batch, so a resource made here is exactly
// the resource a YAML file would make.

#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "cli/address.hpp"
#include "cli/batch_output.hpp"
#include "cli/table.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"
#include "core/template/value.hpp"

namespace emco::cli {

namespace fs = std::filesystem;
using nlohmann::json;
using resource::Key;
using resource::Kind;

namespace {

using SpecBuilder = std::function<void(const Invocation&, json& spec, manifest::Document& doc)>;

struct Noun {
  std::vector<std::string> words;     // {"cluster", "label"}
  std::string kind;                   // kind id
  std::string address;                // "PROVIDER/CLUSTER/LABEL"
  std::string create_verb = "create";
  std::string update_verb = "update";  // "modify" where "update" is a lifecycle operation
  std::vector<FlagSpec> flags;        // create/update flags mapped to spec
  SpecBuilder build;                  // fills spec from those flags
  std::vector<std::string> examples;
  bool updatable = true;
  std::string notes;  // a paragraph for the create and update help (what the spec holds)
};

std::vector<std::string> address_parts(const std::string& address) { return split(address, '/'); }

Format output_of(const Invocation& inv) { return parse_format(inv.get("output", "table")); }

std::vector<std::pair<std::string, std::string>> key_values(const std::vector<std::string>& items, const std::string& flag) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& item : items) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      fail(ErrorKind::usage, "'--" + flag + " " + item + "' is not KEY=VALUE");
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
}

json read_spec_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorKind::invalid, "cannot read spec file '" + path + "'");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto v = tmpl::parse_yaml(text, tmpl::YamlMode::go_yaml, path).to_json();
  if (!v.is_object()) fail(ErrorKind::invalid, "spec file '" + path + "' must hold a mapping");
  return v;
}

// Builds the document for create/update of `key` with the noun's flags.
manifest::Document make_document(const Noun& n, const Kind& k, const Key& key, const Invocation& inv, json spec) {
  manifest::Document doc;
  doc.source = "<command line>";
  doc.line = 0;  // no file position
  doc.index = 1;
  doc.base_dir = fs::current_path().string();
  Key parent = key.parent_prefix(key.parts.size() - k.elements.size() - k.fixed.size());
  doc.anchor_text = resource::collection_anchor(k, parent);
  doc.anchor = resource::parse_anchor(doc.anchor_text);
  std::string name = k.elements.size() > 1 ? key.parts[key.parts.size() - 2].second : key.parts.back().second;
  doc.name = name;
  if (k.elements.size() > 1) spec["compositeAppVersion"] = key.parts.back().second;
  if (n.build) n.build(inv, spec, doc);
  json metadata = {{"name", name}};
  if (inv.has("description")) metadata["description"] = inv.get("description");
  json body = {{"metadata", metadata}, {"spec", spec}};
  if (k.body == resource::BodyShape::label) body["clusterLabel"] = name;
  doc.body = std::make_shared<json>(std::move(body));
  return doc;
}

int apply_document(Context& ctx, manifest::Document doc, Format format) {
  manifest::File f;
  f.source = doc.source;
  f.documents.push_back(std::move(doc));
  return run_and_print(ctx, manifest::Verb::apply, {f}, {}, format);
}

void add_verbs(std::vector<CommandSpec>& out, const Noun& n) {
  const Kind& k = resource::kind(n.kind);
  std::string parent_addr;
  {
    auto parts = address_parts(n.address);
    parts.pop_back();
    if (k.elements.size() > 1) parts.pop_back();
    parent_addr = join(parts, "/");
  }
  std::vector<FlagSpec> create_flags = n.flags;
  create_flags.push_back({.name = "description", .value = "TEXT", .help = "description (metadata.description)"});
  create_flags.push_back({.name = "spec-file", .value = "FILE", .help = "YAML or JSON file with the spec (flags override it)",
                          .complete = Complete::file});
  create_flags.push_back(output_flag());
  auto words = [&](const std::string& verb) {
    auto w = n.words;
    w.push_back(verb);
    return w;
  };
  Key pattern;
  {
    auto placeholders = address_parts(n.address);
    size_t i = 0;
    for (const Kind* c : resource::lineage(k.id)) {
      for (const auto& f : c->fixed) pattern.parts.push_back(f);
      for (const auto& e : c->elements) pattern.parts.emplace_back(e, i < placeholders.size() ? placeholders[i++] : e);
    }
  }
  const std::string anchor_note =
      n.address + " names the " + k.display + "; its anchor (" + resource::resource_anchor(k, pattern) + ") works too.";
  const std::string write_note = n.notes.empty() ? anchor_note : anchor_note + "\n\n" + n.notes;

  out.push_back({.path = words(n.create_verb),
                 .summary = "create a " + k.display,
                 .description = write_note,
                 .args = {{.name = n.address, .help = "the new " + k.display}},
                 .flags = create_flags,
                 .examples = n.examples,
                 .handler = [n, &k](Context& ctx, const Invocation& inv) {
                   Key key = resolve_address(k, inv.args[0], n.address, false);
                   if (ctx.store().get(key))
                     fail(ErrorKind::conflict, store::describe(k, key) + " already exists",
                          "change it with 'emco " + join(n.words, " ") + " " + n.update_verb + "', or use 'emco apply'");
                   json spec = inv.has("spec-file") ? read_spec_file(inv.get("spec-file")) : json::object();
                   return apply_document(ctx, make_document(n, k, key, inv, spec), output_of(inv));
                 }});
  if (n.updatable)
    out.push_back({.path = words(n.update_verb),
                   .summary = "change a " + k.display + " (only the given flags change)",
                   .description = write_note,
                   .args = {{.name = n.address, .help = "the " + k.display}},
                   .flags = create_flags,
                   .handler = [n, &k](Context& ctx, const Invocation& inv) {
                     Key key = resolve_address(k, inv.args[0], n.address, false);
                     auto existing = ctx.store().get(key);
                     if (!existing) fail(ErrorKind::not_found, store::describe(k, key) + " does not exist");
                     json data = json::parse(existing->data);
                     json spec = data.value("spec", json::object());
                     if (inv.has("spec-file")) spec.merge_patch(read_spec_file(inv.get("spec-file")));
                     auto doc = make_document(n, k, key, inv, spec);
                     if (!inv.has("description") && data["metadata"].contains("description"))
                       (*doc.body)["metadata"]["description"] = data["metadata"]["description"];
                     if (doc.files.empty())
                       for (const auto& c : existing->contents) doc.inline_files.push_back({c.name, c.filename, c.data});
                     return apply_document(ctx, std::move(doc), output_of(inv));
                   }});
  out.push_back({.path = words("get"),
                 .summary = "show a " + k.display,
                 .description = anchor_note,
                 .args = {{.name = n.address, .help = "the " + k.display}},
                 .flags = {output_flag(), {.name = "show-secrets", .help = "show credential values instead of <redacted>"}},
                 .handler = [n, &k](Context& ctx, const Invocation& inv) {
                   Key key = resolve_address(k, inv.args[0], n.address, false);
                   auto r = ctx.store().get(key);
                   if (!r) fail(ErrorKind::not_found, store::describe(k, key) + " does not exist");
                   print_resources(ctx, {*r}, output_of(inv), false, inv.has("show-secrets"));
                   return 0;
                 }});
  out.push_back({.path = words("list"),
                 .summary = "list " + k.display + "s" + (parent_addr.empty() ? "" : " (of one parent, or all)"),
                 .args = parent_addr.empty() ? std::vector<ArgSpec>{}
                                             : std::vector<ArgSpec>{{.name = parent_addr,
                                                                     .help = "list only under this parent (default: all)",
                                                                     .optional = true}},
                 .flags = {output_flag()},
                 .handler = [n, &k](Context& ctx, const Invocation& inv) {
                   Key parent = inv.args.empty() ? Key{} : resolve_address(k, inv.args[0], n.address, true);
                   if (!parent.parts.empty() && !ctx.store().get(parent))
                     fail(ErrorKind::not_found, store::describe(resource::kind(k.parent), parent) + " does not exist");
                   print_resources(ctx, ctx.store().list(k, parent), output_of(inv), true);
                   return 0;
                 }});
  out.push_back({.path = words("delete"),
                 .summary = "delete a " + k.display,
                 .description = "Refused while the " + k.display + " has children or is referenced; the error names them.",
                 .args = {{.name = n.address, .help = "the " + k.display}},
                 .flags = {output_flag()},
                 .handler = [n, &k](Context& ctx, const Invocation& inv) {
                   Key key = resolve_address(k, inv.args[0], n.address, false);
                   manifest::Document doc;
                   doc.source = "<command line>";
                   doc.line = 0;
                   doc.index = 1;
                   doc.anchor_text = resource::resource_anchor(k, key);
                   doc.anchor = resource::parse_anchor(doc.anchor_text);
                   doc.name = key.parts.back().second;
                   doc.body = std::make_shared<json>(json{{"metadata", json::object()}});
                   manifest::File f;
                   f.documents.push_back(doc);
                   return run_and_print(ctx, manifest::Verb::remove, {f}, {}, output_of(inv));
                 }});
}

void add_operations(std::vector<CommandSpec>& out, const Noun& n, const std::vector<std::pair<std::string, std::string>>& ops) {
  const Kind& k = resource::kind(n.kind);
  for (const auto& [op, summary] : ops) {
    auto path = n.words;
    path.push_back(op);
    out.push_back({.path = path,
                   .summary = summary,
                   .args = {{.name = n.address, .help = "the " + k.display}},
                   .handler = [n, &k, op = op](Context& ctx, const Invocation& inv) {
                     Key key = resolve_address(k, inv.args[0], n.address, false);
                     auto result = lifecycle::run_operation(ctx.store(), k, key, op, json::object(), ctx.clock());
                     ctx.out << resource::resource_anchor(k, key) << " " << result << "\n";
                     return 0;
                   }});
  }
}

std::vector<std::string> split_address(const std::string& text, const std::string& flag, size_t parts) {
  auto v = split(text, '/');
  if (v.size() != parts) fail(ErrorKind::usage, "'--" + flag + " " + text + "' must look like PROVIDER/CLUSTER");
  return v;
}

json placement_elements(const std::vector<std::string>& items, const std::string& flag) {
  json out = json::array();
  for (const auto& item : items) {
    auto v = split_address(item, flag, 2);
    if (starts_with(v[1], "label="))
      out.push_back({{"clusterProvider", v[0]}, {"clusterLabel", v[1].substr(6)}});
    else
      out.push_back({{"clusterProvider", v[0]}, {"cluster", v[1]}});
  }
  return out;
}

json kv_list(const std::vector<std::string>& items, const std::string& flag) {
  json out = json::array();
  for (const auto& [k, v] : key_values(items, flag)) out.push_back({{k, v}});
  return out;
}

FlagSpec kv_flag() {
  return {.name = "kv", .value = "KEY=VALUE", .help = "a key-value pair", .repeatable = true};
}

}  // namespace

std::vector<CommandSpec> resource_commands() {
  std::vector<CommandSpec> v;

  add_verbs(v, {.words = {"cluster", "provider"}, .kind = "clusterProvider", .address = "PROVIDER",
                .examples = {"emco cluster provider create edge-provider"}});
  add_verbs(v, {.words = {"cluster"}, .kind = "cluster", .address = "PROVIDER/CLUSTER",
                .flags = {{.name = "kubeconfig", .value = "FILE", .help = "the cluster's kubeconfig", .complete = Complete::file},
                          {.name = "gitops-type", .value = "TYPE", .help = "deliver through git instead of a kubeconfig",
                           .choices = {"fluxcd", "fluxv2", "anthos"}},
                          {.name = "gitops-reference-object", .value = "NAME", .help = "sync object with the git repository settings"},
                          {.name = "gitops-resource-object", .value = "NAME", .help = "sync object with the Flux timing values"}},
                .build =
                    [](const Invocation& inv, json& spec, manifest::Document& doc) {
                      if (inv.has("kubeconfig")) doc.files.push_back(inv.get("kubeconfig"));
                      if (inv.has("gitops-type")) {
                        spec["gitOps"] = {{"gitOpsType", inv.get("gitops-type")},
                                          {"gitOpsReferenceObject", inv.get("gitops-reference-object")},
                                          {"gitOpsResourceObject", inv.get("gitops-resource-object", inv.get("gitops-reference-object"))}};
                      }
                    },
                .examples = {"emco cluster create edge-provider/edge01 --kubeconfig ~/.kube/edge01.yaml",
                             "emco cluster create edge-provider/edge02 --gitops-type fluxcd --gitops-reference-object git"}});
  add_verbs(v, {.words = {"cluster", "label"}, .kind = "clusterLabel", .address = "PROVIDER/CLUSTER/LABEL", .create_verb = "add",
                .examples = {"emco cluster label add edge-provider/edge01/edge-cluster"}, .updatable = false});
  add_verbs(v, {.words = {"cluster", "kv"}, .kind = "clusterKv", .address = "PROVIDER/CLUSTER/NAME",
                .flags = {kv_flag()},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (inv.has("kv")) spec["kv"] = kv_list(inv.all("kv"), "kv");
                },
                .examples = {"emco cluster kv create edge-provider/edge01/istio --kv istioIngressGatewayAddress=10.0.0.1"}});
  add_verbs(v, {.words = {"cluster", "sync-object"}, .kind = "clusterSyncObject", .address = "PROVIDER/NAME",
                .flags = {kv_flag()},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (inv.has("kv")) spec["kv"] = kv_list(inv.all("kv"), "kv");
                },
                .examples = {"emco cluster sync-object create edge-provider/git --kv url=https://git.example/fleet.git "
                             "--kv branch=main --kv userName=bot --kv gitToken=... --kv repoName=fleet",
                             "emco cluster sync-object create edge-provider/git-ssh --spec-file git-ssh.yaml   "
                             "# kv: [{url: ssh://git@host/fleet.git}, {sshKey: |...}, {knownHosts: ...}]"},
                .notes =
                    "A GitOps repository (the cluster's gitOpsReferenceObject): url (file://, git://, http(s):// or\n"
                    "ssh://), branch (default main), userName, and emco's credentials for it: gitToken, or password;\n"
                    "sshKey (an ed25519 or ECDSA private key, OpenSSH or PEM text) with sshPassphrase; knownHosts\n"
                    "(known_hosts lines the server's host key must match); caCert (PEM of the CA of an https server the\n"
                    "system does not trust). sshKeyFile, knownHostsFile and caFile name files read at each delivery\n"
                    "instead; a value and its file together are refused. Inline values are kept in the workspace (up to\n"
                    "64 KiB each; give multi-line ones with --spec-file or emco apply) and shown by get and list only\n"
                    "with --show-secrets. The gitOpsResourceObject holds the Flux timing: syncInterval, retryInterval,\n"
                    "timeOut (seconds)."});

  add_verbs(v, {.words = {"project"}, .kind = "project", .address = "PROJECT", .examples = {"emco project create proj1"}});

  add_verbs(v, {.words = {"app", "composite"}, .kind = "compositeApp", .address = "PROJECT/COMPOSITE-APP/VERSION",
                .examples = {"emco app composite create proj1/collection/v1"}});
  add_verbs(v, {.words = {"app"}, .kind = "app", .address = "PROJECT/COMPOSITE-APP/VERSION/APP",
                .flags = {{.name = "chart", .value = "PATH", .help = "Helm chart directory or .tgz package", .complete = Complete::file}},
                .build = [](const Invocation& inv, json&, manifest::Document& doc) {
                  if (inv.has("chart")) doc.files.push_back(inv.get("chart"));
                },
                .examples = {"emco app create proj1/collection/v1/collectd --chart ./collectd"}});
  add_verbs(v, {.words = {"app", "composite-profile"}, .kind = "compositeProfile",
                .address = "PROJECT/COMPOSITE-APP/VERSION/PROFILE",
                .examples = {"emco app composite-profile create proj1/collection/v1/default"}});
  add_verbs(v, {.words = {"app", "profile"}, .kind = "appProfile",
                .address = "PROJECT/COMPOSITE-APP/VERSION/COMPOSITE-PROFILE/PROFILE",
                .flags = {{.name = "app", .value = "APP", .help = "the app this profile customises"},
                          {.name = "profile", .value = "PATH", .help = "profile directory or .tgz (manifest.yaml, override_values.yaml)",
                           .complete = Complete::file}},
                .build = [](const Invocation& inv, json& spec, manifest::Document& doc) {
                  if (inv.has("app")) spec["app"] = inv.get("app");
                  if (inv.has("profile")) doc.files.push_back(inv.get("profile"));
                },
                .examples = {"emco app profile create proj1/collection/v1/default/collectd-profile --app collectd --profile ./profile"}});
  add_verbs(v, {.words = {"app", "dependency"}, .kind = "appDependency",
                .address = "PROJECT/COMPOSITE-APP/VERSION/APP/DEPENDENCY",
                .flags = {{.name = "on", .value = "APP", .help = "the app depended upon"},
                          {.name = "op-status", .value = "STATUS", .help = "what the other app must reach", .choices = {"Ready", "Deployed"}},
                          {.name = "wait", .value = "SECONDS", .help = "extra seconds to wait after that"}},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (inv.has("on")) spec["app"] = inv.get("on");
                  if (inv.has("op-status")) spec["opStatus"] = inv.get("op-status");
                  if (inv.has("wait")) spec["wait"] = inv.get_int("wait");
                }});

  Noun dig{.words = {"dig"}, .kind = "deploymentIntentGroup", .address = "PROJECT/COMPOSITE-APP/VERSION/DIG",
           .update_verb = "modify",
           .flags = {{.name = "composite-profile", .value = "NAME", .help = "composite profile of the composite app"},
                     {.name = "release", .value = "NAME", .help = "Helm release name (spec.version)"},
                     {.name = "logical-cloud", .value = "NAME", .help = "logical cloud to deploy into"},
                     {.name = "override", .value = "APP:KEY=VALUE", .help = "Helm --set value for one app", .repeatable = true}},
           .build = [](const Invocation& inv, json& spec, manifest::Document&) {
             if (inv.has("composite-profile")) spec["compositeProfile"] = inv.get("composite-profile");
             if (inv.has("release")) spec["version"] = inv.get("release");
             if (inv.has("logical-cloud")) spec["logicalCloud"] = inv.get("logical-cloud");
             for (const auto& o : inv.all("override")) {
               auto colon = o.find(':');
               auto eq = o.find('=');
               if (colon == std::string::npos || eq == std::string::npos || eq < colon)
                 fail(ErrorKind::usage, "'--override " + o + "' is not APP:KEY=VALUE");
               std::string app = o.substr(0, colon);
               if (!spec.contains("overrideValues")) spec["overrideValues"] = json::array();
               json* entry = nullptr;
               for (auto& e : spec["overrideValues"])
                 if (e.value("app", "") == app) entry = &e;
               if (!entry) {
                 spec["overrideValues"].push_back({{"app", app}, {"values", json::object()}});
                 entry = &spec["overrideValues"].back();
               }
               (*entry)["values"][o.substr(colon + 1, eq - colon - 1)] = o.substr(eq + 1);
             }
           },
           .examples = {"emco dig create proj1/collection/v1/dig1 --composite-profile default --release r1 --logical-cloud lc0"}};
  add_verbs(v, dig);
  // Deployment commands (instantiate, terminate, update, rollback, status,
  // ...) live in cli/cmd_deploy.cpp with their waiting and progress flags.
  add_operations(v, dig, {{"approve", "approve a deployment intent group for instantiation"}});
  add_verbs(v, {.words = {"dig", "intent"}, .kind = "groupIntent", .address = "PROJECT/COMPOSITE-APP/VERSION/DIG/INTENT",
                .flags = {{.name = "placement", .value = "NAME", .help = "the generic placement intent"},
                          {.name = "controller", .value = "CONTROLLER=INTENT", .help = "a controller's intent", .repeatable = true}},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (!spec.contains("intent")) spec["intent"] = json::object();
                  if (inv.has("placement")) spec["intent"]["genericPlacementIntent"] = inv.get("placement");
                  for (const auto& [k, val] : key_values(inv.all("controller"), "controller")) spec["intent"][k] = val;
                }});
  add_verbs(v, {.words = {"dig", "placement"}, .kind = "genericPlacementIntent",
                .address = "PROJECT/COMPOSITE-APP/VERSION/DIG/PLACEMENT"});
  add_verbs(v, {.words = {"dig", "app-intent"}, .kind = "genericAppPlacementIntent",
                .address = "PROJECT/COMPOSITE-APP/VERSION/DIG/PLACEMENT/APP-INTENT",
                .flags = {{.name = "app", .value = "APP", .help = "the app placed by this intent"},
                          {.name = "all-of", .value = "PROVIDER/CLUSTER", .help = "deploy on this cluster (PROVIDER/label=L: every cluster with label L)", .repeatable = true},
                          {.name = "any-of", .value = "PROVIDER/CLUSTER", .help = "deploy on one of these clusters", .repeatable = true}},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (inv.has("app")) spec["app"] = inv.get("app");
                  if (inv.has("all-of") || inv.has("any-of")) spec["intent"] = json::object();
                  if (inv.has("all-of")) spec["intent"]["allOf"] = placement_elements(inv.all("all-of"), "all-of");
                  if (inv.has("any-of")) spec["intent"]["anyOf"] = placement_elements(inv.all("any-of"), "any-of");
                },
                .examples = {"emco dig app-intent create proj1/collection/v1/dig1/placement/collectd --app collectd "
                             "--all-of edge-provider/label=edge"}});

  Noun lc{.words = {"lc"}, .kind = "logicalCloud", .address = "PROJECT/LOGICAL-CLOUD", .update_verb = "modify",
          .flags = {{.name = "level", .value = "LEVEL", .help = "0 = admin, 1 = standard/privileged", .choices = {"0", "1"}},
                    {.name = "namespace", .value = "NS", .help = "namespace of a level-1 cloud"},
                    {.name = "user", .value = "NAME", .help = "user of a level-1 cloud"},
                    {.name = "label", .value = "KEY=VALUE", .help = "label for the cloud's namespace", .repeatable = true}},
          .build = [](const Invocation& inv, json& spec, manifest::Document&) {
            if (inv.has("level")) spec["level"] = inv.get("level");
            if (inv.has("namespace")) spec["namespace"] = inv.get("namespace");
            if (inv.has("user")) spec["user"] = {{"userName", inv.get("user")}, {"type", "certificate"}};
            for (const auto& [k, val] : key_values(inv.all("label"), "label")) spec["labels"][k] = val;
          },
          .examples = {"emco lc create proj1/lc0 --level 0", "emco lc create proj1/tenant-a --namespace tenant-a --user alice"}};
  add_verbs(v, lc);
  add_verbs(v, {.words = {"lc", "cluster-ref"}, .kind = "clusterReference", .address = "PROJECT/LOGICAL-CLOUD/REFERENCE",
                .flags = {{.name = "cluster", .value = "PROVIDER/CLUSTER", .help = "the cluster referenced"},
                          {.name = "load-balancer-ip", .value = "IP", .help = "the cluster's load balancer address"}},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (inv.has("cluster")) {
                    auto p = split_address(inv.get("cluster"), "cluster", 2);
                    spec["clusterProvider"] = p[0];
                    spec["cluster"] = p[1];
                  }
                  if (inv.has("load-balancer-ip")) spec["loadBalancerIP"] = inv.get("load-balancer-ip");
                },
                .examples = {"emco lc cluster-ref create proj1/lc0/edge01 --cluster edge-provider/edge01"}});
  add_verbs(v, {.words = {"lc", "quota"}, .kind = "clusterQuota", .address = "PROJECT/LOGICAL-CLOUD/QUOTA",
                .flags = {{.name = "set", .value = "RESOURCE=AMOUNT", .help = "a ResourceQuota hard limit", .repeatable = true}},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  for (const auto& [k, val] : key_values(inv.all("set"), "set")) spec[k] = val;
                },
                .examples = {"emco lc quota create proj1/tenant-a/q1 --set pods=10 --set limits.cpu=4"}});
  add_verbs(v, {.words = {"lc", "permission"}, .kind = "userPermission", .address = "PROJECT/LOGICAL-CLOUD/PERMISSION",
                .flags = {{.name = "namespace", .value = "NS", .help = "namespace granted (empty = cluster-wide)"},
                          {.name = "api-group", .value = "GROUP", .help = "API group (\"\" = core)", .repeatable = true},
                          {.name = "resource", .value = "RESOURCE", .help = "resource type", .repeatable = true},
                          {.name = "verb", .value = "VERB", .help = "allowed verb", .repeatable = true}},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (inv.has("namespace")) spec["namespace"] = inv.get("namespace");
                  if (inv.has("api-group")) spec["apiGroups"] = inv.all("api-group");
                  if (inv.has("resource")) spec["resources"] = inv.all("resource");
                  if (inv.has("verb")) spec["verbs"] = inv.all("verb");
                }});
  add_verbs(v, {.words = {"lc", "kv"}, .kind = "logicalCloudKv", .address = "PROJECT/LOGICAL-CLOUD/NAME",
                .flags = {kv_flag()},
                .build = [](const Invocation& inv, json& spec, manifest::Document&) {
                  if (inv.has("kv")) spec["kv"] = kv_list(inv.all("kv"), "kv");
                }});

  auto controller_flags = std::vector<FlagSpec>{
      {.name = "type", .value = "TYPE", .help = "controller type", .choices = {"placement", "action"}},
      {.name = "priority", .value = "N", .help = "run order among controllers of the same type (1 first)"},
      {.name = "host", .value = "HOST", .help = "recorded for emcoctl compatibility; controllers run in process"},
      {.name = "port", .value = "PORT", .help = "recorded for emcoctl compatibility"}};
  auto controller_build = [](const Invocation& inv, json& spec, manifest::Document&) {
    if (inv.has("type")) spec["type"] = inv.get("type");
    if (inv.has("priority")) spec["priority"] = inv.get_int("priority");
    if (inv.has("host")) spec["host"] = inv.get("host");
    if (inv.has("port")) spec["port"] = inv.get_int("port");
  };
  add_verbs(v, {.words = {"controller"}, .kind = "controller", .address = "CONTROLLER", .create_verb = "register",
                .flags = controller_flags, .build = controller_build,
                .examples = {"emco controller register gac --type action --priority 1"}});
  add_verbs(v, {.words = {"controller", "dtc"}, .kind = "dtcController", .address = "CONTROLLER", .create_verb = "register",
                .flags = controller_flags, .build = controller_build,
                .examples = {"emco controller dtc register nps --type action --priority 1"}});
  return v;
}

}  // namespace emco::cli
