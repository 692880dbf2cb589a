#include "core/manifest/batch.hpp"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <mutex>
#include <optional>
#include <set>

#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/lifecycle/lifecycle.hpp"
#include "core/manifest/packages.hpp"
#include "core/resource/references.hpp"
#include "core/resource/schema.hpp"
#include "core/store/cluster_checks.hpp"
#include "core/store/vault.hpp"
#include "core/util/error.hpp"
#include "core/util/file_io.hpp"
#include "core/util/strings.hpp"

namespace emco::manifest {

namespace fs = std::filesystem;
using nlohmann::json;
using resource::Anchor;
using resource::AnchorTarget;
using resource::Key;
using resource::Kind;

namespace {

[[noreturn]] void bad(const std::string& where, ErrorKind kind, const std::string& msg, const std::string& hint = {}) {
  fail(kind, where.empty() ? msg : where + ": " + msg, hint);
}

const resource::Schema& metadata_schema() {
  static const resource::Schema s = resource::obj({resource::opt("name", resource::str()),
                                                   resource::opt("description", resource::str(1024)),
                                                   resource::opt("userData1", resource::str(512)),
                                                   resource::opt("userData2", resource::str(512))});
  return s;
}

std::string resolve_path(const Document& doc, const std::string& p) {
  if (p.empty()) return p;
  fs::path path(p);
  if (path.is_absolute()) return p;
  fs::path beside = fs::path(doc.base_dir) / path;
  // symlink_status: a broken link or a symlink loop is there (and refused when read).
  auto present = [](const fs::path& x) {
    std::error_code ec;
    return fs::exists(fs::symlink_status(x, ec));
  };
  if (present(beside)) return beside.string();
  if (present(path)) return p;  // emcoctl resolved against the working directory
  return beside.string();
}

std::string read_plain_file(const Document& doc, const std::string& p, const std::string& where) {
  std::string path = resolve_path(doc, p);
  std::error_code ec;
  // symlink_status: a symlink loop exists (and is refused below as one).
  if (!fs::exists(fs::symlink_status(path, ec)))
    bad(where, ErrorKind::invalid, "cannot read file '" + p + "': no such file",
        doc.line ? "paths in file:/files: are relative to the YAML file's directory ('" + doc.base_dir + "')"
                 : "paths are relative to the current directory");
  try {
    return read_input_file(path, {.what = "file", .shown = p});
  } catch (const Error& e) {
    throw e.with_context(where);
  }
}

// Checks that go beyond the per-field schema (resources.md notes).
void check_kind_rules(const Document& doc, const Kind& k, json& spec, bool has_file, std::vector<std::string>& warnings) {
  auto where = [&](const std::string& p) { return doc.where(p); };
  if (k.id == "cluster") {
    if (!spec.contains("gitOps") && !has_file)
      bad(doc.where(), ErrorKind::invalid, "a cluster needs a kubeconfig (file:) or spec.gitOps",
          "add 'file: path/to/kubeconfig', or GitOps settings under spec.gitOps");
  } else if (k.id == "genericAppPlacementIntent") {
    auto& intent = spec["intent"];
    bool label = false;
    size_t count = 0;
    for (const char* group : {"allOf", "anyOf"}) {
      if (!intent.contains(group)) continue;
      for (size_t i = 0; i < intent[group].size(); ++i) {
        auto& e = intent[group][i];
        std::string p = std::string("spec.intent.") + group + "[" + std::to_string(i) + "]";
        bool has_cluster = e.contains("cluster") && !e["cluster"].get<std::string>().empty();
        bool has_label = e.contains("clusterLabel") && !e["clusterLabel"].get<std::string>().empty();
        if (!has_cluster && !has_label)
          bad(where(p), ErrorKind::invalid, "'" + p + "' needs a cluster or a clusterLabel");
        label = label || (has_label && !has_cluster);
        ++count;
      }
    }
    if (count == 0)
      bad(where("spec.intent"), ErrorKind::invalid, "the placement intent names no cluster",
          "list clusters under spec.intent.allOf or spec.intent.anyOf");
    intent["selector"] = label ? "label" : "name";
  } else if (k.id == "genericResource") {
    bool new_object = spec.value("newObject", "false") == "true";
    std::string gvk_kind = spec.contains("resourceGVK") ? spec["resourceGVK"].value("kind", "") : "";
    if (new_object && !has_file && gvk_kind != "ConfigMap" && gvk_kind != "Secret")
      bad(where("spec.newObject"), ErrorKind::invalid, "a new " + (gvk_kind.empty() ? "object" : gvk_kind) + " needs a template file",
          "add 'file: <template.yaml>' (only ConfigMaps and Secrets can be built from customization files alone)");
  } else if (k.id == "logicalCloud") {
    // Upstream's dcm stores a level-1 cloud without them and fails at
    // instantiate; emco stores it too, says so now and refuses instantiate
    // (lc_dcm.hpp check_level1) before anything reaches a cluster.
    std::string level = spec.value("level", "1");
    if (level == "1") {
      std::vector<std::string> missing;
      if (!spec.contains("namespace") || spec["namespace"].get<std::string>().empty()) missing.push_back("spec.namespace");
      if (!spec.contains("user") || spec["user"].value("userName", "").empty()) missing.push_back("spec.user.userName");
      if (!missing.empty())
        warnings.push_back(where("spec") + ": level-1 logical cloud '" + doc.name + "' has no " + join(missing, " and ") +
                           "; it is stored, but cannot be instantiated until it has (or set spec.level: \"0\" for an admin cloud)");
    }
  } else if (k.id == "deploymentIntentGroup") {
    // The release name becomes part of Kubernetes object names: DNS-1123 label.
    std::string v = spec["version"];
    bool ok = !v.empty() && v.size() <= 63 && std::isalnum(static_cast<unsigned char>(v.front())) &&
              std::isalnum(static_cast<unsigned char>(v.back()));
    for (char c : v) ok = ok && (std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-');
    if (!ok)
      bad(where("spec.version"), ErrorKind::invalid, "spec.version '" + v + "' is not a valid Helm release name",
          "use lowercase letters, digits and '-' (a DNS-1123 label), e.g. r1");
  }
}

// Checks needing the store (one app profile per app, quotas on admin clouds).
void check_store_rules(const store::Store& st, const Document& doc, const Kind& k, const Key& key, const json& spec) {
  if (k.id == "appProfile") {
    Key parent = key.parent_prefix(key.parts.size() - 1);
    for (const auto& other : st.list(k, parent)) {
      if (other.key == key) continue;
      auto data = json::parse(other.data);
      if (data["spec"].value("app", "") == spec.value("app", ""))
        bad(doc.where("spec.app"), ErrorKind::conflict,
            "app '" + spec.value("app", "") + "' already has a profile in this composite profile (" +
                store::describe(k, other.key) + ")",
            "a composite profile holds one profile per app");
    }
  } else if (k.id == "clusterQuota") {
    Key lc_key = key.parent_prefix(key.parts.size() - 1);
    if (auto lc = st.get(lc_key)) {
      auto data = json::parse(lc->data);
      if (data["spec"].value("level", "1") == "0")
        bad(doc.where(), ErrorKind::invalid, "cluster quotas apply to level-1 logical clouds only",
            "admin (level 0) logical clouds take no quotas");
    }
  }
}

// What applying `r` means beyond storing it: a feature emco stores but cannot
// run (a plugin with PluginInfo::runs false, a registered controller emco
// has no implementation of), or a soft reference whose target is missing.
void check_meaning(const store::Store& st, const Document& doc, const store::Resource& r, const json& spec,
                   const lifecycle::Runtime* runtime, std::vector<std::string>& warnings) {
  const Kind& k = *r.kind;
  if (runtime) {
    if (const lifecycle::PluginInfo* p = lifecycle::stored_only_plugin(*runtime, k))
      warnings.push_back(lifecycle::stored_only_warning(*p, k));
    if (k.id == "controller") {
      const std::string name = r.key.parts.back().second;
      std::string feature = lifecycle::missing_controller(*runtime, name, spec.value("type", ""));
      if (!feature.empty())
        warnings.push_back(doc.where() + ": controller '" + name + "' is registered, but emco has no " + feature +
                           " controller yet; instantiate will fail where a group intent names it");
    }
  }
  for (const auto& t : resource::compute_references(k, r.key, spec)) {
    if (!t.soft || st.get(t.key)) continue;
    warnings.push_back(doc.where(t.field) + ": " + store::describe(*t.kind, t.key) + " named in " + t.field +
                       " does not exist; stored anyway, as upstream does (create it before instantiate)");
  }
}

bool is_declarative(const Document& d) {
  return d.anchor.target == AnchorTarget::collection || d.anchor.target == AnchorTarget::resource;
}

std::string lifecycle_anchor(const Document& d) { return d.anchor.text; }

bool has_anchor(const Document& d) { return d.anchor.kind != nullptr; }

ItemResult error_item(const Document& d, const Error& e) {
  ItemResult it;
  it.where = d.where();
  it.anchor = d.anchor_text;
  it.document_anchor = d.anchor_text;
  // A resource document's error names the resource, as its success does
  // (emcoctl's delete and update print the resource's URL either way).
  if (has_anchor(d) && is_declarative(d) && !d.anchor_error) {
    try {
      const Key key = document_key(d);
      it.anchor = resource::resource_anchor(*d.anchor.kind, key);
      it.kind = d.anchor.kind->id;
      it.name = key.parts.back().second;
    } catch (const Error&) {
      // no name to give (the error may be that very one): the document's anchor
    }
  }
  it.outcome = "error";
  it.error = e.message();
  it.hint = e.hint();
  it.exit_kind = static_cast<int>(e.kind());
  return it;
}

// What a preparer made of a content in this process: a batch file often
// attaches one kubeconfig to thousands of clusters, and the result depends on
// the content and the directory it was read from only (the label just names
// the resource in errors).
// Shared by every thread running batches (`emco serve`'s workers): guarded by
// prepared_mutex().
std::unordered_map<std::string, std::string>& prepared_contents() {
  static std::unordered_map<std::string, std::string> prepared;
  return prepared;
}
std::mutex& prepared_mutex() {
  static std::mutex m;
  return m;
}
std::string prepared_key(const std::string& kind_id, const std::string& path, const std::string& data) {
  return kind_id + '\0' + fs::path(path).parent_path().string() + '\0' + data;
}

}  // namespace

Key document_key(const Document& doc) {
  const Anchor& a = doc.anchor;
  if (a.target != AnchorTarget::collection) return a.key;
  const Kind& k = *a.kind;
  if (doc.name.empty())
    bad(doc.where("metadata"), ErrorKind::invalid, "missing metadata.name",
        k.body == resource::BodyShape::label ? "a label document needs 'clusterLabel: <label>'"
                                             : "every " + k.display + " needs a name under metadata.name");
  if (!resource::is_valid_name(doc.name))
    bad(doc.where(k.body == resource::BodyShape::label && !doc.body->at("metadata").contains("name") ? "clusterLabel"
                                                                                                      : "metadata.name"),
        ErrorKind::invalid, "invalid name '" + doc.name + "'", resource::name_rule_text());
  Key key = a.key;
  for (const auto& f : k.fixed) key.parts.push_back(f);
  key.parts.emplace_back(k.elements[0], doc.name);
  if (k.elements.size() > 1) {
    const json& spec = doc.body->value("spec", json::object());
    std::string version = spec.is_object() ? spec.value("compositeAppVersion", "") : "";
    if (version.empty())
      bad(doc.where("spec"), ErrorKind::invalid, "missing spec.compositeAppVersion",
          "a composite app is created with its version: spec: {compositeAppVersion: v1}");
    key.parts.emplace_back(k.elements[1], version);
  }
  return key;
}

store::Resource prepare_resource(const Document& doc, Clock& clock, const lifecycle::Runtime* runtime,
                                 std::vector<std::string>* warnings) {
  std::vector<std::string> ignored_warnings;
  std::vector<std::string>& warn = warnings ? *warnings : ignored_warnings;
  const Kind& k = *doc.anchor.kind;
  store::Resource r;
  r.kind = &k;
  r.key = document_key(doc);
  if (doc.anchor.target == AnchorTarget::resource && !doc.name.empty() && doc.name != r.key.parts.back().second &&
      k.elements.size() == 1)
    bad(doc.where("metadata.name"), ErrorKind::invalid,
        "metadata.name '" + doc.name + "' does not match the anchor's name '" + r.key.parts.back().second + "'");

  json metadata = doc.body->value("metadata", json::object());
  if (auto v = resource::validate_and_canonicalise(metadata, metadata_schema(), "metadata"); !v.empty())
    bad(doc.where(v[0].path), ErrorKind::invalid, v[0].message, v[0].hint);
  metadata["name"] = r.key.parts.back().second;
  if (k.elements.size() > 1) metadata["name"] = r.key.parts[r.key.parts.size() - 2].second;

  json spec = doc.body->contains("spec") ? doc.body->at("spec") : json(nullptr);
  if (spec.is_null()) spec = json::object();
  if (auto v = resource::validate_and_canonicalise(spec, k.spec, "spec"); !v.empty())
    bad(doc.where(v[0].path), ErrorKind::invalid, v[0].message, v[0].hint);

  // Attached files.
  if (!doc.files.empty() && k.file == resource::FileMode::none)
    bad(doc.where(doc.multi_file ? "files" : "file"), ErrorKind::invalid,
        "a " + k.display + " takes no file", "remove the file:/files: entry");
  for (const auto& f : doc.inline_files) r.contents.push_back({f.name, f.filename, f.data});
  if (doc.files.empty() && r.contents.empty() && k.file_required)
    bad(doc.where(), ErrorKind::invalid,
        std::string(std::string("aeiou").find(k.display[0]) != std::string::npos ? "an " : "a ") + k.display + " needs its " +
            k.file_what + (doc.line ? " (file:)" : ""),
        "add 'file: <path>' to the document");
  for (size_t i = 0; i < doc.files.size(); ++i) {
    const std::string& p = doc.files[i];
    std::string where = doc.where(doc.multi_file ? "files[" + std::to_string(i) + "]" : "file");
    store::Content c;
    c.name = doc.multi_file ? fs::path(p).filename().string() : "file";
    c.filename = fs::path(p).filename().string();
    try {
      if (k.id == "app") c.data = load_chart_package(resolve_path(doc, p), r.key.parts.back().second);
      else if (k.id == "appProfile") c.data = load_profile_package(resolve_path(doc, p));
      else c.data = read_plain_file(doc, p, where);
    } catch (const Error& e) {
      if (starts_with(e.message(), doc.source + ":")) throw;
      throw e.with_context(where);
    }
    const lifecycle::ContentPreparer* preparer = nullptr;
    if (runtime)
      if (auto v = runtime->preparers.find(k.id); v != runtime->preparers.end()) preparer = &v->second;
    if (preparer) {
      const std::string path = fs::absolute(resolve_path(doc, p)).string();
      std::string key = prepared_key(k.id, path, c.data);
      std::optional<std::string> known;
      {
        std::lock_guard lock(prepared_mutex());
        if (auto it = prepared_contents().find(key); it != prepared_contents().end()) known = it->second;
      }
      if (known) {
        c.data = std::move(*known);
      } else {
        std::vector<std::string> values;
        for (const auto& part : r.key.parts) values.push_back(part.second);
        try {
          c.data = (*preparer)(c.data, path, join(values, "+"));
        } catch (const Error& e) {
          // Upstream's clm never reads a GitOps cluster's file: the
          // multipart API just needs one (examples upload values.yaml).
          if (k.id == "cluster" && spec.contains("gitOps") && e.kind() == ErrorKind::invalid) continue;
          throw e.with_context(where);
        }
        std::lock_guard lock(prepared_mutex());
        // A long-running process (`emco serve`) prepares each upload in a
        // directory of its own: bounded, so memory stays flat.
        if (prepared_contents().size() >= 4096) prepared_contents().clear();
        prepared_contents().emplace(std::move(key), c.data);
      }
    }
    r.contents.push_back(std::move(c));
  }

  check_kind_rules(doc, k, spec, !r.contents.empty() || !doc.files.empty(), warn);

  json data = {{"metadata", metadata}, {"spec", spec}};
  if (k.id == "deploymentIntentGroup" || k.id == "compositeApp") data["spec"].erase("id");
  r.data = data.dump();
  if (k.lifecycle) r.state_info = lifecycle::initial_state_info(clock);
  return r;
}

std::string render_object(const store::Resource& r, bool show_secrets, const std::string& status) {
  if (r.kind->body == resource::BodyShape::label) return json{{"clusterLabel", r.key.parts.back().second}}.dump();
  // Most objects are returned as stored; only redaction and the DIG's
  // current state change them.
  if (!r.kind->secret_spec && !(r.kind->lifecycle && r.kind->id == "deploymentIntentGroup")) {
    if (status.empty() || r.data.size() < 2 || r.data.back() != '}') return r.data;
    // The stored object is compact JSON: the status goes in before its last brace.
    return r.data.substr(0, r.data.size() - 1) + ",\"status\":" + status + "}";
  }
  auto data = json::parse(r.data);
  if (r.kind->secret_spec && data["spec"].contains("kv")) {
    for (auto& entry : data["spec"]["kv"])
      for (auto it = entry.begin(); it != entry.end(); ++it) {
        if (!show_secrets) it.value() = "<redacted>";
        else if (it.value().is_string() && store::is_sealed(it.value().get_ref<const std::string&>()))
          fail(ErrorKind::workspace,
               "cannot show kv '" + it.key() + "' of " + store::describe(*r.kind, r.key) +
                   ": it is encrypted and the workspace key is not set (or is another key)",
               "set EMCO_KEY_FILE to the workspace's key file (or EMCO_KEY), or leave out --show-secrets");
      }
  }
  if (r.kind->lifecycle && !r.state_info.empty()) {
    std::string state = lifecycle::current_state(r.state_info);
    if (r.kind->id == "deploymentIntentGroup") data["spec"]["action"] = state;
  }
  if (!status.empty()) data["status"] = json::parse(status);
  return data.dump();
}

std::string status_of(store::Store& st, const store::Resource& r) {
  if (r.kind->id != "cluster") return "";
  auto check = store::cluster_check(st, r.key);
  return check ? store::cluster_status_json(*check) : "";
}

BatchResult run_batch(store::Store& st, Verb verb, const std::vector<File>& files, const BatchOptions& opts) {
  Clock& clock = opts.clock ? *opts.clock : system_clock();
  std::vector<const Document*> docs;
  for (const auto& f : files)
    for (const auto& d : f.documents) docs.push_back(&d);
  if (verb == Verb::remove) std::reverse(docs.begin(), docs.end());

  // The same resource named twice in one invocation is almost always a
  // copy-paste slip; refuse before changing anything.
  {
    std::map<std::string, const Document*> seen;
    for (const Document* d : docs) {
      if (!has_anchor(*d) || !is_declarative(*d)) continue;
      Key key;
      try {
        key = document_key(*d);
      } catch (const Error& e) {
        if (verb == Verb::get || verb == Verb::remove) continue;
        throw;
      }
      auto [it, fresh] = seen.emplace(key.str(), d);
      if (!fresh)
        fail(ErrorKind::invalid,
             d->where() + ": document " + std::to_string(d->index) + " names the same " + d->anchor.kind->display + " '" +
                 d->name + "' as " + it->second->where(),
             "each resource may appear once per invocation; merge the two documents");
    }
  }

  BatchResult result;
  size_t emitted = 0;
  auto emit_pending = [&] {
    for (; emitted < result.items.size(); ++emitted)
      if (opts.on_item) opts.on_item(result.items[emitted]);
  };
  auto record_error = [&](const Document& d, const Error& e) {
    result.items.push_back(error_item(d, e));
    ++result.errors;
  };
  // Warnings of declarative documents wait for their transaction: a batch
  // that fails changed nothing, so it has nothing to warn about either.
  std::set<std::string> warned;
  std::vector<std::string> held;
  auto warn = [&](const std::string& text) {
    if (opts.on_warning && warned.insert(text).second) opts.on_warning(text);
  };
  auto release_held = [&](bool committed) {
    if (committed)
      for (const auto& w : held) warn(w);
    held.clear();
  };
  for (const Document* d : docs)
    for (const auto& w : d->warnings) warn(w);

  // Declarative documents: one transaction (or one per document with continue_on_error).
  auto run_declarative = [&](const Document& d) {
    ItemResult it;
    it.where = d.where();
    it.document_anchor = d.anchor_text;
    it.kind = d.anchor.kind->id;
    switch (verb) {
      case Verb::apply:
      case Verb::update: {
        store::Resource r = prepare_resource(d, clock, opts.runtime, &held);
        it.anchor = resource::resource_anchor(*r.kind, r.key);
        it.name = r.key.parts.back().second;
        auto existing = st.get(r.key);
        if (verb == Verb::update && !existing)
          bad(d.where(), ErrorKind::not_found, store::describe(*r.kind, r.key) + " does not exist",
              "'update' changes existing resources; use 'apply' to create it");
        if (verb == Verb::apply && opts.create_only && existing)
          bad(d.where(), ErrorKind::conflict, store::describe(*r.kind, r.key) + " already exists",
              "PUT (emcoctl update) changes an existing resource");
        const bool changes = !existing || existing->data != r.data || existing->contents != r.contents;
        check_store_rules(st, d, *r.kind, r.key, json::parse(r.data)["spec"]);
        if (changes) {
          try {
            if (existing) lifecycle::check_modify_allowed(*r.kind, *existing);
            if (opts.runtime) {
              lifecycle::check_inputs_changeable(st, *opts.runtime, *r.kind, r.key);
              auto c = opts.runtime->checks.find(r.kind->id);
              if (c != opts.runtime->checks.end() && c->second.put) c->second.put(st, r);
            }
          } catch (const Error& e) {
            throw e.with_context(d.where());
          }
        }
        check_meaning(st, d, r, json::parse(r.data)["spec"], opts.runtime, held);
        try {
          it.outcome = store::outcome_word(st.put(std::move(r)));
        } catch (const Error& e) {
          throw e.with_context(d.where());
        }
        break;
      }
      case Verb::get: {
        Key key = document_key(d);
        auto r = st.get(key);
        it.anchor = resource::resource_anchor(*d.anchor.kind, key);
        it.name = key.parts.back().second;
        if (!r) bad(d.where(), ErrorKind::not_found, store::describe(*d.anchor.kind, key) + " does not exist");
        it.outcome = "found";
        it.object = render_object(*r, opts.show_secrets, status_of(st, *r));
        break;
      }
      case Verb::remove: {
        Key key = document_key(d);
        it.anchor = resource::resource_anchor(*d.anchor.kind, key);
        it.name = key.parts.back().second;
        auto r = st.get(key);
        if (!r) {
          if (opts.ignore_not_found) {
            it.outcome = "not found (ignored)";
            break;
          }
          bad(d.where(), ErrorKind::not_found, store::describe(*d.anchor.kind, key) + " does not exist",
              "use --ignore-not-found to skip resources that are already gone");
        }
        try {
          lifecycle::before_delete(st, *d.anchor.kind, *r);
          if (opts.runtime) {
            lifecycle::check_inputs_changeable(st, *opts.runtime, *d.anchor.kind, key);
            auto c = opts.runtime->checks.find(d.anchor.kind->id);
            if (c != opts.runtime->checks.end() && c->second.remove) c->second.remove(st, *r);
          }
        } catch (const Error& e) {
          throw e.with_context(d.where());
        }
        try {
          st.remove(key);
        } catch (const Error& e) {
          throw e.with_context(d.where());
        }
        it.outcome = "deleted";
        break;
      }
    }
    result.items.push_back(std::move(it));
  };

  auto run_lifecycle = [&](const Document& d) {
    std::string op = d.anchor.operation;
    ItemResult it;
    it.where = d.where();
    it.document_anchor = d.anchor_text;
    it.anchor = lifecycle_anchor(d);
    it.kind = d.anchor.kind->id;
    it.name = d.anchor.key.parts.empty() ? "" : d.anchor.key.parts.back().second;
    if (d.anchor.target == AnchorTarget::status) {
      // emcoctl get -f GETs a status anchor like any other; the other verbs
      // have nothing to do with it.
      if (verb == Verb::get) {
        if (!opts.runtime) fail(ErrorKind::internal, "status anchors need the runtime");
        try {
          it.object = lifecycle::anchor_status(st, *opts.runtime, d.anchor).dump();
        } catch (const Error& e) {
          throw e.with_context(d.where());
        }
        it.anchor = d.anchor_text;
        it.outcome = "found";
      } else {
        it.outcome = "skipped";
      }
      result.items.push_back(it);
      return;
    }
    if (verb == Verb::get || verb == Verb::update) {
      it.outcome = "skipped";
      result.items.push_back(it);
      return;
    }
    if (verb == Verb::remove) {
      // Deleting a file undoes what applying it made: an instantiate (or
      // apply) becomes terminate, as emcoctl's delete does, and a phase's
      // operations ("enrollment/instantiate") map as the plain ones. Every
      // other operation has nothing to undo and is skipped: emcoctl skips
      // approve, migrate, update and rollback and sends the rest a DELETE
      // that EMCO refuses; running them (a workflow's start or cancel, a
      // stop) would act where the user asked to remove.
      const auto slash = op.rfind('/');
      const std::string phase = slash == std::string::npos ? "" : op.substr(0, slash + 1);
      const std::string base = op.substr(phase.size());
      if (base != "instantiate" && base != "apply") {
        it.outcome = "skipped";
        result.items.push_back(it);
        return;
      }
      op = phase + "terminate";
    }
    try {
      if (!opts.runtime) fail(ErrorKind::internal, "lifecycle anchors need the runtime");
      if (opts.deliver) {
        it.outcome = lifecycle::run_operation(st, *d.anchor.kind, d.anchor.key, op, *d.body, clock, *opts.runtime);
      } else {
        lifecycle::OperationOptions o;
        o.runtime = opts.runtime;
        o.wait = false;
        it.outcome = lifecycle::run(st, *d.anchor.kind, d.anchor.key, op, *d.body, clock, o).message;
      }
    } catch (const Error& e) {
      throw e.with_context(d.where());
    }
    result.items.push_back(std::move(it));
  };

  std::vector<const Document*> declarative, operations;
  for (const Document* d : docs) (is_declarative(*d) ? declarative : operations).push_back(d);

  auto run_all_declarative = [&] {
    if (opts.continue_on_error) {
      for (const Document* d : declarative) {
        if (opts.stop_at_first_error && result.errors) return;
        size_t before = result.items.size();
        try {
          if (d->anchor_error) throw *d->anchor_error;
          // A body may run again (store::Database::transaction): each run
          // starts from what it found.
          st.write([&] {
            result.items.resize(before);
            held.clear();
            run_declarative(*d);
          });
          release_held(true);
        } catch (const Error& e) {
          release_held(false);
          result.items.resize(before);
          record_error(*d, e);
        }
        emit_pending();
      }
      return;
    }
    for (const Document* d : declarative)
      if (d->anchor_error) throw *d->anchor_error;
    if (verb == Verb::get) {
      for (const Document* d : declarative) {
        run_declarative(*d);
        emit_pending();
      }
    } else {
      try {
        const size_t before = result.items.size();
        st.write([&] {
          result.items.resize(before);  // a re-run (see above) starts afresh
          held.clear();
          // What the documents name, read in a few queries rather than one
          // (or more) per document: on a database server each is a round trip.
          std::vector<Key> keys;
          for (const Document* d : declarative) {
            try {
              keys.push_back(document_key(*d));
            } catch (const Error&) {
              // reported when the document runs
            }
          }
          st.prefetch(keys);
          for (const Document* d : declarative) run_declarative(*d);
        });
      } catch (...) {
        release_held(false);
        throw;
      }
      release_held(true);
      emit_pending();  // only once committed
    }
  };
  auto run_all_operations = [&] {
    for (const Document* d : operations) {
      if (opts.stop_at_first_error && result.errors) return;
      if (opts.continue_on_error) {
        try {
          run_lifecycle(*d);
        } catch (const Error& e) {
          record_error(*d, e);
        }
      } else {
        run_lifecycle(*d);
      }
      emit_pending();
    }
  };

  // apply: resources first, then operations in file order; delete: terminate
  // first (reverse order), then the resources.
  if (verb == Verb::remove) {
    run_all_operations();
    run_all_declarative();
  } else {
    run_all_declarative();
    run_all_operations();
  }
  // Keep output in document order.
  return result;
}

}  // namespace emco::manifest
