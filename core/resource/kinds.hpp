#pragma once
// The kinds registry: every EMCO resource type emco stores, with its key
// elements, parent, anchor segment, owning upstream service, spec schema,
// attached files, lifecycle operations and references (the referential
// schema of resources.md §1 / seed 004).
//
// A resource is identified by a Key: the ordered (element, value) pairs from
// the root, e.g. project=p / compositeApp=ca / compositeAppVersion=v1 /
// app=nginx. Key element names are unique across kinds, except where a kind
// has fixed elements (controllers: controllerGroup=orchestrator|dtc|cluster).

#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/resource/schema.hpp"

namespace emco::resource {

using KeyPart = std::pair<std::string, std::string>;  // element, value

struct Key {
  std::vector<KeyPart> parts;

  // "project=p/compositeApp=ca" — canonical text, sorts parents before children.
  std::string str() const;
  // {"project":"p",...} as JSON text, in key order.
  std::string json() const;
  // Upstream's keyId: sorted element names, "{app,compositeApp,compositeAppVersion,project,}".
  std::string key_id() const;
  std::optional<std::string> get(const std::string& element) const;
  Key parent_prefix(size_t n) const;  // the first n parts
  bool operator==(const Key& o) const { return parts == o.parts; }
  bool operator<(const Key& o) const { return parts < o.parts; }

  static Key parse(const std::string& canonical);  // inverse of str()
};

enum class FileMode { none, single, multiple };
enum class BodyShape { metadata, label };  // label: {"clusterLabel": "<name>"} instead of metadata
enum class RefType { plain, many, map, label, path };

// One reference from a kind to another (resources.md §0).
struct Reference {
  std::string target;                                // kind id referenced
  RefType type = RefType::plain;
  std::string map_field;                             // map: spec field whose keys name the target
  std::vector<KeyPart> fixed_kv;                     // fixedKv
  std::vector<std::string> filter_keys;              // filterKeys (map keys to skip)
  std::string common_key;                            // commonKey
  std::vector<std::string> paths;                    // path: dotted spec paths whose string values name the target's last element
  std::pair<std::string, std::string> only_if;       // applies only when spec at this dotted path equals the value
  // Upstream stores the resource when the target is missing (its store only
  // logs it): the store then records no reference, and the batch warns.
  bool soft = false;
};

struct Kind {
  std::string id;                       // unique id: the last key element ("cluster", "app", ...)
  std::string parent;                   // parent kind id, "" for roots
  std::vector<std::string> elements;    // own key elements (usually one; compositeApp has two)
  std::vector<KeyPart> fixed;           // fixed own key elements (controllerGroup)
  std::string collection;               // anchor segment of the collection ("clusters")
  std::string service;                  // upstream service (clm, orchestrator, dcm, ...)
  std::string display;                  // human name ("cluster label")
  Schema spec;                          // schema of `spec`
  BodyShape body = BodyShape::metadata;
  FileMode file = FileMode::none;
  bool file_required = false;
  std::string file_what;                // "kubeconfig", "Helm chart .tgz", ...
  bool lifecycle = false;               // keeps stateInfo
  std::vector<std::string> operations;  // lifecycle anchors ("approve", "enrollment/instantiate", ...)
  std::vector<Reference> references;
  bool secret_spec = false;             // spec values are credentials: redacted in output, sealed at rest
  bool secret_file = false;             // attached files are credentials (a kubeconfig): sealed at rest
};

// All kinds in registry order (parents before children): core's own, then
// those plugins added with install_kinds(). References to kinds stay valid
// for the whole process (installing more does not move them).
const std::deque<Kind>& all_kinds();
// Adds plugins' kinds (intents of controllers) after core's, moving them in
// (copying every schema was a tenth of a short command's start-up). Called by
// the composition root once, before any other thread runs, or by the kind
// loader; a kind defined twice, before its parent or without a parent (the
// roots are core's) is Error(internal).
void install_kinds(std::vector<Kind>&& kinds);
// The composition root's way to install the plugins' kinds on first need
// instead of at every start-up: `loader` (which calls install_kinds) runs
// once, on the first lookup core's kinds cannot answer (find_kind, kind) or
// the first walk over every kind (all_kinds, children_of, parse_anchor...),
// from whichever thread asks first; the others wait for it. Set it before
// any other thread runs.
void set_kind_loader(void (*loader)());
// References for kind definitions: to one resource of `target` named by a
// spec field of the same name, or to several (a list of names).
Reference plain_ref(std::string target);
Reference many_ref(std::string target);
Reference soft_ref(std::string target);  // plain_ref with soft set
const Kind& kind(const std::string& id);          // throws Error(internal) for unknown ids
const Kind* find_kind(const std::string& id);
std::vector<const Kind*> children_of(const std::string& id);
// The root kind (no parent: always one of core's) whose collection is
// `collection` (an anchor's first segment: "projects"), nullptr when there is
// none.
const Kind* find_root(std::string_view collection);
// The chain of kinds from the root to `id` (inclusive).
std::vector<const Kind*> lineage(const std::string& id);
// Number of key parts a resource of this kind has.
size_t key_size(const Kind& k);

// What an anchor names.
enum class AnchorTarget {
  collection,  // ".../clusters": create in / list this collection
  resource,    // ".../clusters/c1": one resource
  operation,   // ".../approve": a lifecycle operation on `key`
  status,      // ".../status": status query on `key`
};

struct Anchor {
  AnchorTarget target = AnchorTarget::collection;
  const Kind* kind = nullptr;  // the collection's / resource's kind; for operation/status: the owner's kind
  Key key;                     // collection: the parent key; resource/operation/status: the resource key
  std::string operation;       // operation name ("approve", "enrollment/instantiate")
  std::string query;           // text after '?', verbatim
  std::string text;            // the anchor as given (without query)
};

// Parses an emcoctl anchor ("projects/p/composite-apps/ca/v1/apps").
// Throws Error(invalid) naming the first segment that does not fit, with the
// segments that would, e.g. "unknown anchor segment 'aps' after
// 'projects/p/composite-apps/ca/v1'; did you mean 'apps'?".
Anchor parse_anchor(const std::string& anchor);

// The anchor text of a resource ("cluster-providers/p/clusters/c") and of its collection.
std::string resource_anchor(const Kind& k, const Key& key);
std::string collection_anchor(const Kind& k, const Key& parent_key);

}  // namespace emco::resource
