#pragma once
// ncm, the network configuration manager (spec/resources.md §3,
// spec/lifecycle.md §4; upstream src/ncm): a cluster's virtual networks and
// provider networks, checked when they are stored and applied to the cluster
// as a context of their own.
//
// check_network / check_provider_network (a ResourceCheck, run when a batch
// stores one) follow upstream's API validation: cniType ovn4nfv; every
// ipv4Subnets entry an IPv4 CIDR subnet, a valid name, an IPv4 CIDR gateway
// when given, excludeIps of IPv4 addresses and "a..b" ranges; for provider
// networks providerNetType VLAN or DIRECT (case-insensitive), vlan.vlanID a
// number 0–4095, vlanNodeSelector any or specific (case-insensitive), every
// nodeLabelList entry a Kubernetes label ("[prefix/]name=value" or a value),
// at least one with "specific". emco adds: no two IPv4 subnets of the
// cluster's networks and provider networks overlap (the message names both
// documents). Error(invalid) names the field.
//
// NetworkPlanner (a lifecycle::ResourcePlanner for "cluster", inputs network
// and providerNetwork) makes the context of `.../clusters/C/apply`: app
// `network-intents` with the one cluster, resources in name order — for each
// network "<name>+Network" (k8s.plugin.opnfv.org/v1alpha1, label net=<name>,
// spec as stored), for each provider network "<name>+ProviderNetwork" (no
// label, as upstream; vlan.vlanID written vlanId as upstream's CR has it),
// each followed by "<name>+NetworkAttachmentDefinition" (k8s.cni.cncf.io/v1,
// config {"cniVersion":"0.3.1","type":"ovn4nfvk8s-cni","nfn-network":"<name>"})
// when the cluster kv pair CNI-Networking-Multi-VM-CNI-Wrapper is multus
// (case-insensitive). Without that pair no NetworkAttachmentDefinition is
// made: upstream's code compares the pair's value, absent = "" (the spec's
// "default multus" is not what the code does). Objects carry no Go
// zero-value clutter (creationTimestamp, empty ObjectMeta fields).

#include <string>

#include "core/lifecycle/runtime.hpp"

namespace emco::plugins::ncm {

void check_network(const store::Store& st, const store::Resource& r);
void check_provider_network(const store::Store& st, const store::Resource& r);

class NetworkPlanner : public lifecycle::ResourcePlanner {
public:
  std::string kind() const override { return "cluster"; }
  std::string what() const override { return "network intents"; }
  std::vector<std::string> inputs() const override { return {"network", "providerNetwork"}; }
  appcontext::AppContext plan(const store::Store& st, const resource::Key& key) const override;
};

}  // namespace emco::plugins::ncm
