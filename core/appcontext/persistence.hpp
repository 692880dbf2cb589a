#pragma once
// A context's plan as rows of the workspace database: save, load (whole or
// the apps that changed), remove, plans by digest. Writes join the caller's
// transaction (value.hpp).

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/appcontext/value.hpp"
#include "core/store/store.hpp"

namespace emco::appcontext {

// Stores a new context (all of it, in one transaction). Throws
// Error(conflict) if the id exists, Error(not_found) if the parent does not.
// A non-empty parent gets `id` appended to its children. Each app's plan is
// stored once per digest: an app planned as in an earlier context costs one
// row, whatever its size.
void save(store::Store& st, const AppContext& ctx);
// Objects of kind Secret are sealed at rest in an encrypted workspace
// (store::Store::encrypted, core/store/vault.hpp), their content hash as
// associated data (store::Store::object_identity). How load() treats one the
// key does not open: fail naming it (Error(workspace): what delivery,
// planning and diffs need), or keep its sealed text (status, which reads
// names and states only).
enum class Sealed { fail, keep };
// Loads a whole context. Throws Error(not_found) naming the id.
AppContext load(store::Store& st, const std::string& id, Sealed sealed = Sealed::fail);
// load(), or nullopt when context `id` is not stored: one read where
// exists() then load() are two.
std::optional<AppContext> load_if_exists(store::Store& st, const std::string& id, Sealed sealed = Sealed::fail);
// Per app of a stored context: the digest of its inputs ("" if unknown) and
// of its plan (cheap: no plan is read).
struct StoredApp {
  std::string inputs, plan_digest;
};
std::map<std::string, StoredApp> stored_apps(store::Store& st, const std::string& id);
// Two contexts of one update, with the apps whose plans are the same in both
// elided in both (see App::elided): what diff() needs, for the cost of the
// apps that changed.
struct ContextPair {
  AppContext old_ctx, new_ctx;
};
ContextPair load_changed(store::Store& st, const std::string& old_id, const std::string& new_id);
bool exists(store::Store& st, const std::string& id);
// Removes a context and, first, its children (recursively), with their
// status, queue and active-set rows; content no context uses is dropped.
// Throws Error(not_found) if absent.
void remove(store::Store& st, const std::string& id);
// The clusters `old_id` places an app on and `new_id` places none on,
// sorted. Reads only the plans that tell: the plans `old_id` alone has, then
// the others of `new_id` until every candidate is found.
std::vector<std::string> departed_clusters(store::Store& st, const std::string& old_id, const std::string& new_id);
// A resource of an app's plan by name: views into the plan, valid while the
// callback that is given them runs.
struct ResourceName {
  std::string_view cluster, resource;
};
// Calls `fn(app, resources)` once per app of a context, in order, with the
// app's main-list resources (hooks excluded) in plan order, without reading
// contents (cheap).
void for_each_app_resource_names(
    store::Store& st, const std::string& id,
    const std::function<void(std::string_view app, const std::vector<ResourceName>& resources)>& fn);
// The same, one call per resource: `fn(app, cluster, resource)`.
void for_each_resource_name(
    store::Store& st, const std::string& id,
    const std::function<void(std::string_view app, std::string_view cluster, std::string_view resource)>& fn);
// Context ids of an owner, oldest first.
std::vector<std::string> list(store::Store& st, const resource::Key& owner);

}  // namespace emco::appcontext
