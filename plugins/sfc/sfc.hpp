#pragma once
// sfc and sfcclient, Nodus service function chaining
// (spec/placement-and-actions.md "sfc / sfcclient", upstream src/sfc and
// src/sfcclient). Both are action controllers; like upstream's, each reads
// every intent of its kind under the DIG, whatever intent name the group
// intent gives it.
//
// Sfc: for every network chain (sfcIntent) of the DIG, in name order:
//   - the chain text "net=<left>,<linkLabel>,net=<right>,..." from its links,
//     leftmost network first (the one that is no link's right network);
//   - the left and right ends: the client selectors of each end, in name
//     order, then its provider networks fill the networkName, gatewayIp and
//     subnet of those entries in order and append entries past them;
//   - a `k8s.plugin.opnfv.org/v1alpha1` NetworkChaining named after the
//     chain (spec.chainType, spec.routingSpec {namespace, networkChain,
//     left, right}; every end entry with networkName, gatewayIp, subnet,
//     podSelector and namespaceSelector) added as "<chain>+NetworkChaining"
//     to app `network-chain-intents` (appended to the apps once) on every
//     cluster where every app of the chain is placed;
//   - on those clusters the pod template of each link's workload
//     ("<workloadResource>+<resourceType>" of its app) gets the linkLabel.
// Sfc client: for every sfc client intent of the DIG, the client selectors
// of its chain end (of the chain named by project, compositeApp,
// compositeAppVersion, deploymentIntentGroup and sfcIntent) are searched in
// name order for the first whose namespaceSelector.matchLabels is not empty
// and matches the labels of this DIG's logical cloud; its
// podSelector.matchLabels go on the pod template of the client workload on
// every cluster of the app.
//
// Errors (Error(invalid) naming the document, where upstream returns an
// error too): no chain or no client intent under the DIG; an end with
// neither selector nor provider network; duplicate left or right networks or
// link labels, several or no leftmost networks, links that do not form one
// chain; a link naming an app the composite app lacks; no cluster with every
// app of the chain; a workload missing from a cluster; no client selector
// that matches. Stricter than upstream (which logs and goes on): a linkLabel
// that is not "key=value", and a workload without a pod template.
// Objects are edited as JSON; the NetworkChaining carries no
// `creationTimestamp: null` / `status: {}` clutter of Go's typed structs.

#include "core/plan/controllers.hpp"

namespace emco::plugins::sfc {

class Sfc : public controllers::ActionController {
public:
  void update(const controllers::Call& call, appcontext::AppContext& ctx) const override;
};

class SfcClient : public controllers::ActionController {
public:
  void update(const controllers::Call& call, appcontext::AppContext& ctx) const override;
};

}  // namespace emco::plugins::sfc
