#include "cli/batch_output.hpp"

#include <nlohmann/json.hpp>

#include "core/lifecycle/lifecycle.hpp"
#include "core/store/cluster_checks.hpp"
#include "core/util/error.hpp"
#include "core/util/json_text.hpp"
#include "core/util/strings.hpp"

namespace emco::cli {

using nlohmann::json;

namespace {

void print_line(Context& ctx, const manifest::ItemResult& it, Format format) {
  if (it.outcome == "error") {
    ctx.err << "emco: error: " << it.error << "\n";
    if (!it.hint.empty()) ctx.err << "hint: " << it.hint << "\n";
  } else if (format == Format::name) {
    ctx.out << it.anchor << "\n";
  } else if (!it.object.empty()) {
    ctx.out << it.object << "\n";
  } else {
    ctx.out << it.anchor << " " << it.outcome << "\n";
  }
}

}  // namespace

int http_status(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::not_found: return 404;
    case ErrorKind::conflict: return 409;
    case ErrorKind::invalid:
    case ErrorKind::usage: return 400;
    case ErrorKind::unsupported: return 501;
    // Accepted and still being delivered: upstream answers every accepted
    // lifecycle call so; the work continues in a later invocation.
    case ErrorKind::pending: return 202;
    default: return 500;
  }
}

int http_status(const manifest::ItemResult& it) {
  if (it.outcome == "error") return http_status(static_cast<ErrorKind>(it.exit_kind));
  if (it.outcome == "skipped") return 0;
  if (it.outcome == "deleted") return 204;
  if (it.outcome == "created") return 201;
  if (it.outcome == "configured" || it.outcome == "unchanged" || it.outcome == "found") return 200;
  return 202;  // lifecycle operations
}

int run_and_print(Context& ctx, manifest::Verb verb, const std::vector<manifest::File>& files, manifest::BatchOptions opts,
                  Format format) {
  bool streaming = format == Format::table || format == Format::name;
  if (streaming) opts.on_item = [&](const manifest::ItemResult& it) { print_line(ctx, it, format); };
  opts.runtime = &ctx.runtime();
  opts.on_warning = [&](const std::string& w) { ctx.warn(w); };
  auto result = manifest::run_batch(ctx.store(), verb, files, opts);
  if (streaming) {
    for (const auto& it : result.items)
      if (it.outcome == "error") return static_cast<int>(exit_code(static_cast<ErrorKind>(it.exit_kind)));
    return 0;
  }
  return print_batch_result(ctx, result, format);
}

int print_batch_result(Context& ctx, const manifest::BatchResult& result, Format format) {
  int code = 0;
  json items = json::array();
  for (const auto& it : result.items) {
    if (it.outcome == "error" && code == 0) code = static_cast<int>(exit_code(static_cast<ErrorKind>(it.exit_kind)));
    if (format == Format::json || format == Format::yaml) {
      json j = {{"where", it.where}, {"anchor", it.anchor}, {"kind", it.kind}, {"name", it.name}, {"outcome", it.outcome}};
      if (!it.error.empty()) j["error"] = it.error;
      if (!it.object.empty()) j["object"] = json::parse(it.object);
      items.push_back(j);
      continue;
    }
    print_line(ctx, it, format);
  }
  if (format == Format::json) print_json(ctx.out, items);
  if (format == Format::yaml) print_yaml(ctx.out, items);
  return code;
}

