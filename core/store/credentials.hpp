#pragma once
// The `credentials` table of the workspace (schema in store.cpp's
// migrations): secrets emco issues, one per (owner, name). core/lifecycle's
// credentials.hpp gives them their meaning (a logical cloud's kubeconfig per
// cluster, its private key under the name ""); this is only their storage.
// Values never leave the database except through credential(). In an
// encrypted workspace (Store::encrypted) they are sealed with the workspace
// key (core/store/vault.hpp), credential_identity() as associated data.

#include <optional>
#include <string>
#include <vector>

#include "core/store/store.hpp"

namespace emco::store {

// Stores (replaces) the secret of `owner` under `name`, in the caller's write
// transaction when there is one, else in one of its own.
void put_credential(Store& st, const std::string& owner, const std::string& name, const std::string& secret,
                    const std::string& created);
// The secret, nullopt when `owner` has none under `name`. Error(workspace)
// naming it when it is sealed and the key does not open it (Store::fail_sealed).
std::optional<std::string> credential(Store& st, const std::string& owner, const std::string& name);
// The non-empty names `owner` has secrets under, sorted.
std::vector<std::string> credential_names(Store& st, const std::string& owner);
// The associated data a credential value is sealed with.
std::string credential_identity(const std::string& owner, const std::string& name);
// Removes the secret of `owner` under `name`, or all of the owner's when `name` is empty.
void remove_credentials(Store& st, const std::string& owner, const std::string& name = {});

}  // namespace emco::store
