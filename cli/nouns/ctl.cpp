// emcoctl compatibility: `emco ctl ...` or the binary invoked as `emcoctl`.
// Accepts emcoctl's flags and prints its output format (emcoctl-format.md §9)
// so scripts that parse "Response:" keep working; everything happens in the
// local workspace instead of REST calls.

#include <chrono>
#include <sstream>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/batch_output.hpp"
#include "cli/table.hpp"
#include "cli/values_renderer.hpp"
#include "core/util/error.hpp"
#include "core/util/file_io.hpp"
#include "core/util/strings.hpp"
#include "core/yaml/yaml.hpp"

namespace emco::cli {

using nlohmann::json;

namespace {

struct Endpoint {
  std::string host = "localhost";
  int port = 0;
};

// Service -> endpoint, from emcoctl's built-in defaults and --config.
std::map<std::string, Endpoint> endpoints(const std::string& config_path, Context& ctx) {
  std::map<std::string, Endpoint> e = {
      {"orchestrator", {"localhost", 9015}}, {"clm", {"localhost", 9061}},         {"ncm", {"localhost", 9081}},
      {"dcm", {"localhost", 9077}},          {"ovnaction", {"localhost", 9051}},   {"dtc", {"localhost", 9018}},
      {"gac", {"localhost", 9020}},          {"hpaPlacement", {"localhost", 9091}}, {"sfc", {"localhost", 9055}},
      {"sfcClient", {"localhost", 9057}},    {"ca-certs", {"localhost", 9036}},     {"workflowMgr", {"localhost", 9095}},
      {"tac", {"localhost", 9064}},
  };
  std::string path = config_path;
  if (path.empty()) {
    const char* home = std::getenv("HOME");
    if (!home) return e;
    path = std::string(home) + "/.emco.yaml";
  }
  // The default ~/.emco.yaml is optional; one named with --config is not.
  std::error_code ec;
  if (config_path.empty() && !std::filesystem::exists(std::filesystem::symlink_status(path, ec))) return e;
  std::string text = read_input_file(path, {.what = "config", .max_bytes = std::size_t{1} << 20, .missing = ErrorKind::not_found});
  std::vector<yaml::Document> docs;
  try {
    docs = yaml::parse(text, {.max_documents = 1});
  } catch (const yaml::ParseError& ex) {
    if (config_path.empty()) return e;  // emcoctl ignores a broken default config too
    fail(ErrorKind::invalid, path + ":" + std::to_string(ex.line()) + ": " + ex.problem());
  }
  if (docs.empty()) return e;
  const yaml::Document& cfg = docs[0];
  auto is = [&cfg](yaml::NodeId id, yaml::NodeType t) { return cfg.node(cfg.target(id)).type == t; };
  auto read = [&](yaml::NodeId map, Endpoint& ep) {
    map = cfg.target(map);
    for (std::size_t i = 0; i < cfg.size(map); ++i) {
      yaml::NodeId key = cfg.target(cfg.key(map, i)), value = cfg.target(cfg.value(map, i));
      if (!is(key, yaml::NodeType::scalar)) continue;
      std::string k = to_lower(std::string(cfg.scalar(key)));
      if (k != "host" && k != "port") continue;
      const std::string where = path + ":" + std::to_string(cfg.node(value).line);
      if (!is(value, yaml::NodeType::scalar)) fail(ErrorKind::invalid, where + ": '" + k + "' must be a scalar");
      std::string v(cfg.scalar(value));
      if (k == "host") ep.host = v;
      else if (v.empty() || v.size() > 5 || v.find_first_not_of("0123456789") != std::string::npos)
        fail(ErrorKind::invalid, where + ": port '" + v + "' is not a number");
      else ep.port = std::stoi(v);
    }
  };
  std::optional<Endpoint> ingress;
  if (!is(cfg.root(), yaml::NodeType::mapping)) {
    if (config_path.empty()) return e;
    fail(ErrorKind::invalid, path + ":" + std::to_string(cfg.node(cfg.root()).line) + ": expected a mapping of services");
  }
  const yaml::NodeId root = cfg.target(cfg.root());
  for (std::size_t i = 0; i < cfg.size(root); ++i) {
    yaml::NodeId key = cfg.target(cfg.key(root, i)), value = cfg.value(root, i);
    if (!is(key, yaml::NodeType::scalar) || !is(value, yaml::NodeType::mapping)) continue;
    std::string name(cfg.scalar(key));
    if (to_lower(name) == "ingress") {
      Endpoint ep;
      read(value, ep);
      ingress = ep;
      continue;
    }
    for (auto& [svc, ep] : e)
      if (to_lower(svc) == to_lower(name) || (svc == "ca-certs" && to_lower(name) == "cacert")) read(value, ep);
  }
  if (ingress)
    for (auto& [svc, ep] : e) ep = *ingress;
  (void)ctx;
  return e;
}

std::string service_of(const resource::Anchor& a) {
  if (a.kind->id == "cluster" && (a.target == resource::AnchorTarget::operation || a.target == resource::AnchorTarget::status))
    return "ncm";
  return a.kind->service;
}

std::string base_url(const std::map<std::string, Endpoint>& eps, const std::string& service) {
  auto it = eps.find(service);
  if (it == eps.end()) it = eps.find("orchestrator");
  std::string host = it->second.host.find(':') != std::string::npos ? "[" + it->second.host + "]" : it->second.host;
  return "http://" + host + ":" + std::to_string(it->second.port) + "/v2/";
}

int run_ctl(Context& ctx, const Invocation& inv) {
  const std::string verb_word = inv.args.at(0);
  manifest::Verb verb;
  if (verb_word == "apply") verb = manifest::Verb::apply;
  else if (verb_word == "update") verb = manifest::Verb::update;
  else if (verb_word == "get") verb = manifest::Verb::get;
  else if (verb_word == "delete") verb = manifest::Verb::remove;
  else
    fail(ErrorKind::usage, "unknown emcoctl command '" + verb_word + "'", "emcoctl commands are apply, update, get, delete");
  auto eps = endpoints(inv.get("config"), ctx);
  int wait_seconds = 0;
  if (inv.has("waitTime")) {
    try {
      wait_seconds = std::stoi(inv.get("waitTime"));
    } catch (const std::exception&) {
      fail(ErrorKind::usage, "'-w " + inv.get("waitTime") + "' is not a number of seconds");
    }
  }

  std::vector<manifest::File> files;
  if (inv.has("filename")) {
    manifest::ReadOptions ro;
    ro.strict_top_level = false;  // emcoctl ignores unknown top-level keys
    ro.keep_bad_anchors = true;   // each document is its own request
    if (inv.has("values")) ro.render = make_values_renderer(inv.all("values").front());
    files = manifest::read_files(inv.all("filename").front(), ro);  // emcoctl reads only the first -f
  } else {
    if (inv.args.size() < 2) fail(ErrorKind::usage, "emcoctl " + verb_word + " needs -f FILE or an anchor");
    if (verb == manifest::Verb::get) {
      for (size_t i = 1; i < inv.args.size(); ++i) {
        auto a = resource::parse_anchor(inv.args[i]);
        ctx.out << "---\nGET  --> URL: " << base_url(eps, service_of(a)) << inv.args[i] << "\n";
        std::ostringstream body;
        Context inner(body, ctx.err, ctx);
        inner.quiet = true;
        try {
          run_anchor(inner, manifest::Verb::get, inv.args[i], Format::json, {});
          std::string text = body.str();
          auto parsed = json::parse(text.empty() ? "null" : text, nullptr, false);
          ctx.out << "Response Code: 200\nResponse: " << (parsed.is_discarded() ? text : parsed.dump()) << "\n";
        } catch (const Error& e) {
          const int code = http_status(e.kind());
          ctx.out << "Response Code: " << code << "\nResponse: " << e.message() << "\n";
        }
      }
      return 0;
    }
    manifest::File f;
    for (size_t i = 1; i < inv.args.size(); ++i) {
      manifest::Document d;
      d.source = "<command line>";
      d.line = d.index = static_cast<int>(i);
      d.anchor_text = inv.args[i];
      try {
        d.anchor = resource::parse_anchor(inv.args[i]);
      } catch (const Error& e) {
        d.anchor_error = Error(ErrorKind::not_found, e.message(), e.hint());
      }
      if (d.anchor.target == resource::AnchorTarget::resource) d.name = d.anchor.key.parts.back().second;
      d.body = std::make_shared<json>(json{{"metadata", json::object()}});
      f.documents.push_back(std::move(d));
    }
    files.push_back(std::move(f));
  }
  // emcoctl apply/update/delete find no service for an anchor outside its
  // roots and stop there ("Invalid baseUrl"), after the documents before it
  // in their order (reverse for delete); anchors under a root go to a
  // server, whose 404 fails that document only.
  std::string stopped_at;
  {
    static const std::set<std::string> roots = {"cluster-providers", "controllers", "clm-controllers", "dtc-controllers",
                                                "projects"};
    auto root_unknown = [](const manifest::Document& d) {
      std::string a = d.anchor_text;
      if (starts_with(a, "/")) a = a.substr(1);
      if (starts_with(a, "v2/")) a = a.substr(3);
      return d.anchor_error && !roots.count(a.substr(0, a.find('/')));
    };
    for (auto& f : files) {
      auto& docs = f.documents;
      if (verb == manifest::Verb::get) break;  // emcoctl get goes on past it
      if (verb == manifest::Verb::remove) {
        for (size_t i = docs.size(); i-- > 0;)
          if (root_unknown(docs[i])) {
            stopped_at = docs[i].anchor_text;
            docs.erase(docs.begin(), docs.begin() + static_cast<std::ptrdiff_t>(i + 1));
            break;
          }
      } else {
        for (size_t i = 0; i < docs.size(); ++i)
          if (root_unknown(docs[i])) {
            stopped_at = docs[i].anchor_text;
            docs.erase(docs.begin() + static_cast<std::ptrdiff_t>(i), docs.end());
            break;
          }
      }
    }
  }
  // emcoctl update PUTs each resource, which upstream's handlers (and emco
  // serve's PUT) create when it is missing: apply's upsert, without the
  // lifecycle and status documents, which update sends nothing for.
  manifest::Verb batch_verb = verb;
  if (verb == manifest::Verb::update) {
    batch_verb = manifest::Verb::apply;
    for (auto& f : files)
      std::erase_if(f.documents, [](const manifest::Document& d) {
        return !d.anchor_error && (d.anchor.target == resource::AnchorTarget::operation ||
                                   d.anchor.target == resource::AnchorTarget::status);
      });
  }
  manifest::BatchOptions opts;
  opts.continue_on_error = true;
  opts.stop_at_first_error = inv.has("stop");
  opts.create_only = verb == manifest::Verb::apply;  // emcoctl apply POSTs: what exists answers 409
  opts.runtime = &ctx.runtime();
  opts.on_warning = [&](const std::string& w) { ctx.warn(w); };
  auto result = manifest::run_batch(ctx.store(), batch_verb, files, opts);
  for (const auto& it : result.items) {
    int code = http_status(it);
    if (code == 0) continue;
    resource::Anchor a;
    try {
      a = resource::parse_anchor(it.document_anchor);
    } catch (const Error&) {
      // An anchor that does not parse: the request a server's router refuses.
      std::string method = verb == manifest::Verb::get ? "GET" : verb == manifest::Verb::update ? "PUT"
                           : verb == manifest::Verb::remove                                      ? "DELETE"
                                                                                                 : "POST";
      ctx.out << "---\n" << method << "  --> URL: " << base_url(eps, "orchestrator") << it.document_anchor << "\n";
      ctx.out << "Response Code: " << code << "\nResponse: " << it.error << "\n";
      continue;
    }
    std::string method = verb == manifest::Verb::get ? "GET" : verb == manifest::Verb::update ? "PUT" : "POST";
    std::string url_anchor = it.document_anchor;
    if (verb == manifest::Verb::remove) {
      if (a.target == resource::AnchorTarget::operation) {
        method = "POST";
        url_anchor = resource::resource_anchor(*a.kind, a.key) + "/terminate";
      } else {
        method = "DELETE";
        url_anchor = it.anchor;
      }
    } else if (verb == manifest::Verb::get || verb == manifest::Verb::update) {
      url_anchor = it.anchor;
    }
    ctx.out << "---\n" << method << "  --> URL: " << base_url(eps, service_of(a)) << url_anchor << "\n";
    ctx.out << "Response Code: " << code << "\n";
    if (it.outcome == "error") {
      if (code == 202) ctx.err << "emco: " << it.error << "\n";  // not an error to emcoctl: no body, a note
      else ctx.out << "Response: " << it.error << "\n";
    } else if (!it.object.empty()) {
      ctx.out << "Response: " << it.object << "\n";
    } else if (code == 201 || code == 200) {
      if (auto r = ctx.store().get(resource::parse_anchor(it.anchor).key)) ctx.out << "Response: " << manifest::render_object(*r, false) << "\n";
    }
    if (code == 202) {  // emcoctl says so after every 202, and sleeps -w seconds
      ctx.out << "API Response code 202. Waiting...\n";
      if (wait_seconds > 0) std::this_thread::sleep_for(std::chrono::seconds(wait_seconds));
    }
  }
  if (!stopped_at.empty()) {
    const char* op = verb == manifest::Verb::apply    ? "Apply: "
                     : verb == manifest::Verb::update ? "Update: "
                     : verb == manifest::Verb::get    ? "Get: "
                                                      : "Delete: ";
    ctx.out << op << " " << stopped_at << " Error:  Invalid baseUrl: \n";
  }
  return 0;
}

}  // namespace

std::vector<CommandSpec> ctl_commands() {
  return {{.path = {"ctl"},
           .summary = "run an emcoctl command against the local workspace",
           .description = "Accepts emcoctl's command line and prints its output format, so scripts written for EMCO\n"
                          "keep working. A symlink named 'emcoctl' to emco behaves the same. Without -s, API errors\n"
                          "are printed and processing continues (exit status 0), as emcoctl does: each document is its own\n"
                          "request, an anchor emco does not know answers 404 and a feature emco does not run yet 501.\n"
                          "apply POSTs: a resource that exists answers 409 and stays as it is (change it with\n"
                          "update, which PUTs: 200, or 201 when it creates it); delete of what is gone answers 404.",
           .args = {{.name = "COMMAND", .help = "apply, update, get or delete"},
                    {.name = "ANCHOR", .help = "anchor for a single call", .optional = true, .variadic = true,
                     .complete = Complete::anchor}},
           .flags = {{.name = "config", .value = "FILE", .help = "emcoctl config (only used to print matching URLs)",
                      .complete = Complete::file},
                     {.name = "filename", .short_name = 'f', .value = "FILE", .help = "input file (only the first is read)",
                      .repeatable = true, .complete = Complete::file},
                     {.name = "values", .short_name = 'v', .value = "FILE", .help = "values for templating", .repeatable = true,
                      .complete = Complete::file},
                     {.name = "token", .short_name = 't', .value = "TOKEN", .help = "accepted and ignored (no server)", .repeatable = true},
                     {.name = "stop", .short_name = 's', .help = "stop at the first failing document"},
                     {.name = "waitTime", .short_name = 'w', .value = "SECONDS", .help = "sleep after each accepted lifecycle call"}},
           .examples = {"emcoctl --config emco-cfg.yaml apply -f prerequisites.yaml -v values.yaml",
                        "emco ctl get projects/proj1/composite-apps/ca/v1/deployment-intent-groups/dig/status"},
           .handler = run_ctl}};
}

}  // namespace emco::cli