namespace {

std::vector<std::string> extra_header(const resource::Kind& k) {
  if (k.id == "cluster") return {"PROVIDER", "DELIVERY"};
  if (k.id == "deploymentIntentGroup") return {"STATE", "LOGICAL CLOUD", "RELEASE"};
  if (k.id == "logicalCloud") return {"LEVEL", "NAMESPACE", "STATE"};
  if (k.id == "compositeApp") return {"VERSION"};
  if (k.id == "controller" || k.id == "dtcController" || k.id == "clmController") return {"TYPE", "PRIORITY"};
  if (k.id == "appProfile" || k.id == "genericAppPlacementIntent" || k.id == "appDependency") return {"APP"};
  if (k.id == "clusterReference") return {"CLUSTER"};
  return {};
}

std::vector<std::string> extra_cells(const store::Resource& r, const json& spec) {
  const auto& k = *r.kind;
  auto s = [&](const char* f, const std::string& d = "") {
    auto it = spec.find(f);
    if (it == spec.end() || it->is_null()) return d;
    return it->is_string() ? it->get<std::string>() : it->dump();
  };
  if (k.id == "cluster")
    return {r.key.parts[0].second, spec.contains("gitOps") ? "gitops (" + spec["gitOps"].value("gitOpsType", "") + ")" : "kubeconfig"};
  if (k.id == "deploymentIntentGroup") return {lifecycle::current_state(r.state_info), s("logicalCloud"), s("version")};
  if (k.id == "logicalCloud") return {s("level", "1"), s("namespace"), lifecycle::current_state(r.state_info)};
  if (k.id == "compositeApp") return {r.key.parts.back().second};
  if (k.id == "controller" || k.id == "dtcController" || k.id == "clmController") return {s("type"), s("priority")};
  if (k.id == "appProfile" || k.id == "genericAppPlacementIntent" || k.id == "appDependency") return {s("app")};
  if (k.id == "clusterReference") return {s("clusterProvider") + "+" + s("cluster")};
  return {};
}

}  // namespace

void print_resources(Context& ctx, const std::vector<store::Resource>& resources, Format format, bool as_list, bool show_secrets) {
  // Clusters show their last check as status: read once for a list.
  std::map<std::string, store::ClusterCheck> checks;
  if ((format == Format::json || format == Format::yaml) && !resources.empty() && resources.front().kind->id == "cluster")
    checks = store::cluster_checks(ctx.store());
  auto render = [&](const store::Resource& r) {
    auto it = checks.find(r.key.str());
    return manifest::render_object(r, show_secrets, it == checks.end() ? "" : store::cluster_status_json(it->second));
  };
  if (format == Format::json) {
    // Stored objects are compact JSON text: lay them out without parsing
    // (a list of 10,000 clusters is mostly this loop).
    std::string text;
    if (!as_list) {
      if (resources.empty()) text = "null";
      else append_indented_json(text, render(resources.front()), 2);
    } else if (resources.empty()) {
      text = "[]";
    } else {
      text = "[\n";
      for (size_t i = 0; i < resources.size(); ++i) {
        text += "  ";
        append_indented_json(text, render(resources[i]), 2, 1);
        text += i + 1 < resources.size() ? ",\n" : "\n";
      }
      text += "]";
    }
    ctx.out << text << "\n";
    return;
  }
  if (format == Format::yaml) {
    json out;
    if (as_list) {
      out = json::array();
      for (const auto& r : resources) out.push_back(json::parse(render(r)));
    } else {
      out = resources.empty() ? json(nullptr) : json::parse(render(resources.front()));
    }
    print_yaml(ctx.out, out);
    return;
  }
  if (format == Format::name) {
    for (const auto& r : resources) ctx.out << resource::resource_anchor(*r.kind, r.key) << "\n";
    return;
  }
  if (resources.empty()) {
    ctx.note("no resources found");
    return;
  }
  const auto& k = *resources.front().kind;
  std::vector<std::string> header = {"NAME"};
  for (auto& h : extra_header(k)) header.push_back(h);
  header.push_back("DESCRIPTION");
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : resources) {
    auto data = json::parse(r.data);
    std::string name = k.id == "compositeApp" ? r.key.parts[r.key.parts.size() - 2].second : r.key.parts.back().second;
    std::vector<std::string> row = {name};
    for (auto& c : extra_cells(r, data.value("spec", json::object()))) row.push_back(c);
    row.push_back(data["metadata"].value("description", ""));
    rows.push_back(row);
  }
  print_table(ctx.out, header, rows);
}

}  // namespace emco::cli
