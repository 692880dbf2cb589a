// Commands given a bare anchor instead of a file: `emco get projects`,
// `emco apply .../approve`, `emco delete projects/p1`.

#include <nlohmann/json.hpp>

#include "cli/batch_output.hpp"
#include "cli/table.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/store/cluster_checks.hpp"
#include "core/util/error.hpp"
#include "core/util/strings.hpp"

namespace emco::cli {

using nlohmann::json;
using resource::AnchorTarget;

namespace {

// A cluster list's query, as upstream's clm answers it: ?label=L gives the
// names of the provider's clusters carrying label L, ?withLabels=true every
// cluster as {metadata, labels: [{clusterLabel}]} (and emco's status with
// the last check, once checked); other parameters are ignored, as upstream
// ignores them.
int print_cluster_query(Context& ctx, store::Store& st, const std::vector<store::Resource>& clusters,
                        const std::string& query, Format format) {
  std::string label;
  bool with_labels = false;
  for (const auto& pair : split(query, '&')) {
    const auto eq = pair.find('=');
    const std::string key = pair.substr(0, eq), value = eq == std::string::npos ? "" : pair.substr(eq + 1);
    if (key == "label") label = value;
    if (key == "withLabels") with_labels = value == "true";
  }
  if (label.empty() && !with_labels) {
    print_resources(ctx, clusters, format, true);
    return 0;
  }
  const resource::Kind& label_kind = resource::kind("clusterLabel");
  const auto checks = with_labels ? store::cluster_checks(st) : std::map<std::string, store::ClusterCheck>{};
  json out = json::array();
  for (const auto& c : clusters) {
    json labels = json::array();
    bool has = false;
    for (const auto& l : st.list(label_kind, c.key)) {
      labels.push_back({{"clusterLabel", l.key.parts.back().second}});
      has = has || l.key.parts.back().second == label;
    }
    if (!label.empty()) {
      if (has) out.push_back(c.key.parts.back().second);
    } else {
      json entry = {{"metadata", json::parse(c.data)["metadata"]}, {"labels", labels}};
      // emco's last check (the fleet's reachability), as in the cluster's GET.
      if (auto it = checks.find(c.key.str()); it != checks.end()) entry["status"] = json::parse(store::cluster_status_json(it->second));
      out.push_back(std::move(entry));
    }
  }
  if (format == Format::yaml) {
    print_yaml(ctx.out, out);
  } else if (format == Format::json || label.empty()) {  // the labelled list has no table form
    print_json(ctx.out, out);
  } else {
    for (const auto& name : out) ctx.out << name.get<std::string>() << "\n";  // names, one a line
  }
  return 0;
}

}  // namespace

int run_anchor(Context& ctx, manifest::Verb verb, const std::string& text, Format format, const manifest::BatchOptions& opts) {
  auto anchor = resource::parse_anchor(text);
  auto& st = ctx.store();
  if (verb == manifest::Verb::get) {
    switch (anchor.target) {
      case AnchorTarget::collection: {
        if (!anchor.key.parts.empty() && !st.get(anchor.key))
          fail(ErrorKind::not_found, store::describe(resource::kind(anchor.kind->parent), anchor.key) + " does not exist");
        auto items = st.list(*anchor.kind, anchor.key);
        if (anchor.kind->id == "cluster" && !anchor.query.empty())
          return print_cluster_query(ctx, st, items, anchor.query, format);
        print_resources(ctx, items, format, true, opts.show_secrets);
        return 0;
      }
      case AnchorTarget::resource: {
        auto r = st.get(anchor.key);
        if (!r) fail(ErrorKind::not_found, store::describe(*anchor.kind, anchor.key) + " does not exist");
        print_resources(ctx, {*r}, format, false, opts.show_secrets);
        return 0;
      }
      case AnchorTarget::status: {
        json out = lifecycle::anchor_status(st, ctx.runtime(), anchor);
        if (format == Format::yaml) print_yaml(ctx.out, out);
        else print_json(ctx.out, out);
        return 0;
      }
      case AnchorTarget::operation:
        fail(ErrorKind::usage, "'" + anchor.text + "' is a lifecycle operation, not something to get",
             "run it with 'emco apply " + anchor.text + "'");
    }
  }
  // apply/delete/update of one anchor: a one-document batch with an empty body.
  manifest::Document doc;
  doc.source = "<command line>";
  doc.line = 0;  // no file position
  doc.index = 1;
  doc.anchor_text = text;
  doc.anchor = anchor;
  doc.body = std::make_shared<json>(json{{"metadata", json::object()}});
  if (anchor.target == AnchorTarget::collection && verb != manifest::Verb::get)
    fail(ErrorKind::usage, "'" + anchor.text + "' is a collection; name a resource or use -f FILE",
         "e.g. 'emco delete " + anchor.text + "/<name>'");
  if (anchor.target == AnchorTarget::resource) doc.name = anchor.key.parts.back().second;
  manifest::File file;
  file.source = doc.source;
  file.documents.push_back(doc);
  return run_and_print(ctx, verb, {file}, opts, format);
}

}  // namespace emco::cli
