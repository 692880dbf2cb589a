#include "cli/resource_verbs.hpp"

#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/address.hpp"
#include "cli/batch_output.hpp"
#include "core/lifecycle/lifecycle.hpp"
#include "core/template/value.hpp"
#include "core/util/error.hpp"
#include "core/util/file_io.hpp"
#include "core/util/strings.hpp"

namespace emco::cli {

namespace fs = std::filesystem;
using nlohmann::json;
using resource::Key;
using resource::Kind;

namespace {

std::vector<std::string> address_parts(const std::string& address) { return split(address, '/'); }

Format output_of(const Invocation& inv) { return parse_format(inv.get("output", "table")); }

json read_spec_file(const std::string& path) {
  std::string text = read_input_file(path, {.what = "spec file"});
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

}  // namespace

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

void add_verbs(std::vector<CommandSpec>& out, const Noun& n) {
  const Kind& k = resource::kind(n.kind);
  // One copy of the noun shared by the handlers (a copy in each was a
  // tenth of building a noun's commands, at every start-up).
  auto np = std::make_shared<const Noun>(n);
  std::string parent_addr;
  {
    auto parts = address_parts(n.address);
    parts.pop_back();
    if (k.elements.size() > 1) parts.pop_back();
    parent_addr = join(parts, "/");
  }
  const FlagSpec output = output_flag();
  std::vector<FlagSpec> create_flags = n.flags;
  create_flags.push_back({.name = "description", .value = "TEXT", .help = "description (metadata.description)"});
  create_flags.push_back({.name = "spec-file", .value = "FILE", .help = "YAML or JSON file with the spec (flags override it)",
                          .complete = Complete::file});
  create_flags.push_back(output);
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
                 .handler = [np, &k](Context& ctx, const Invocation& inv) {
                   const Noun& noun = *np;
                   Key key = resolve_address(k, inv.args[0], noun.address, false);
                   if (ctx.store().get(key))
                     fail(ErrorKind::conflict, store::describe(k, key) + " already exists",
                          "change it with 'emco " + join(noun.words, " ") + " " + noun.update_verb + "', or use 'emco apply'");
                   json spec = inv.has("spec-file") ? read_spec_file(inv.get("spec-file")) : json::object();
                   return apply_document(ctx, make_document(noun, k, key, inv, spec), output_of(inv));
                 }});
  if (n.updatable)
    out.push_back({.path = words(n.update_verb),
                   .summary = "change a " + k.display + " (only the given flags change)",
                   .description = write_note,
                   .args = {{.name = n.address, .help = "the " + k.display}},
                   .flags = create_flags,
                   .handler = [np, &k](Context& ctx, const Invocation& inv) {
                     const Noun& noun = *np;
                     Key key = resolve_address(k, inv.args[0], noun.address, false);
                     auto existing = ctx.store().get(key);
                     if (!existing) fail(ErrorKind::not_found, store::describe(k, key) + " does not exist");
                     json data = json::parse(existing->data);
                     json spec = data.value("spec", json::object());
                     if (inv.has("spec-file")) spec.merge_patch(read_spec_file(inv.get("spec-file")));
                     auto doc = make_document(noun, k, key, inv, spec);
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
                 .flags = {output, {.name = "show-secrets", .help = "show credential values instead of <redacted>"}},
                 .handler = [np, &k](Context& ctx, const Invocation& inv) {
                   const Noun& noun = *np;
                   Key key = resolve_address(k, inv.args[0], noun.address, false);
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
                 .flags = {output},
                 .handler = [np, &k](Context& ctx, const Invocation& inv) {
                   const Noun& noun = *np;
                   Key parent = inv.args.empty() ? Key{} : resolve_address(k, inv.args[0], noun.address, true);
                   if (!parent.parts.empty() && !ctx.store().get(parent))
                     fail(ErrorKind::not_found, store::describe(resource::kind(k.parent), parent) + " does not exist");
                   print_resources(ctx, ctx.store().list(k, parent), output_of(inv), true);
                   return 0;
                 }});
  out.push_back({.path = words("delete"),
                 .summary = "delete a " + k.display,
                 .description = "Refused while the " + k.display + " has children or is referenced; the error names them.",
                 .args = {{.name = n.address, .help = "the " + k.display}},
                 .flags = {output},
                 .handler = [np, &k](Context& ctx, const Invocation& inv) {
                   const Noun& noun = *np;
                   Key key = resolve_address(k, inv.args[0], noun.address, false);
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
  auto np = std::make_shared<const Noun>(n);
  for (const auto& [op, summary] : ops) {
    auto path = n.words;
    path.push_back(op);
    out.push_back({.path = path,
                   .summary = summary,
                   .args = {{.name = n.address, .help = "the " + k.display}},
                   .handler = [np, &k, op = op](Context& ctx, const Invocation& inv) {
                     const Noun& noun = *np;
                     Key key = resolve_address(k, inv.args[0], noun.address, false);
                     auto result = lifecycle::run_operation(ctx.store(), k, key, op, json::object(), ctx.clock(), ctx.runtime());
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

json kv_list(const std::vector<std::string>& items, const std::string& flag) {
  json out = json::array();
  for (const auto& [k, v] : key_values(items, flag)) out.push_back({{k, v}});
  return out;
}

FlagSpec kv_flag() {
  return {.name = "kv", .value = "KEY=VALUE", .help = "a key-value pair", .repeatable = true};
}

}  // namespace emco::cli
