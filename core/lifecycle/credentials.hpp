#pragma once
// Credentials emco issues and keeps in the workspace database (never in
// files, output or logs): the kubeconfig of a standard/privileged logical
// cloud's user, one per cluster of the cloud, and the cloud's private key
// (one per cloud, logical-clouds.md), kept in the same table under the
// cluster name "" (no cluster is called that: names are "<provider>+<cluster>").

#include <optional>
#include <string>
#include <vector>

#include "core/resource/kinds.hpp"
#include "core/store/store.hpp"

namespace emco::lifecycle {

// Stores (replaces) the user kubeconfig of logical cloud `lc` on `cluster`
// ("<provider>+<cluster>"). Runs inside the caller's write transaction when
// there is one.
void store_tenant_kubeconfig(store::Store& st, const resource::Key& lc, const std::string& cluster,
                             const std::string& kubeconfig, const std::string& created);
// The stored kubeconfig, nullopt when the cloud has none for that cluster.
std::optional<std::string> tenant_kubeconfig(store::Store& st, const resource::Key& lc, const std::string& cluster);
// The clusters the cloud has kubeconfigs for, sorted (the key is not one).
std::vector<std::string> tenant_clusters(store::Store& st, const resource::Key& lc);
// Removes the cloud's kubeconfig for `cluster`, or all of them and its key when `cluster` is empty.
void remove_tenant_kubeconfigs(store::Store& st, const resource::Key& lc, const std::string& cluster = {});

// The cloud's private key (PEM), stored/read like a kubeconfig.
void store_tenant_key(store::Store& st, const resource::Key& lc, const std::string& key_pem, const std::string& created);
std::optional<std::string> tenant_key(store::Store& st, const resource::Key& lc);

}  // namespace emco::lifecycle
