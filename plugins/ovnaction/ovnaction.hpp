#pragma once
// ovnaction, the network action controller (spec/placement-and-actions.md,
// "ovnaction"): attaches workloads to the cluster networks ncm creates.
//
// For the network controller intent the group intent names, every workload
// intent (app, workloadResource, type) with at least one interface intent
// edits resource "<workloadResource>+<type>" on every cluster of the app
// (clusters where the app has no such resource are skipped, as upstream
// does). Its pod template — the Pod's own metadata for a Pod,
// spec.jobTemplate.spec.template for a CronJob, spec.template for
// Deployment, DaemonSet, StatefulSet, ReplicaSet, Job,
// ReplicationController and any other object that has one — gets:
//   - `k8s.v1.cni.cncf.io/networks`: the existing network selection
//     elements (JSON list or multus' "ns/name@if" text, parsed as multus
//     does, namespace defaulted to the object's) plus
//     {"name":"ovn-networkobj","namespace":"default"} unless an element
//     named ovn-networkobj is there. Left alone when the cluster kv pair
//     `CNI-Networking-Nodus-CNI-For-all-interfaces` is true or
//     `CNI-Networking-Multi-CNI-Wrapper` is not multus (default multus;
//     case-insensitive);
//   - `k8s.plugin.opnfv.org/nfn-network`: {"type":"ovn4nfv","interface":[…]}
//     merged with the existing value: an interface with the same (name,
//     interface) is updated in place, new ones are appended in intent
//     order; defaultGateway defaults to "false"; empty ipAddress/macAddress
//     are omitted.
// Values are written as Go's encoding/json writes them (compact, HTML
// characters escaped), so the annotations are byte-identical to upstream's.
//
// Where emco is stricter than upstream (which logs and goes on), the plan
// fails with Error(invalid) naming the document:
//   - an interface intent on a network that the cluster has neither as a
//     virtual network nor as a provider network (ncm's networks/ and
//     provider-networks/ of the cluster), an invalid ipAddress or
//     macAddress;
//   - an existing networks/nfn-network annotation that cannot be parsed
//     (upstream drops or keeps it depending on the code path);
//   - a resource of an unsupported kind without spec.template.
// Objects are edited as JSON, not round-tripped through Go's typed structs,
// so no `creationTimestamp: null` / `status: {}` clutter is added; CronJob
// is annotated in batch/v1 as in batch/v1beta1.

#include "core/plan/controllers.hpp"

namespace emco::plugins::ovnaction {

class OvnAction : public controllers::ActionController {
public:
  void update(const controllers::Call& call, appcontext::AppContext& ctx) const override;
};

}  // namespace emco::plugins::ovnaction
