#pragma once
// hpa placement and action (spec/placement-and-actions.md §3 and "hpa-ac";
// resources.md §9): an app's hpa intents name consumers (workloads and one
// of their containers) and resource requirements.
//
// Placement (registered as "hpa-placement-controller-1", upstream's name)
// keeps, of every app with hpa intents, the clusters whose Nodes satisfy each
// consumer: non-allocatable {key, value} — a node carries label key=value;
// allocatable {name, requests} — per replica, some node still has `requests`
// of allocatable `name` free (cpu in cores, memory in MB, other resources in
// their own unit), the nodes qualifying for one requirement intersected with
// the others' of the consumer. Each replica placed takes its requests from
// the qualifying node with the least room that still fits (upstream's
// effective choice), so replicas and consumers of one app share a cluster's
// room. Nodes are read live from each candidate cluster through
// Call::live (Target::list of v1 Nodes), once per cluster per plan:
// every operation (plan, explain, instantiate, update) reads them afresh, so
// a cluster registered at any time and a node added since are seen by the
// next `emco dig update` — upstream reads labels at cluster registration
// and misses clusters registered before hpa. A cluster whose Nodes cannot be
// read does not qualify. Clusters that fail are removed (Call::removed says
// which requirement failed and by how much); an app left with no cluster
// fails the plan naming its hpa intents (under Call::explain_only they are
// all removed instead). Differences from upstream: Node allocatable is not
// reduced by the requests of pods already running, and an app fails only
// when no cluster of any of its placement groups qualifies (upstream fails
// when one group has none, which makes allOf placement all-or-nothing).
//
// Action (registered as "hpa-action-controller-1") writes into the workload
// `<consumer.name>+<consumer.kind or Deployment>` of the app on each of its
// clusters: non-allocatable → spec.template.spec.nodeSelector[key] = value;
// allocatable → the container `consumer.container` gets
// resources.requests[name] = requests and, when limits > 0,
// resources.limits[name] = limits (memory × 10⁶, written as Kubernetes
// writes an unformatted quantity: 512e6); spec.replicas = consumer.replicas
// when the workload sets replicas. A workload or container the app lacks is
// an error naming the consumer.
//
// Both read every hpa intent of the DIG (as upstream does, whatever intent
// name the group intent gives) and refuse, naming the document, a resource
// name hpa does not know, an allocatable requirement without a container or
// requests, and a non-allocatable one without a key.

#include <string>
#include <vector>

#include "core/plan/controllers.hpp"

namespace emco::controllers {

class HpaPlacement : public PlacementController {
public:
  void filter(const Call& call, appcontext::AppContext& ctx) const override;
};

class HpaAction : public ActionController {
public:
  void update(const Call& call, appcontext::AppContext& ctx) const override;
};

}  // namespace emco::controllers

namespace emco::plugins::hpa {

// One resource requirement (resources.md §9).
struct Requirement {
  std::string where;  // anchor, for messages
  std::string name;   // the document's name
  bool allocatable = false;
  std::string resource;          // allocatable: cpu, memory, nvidia.com/gpu, ...
  long long requests = 0, limits = 0;  // in the intent's units (memory: MB); requests = limits when only limits
  std::string key, value;        // non-allocatable: the node label
};

struct Consumer {
  std::string where, name;
  std::string workload;   // spec.name: the workload's metadata.name
  std::string kind;       // spec.kind, "Deployment" when unset
  std::string container;  // spec.container
  long long replicas = 0; // spec.replicas, 0 when unset
  std::vector<Requirement> requirements;
};

struct Intent {
  std::string where, name, app;
  std::vector<Consumer> consumers;
};

// Every hpa intent of DIG `dig`, by name, with its consumers and
// requirements (by name); Error(invalid) naming the document for a
// requirement hpa cannot use.
std::vector<Intent> load(const store::Store& st, const resource::Key& dig);

// A quantity as Kubernetes writes it ("3800m", "16Gi", "1e9") in thousandths
// of its unit; Error(invalid) naming `what` when it is not one.
long long milli_of(const std::string& quantity, const std::string& what);
// The requests of `r` in thousandths of the Node's unit (memory: MB → bytes).
long long need_milli(const Requirement& r);
// `n` (a count in the intent's unit, memory already in bytes) as a
// Quantity made with no format serialises: 2 → "2", 512000000 → "512e6".
std::string unformatted_quantity(long long n);

}  // namespace emco::plugins::hpa
