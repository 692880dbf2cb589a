#pragma once
// The Kubernetes API's built-in resource types: kind <-> plural resource,
// scope, group/version, short names, categories and subresources, as a real
// v1.32 API server reports them in discovery. Clients use it to build URLs
// before (or instead of) discovery; the simulator serves discovery from it.

#include <string>
#include <string_view>
#include <vector>

namespace emco::k8s {

struct ResourceType {
  std::string group;     // "" for the core group
  std::string version;   // "v1"
  std::string kind;      // "Deployment"
  std::string resource;  // plural, "deployments"
  std::string singular;  // "deployment"
  bool namespaced = true;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  std::vector<std::string> subresources;  // "status", "scale", "approval"
  bool has_generation = false;  // metadata.generation tracks spec changes
  // Verbs the API serves; empty means the usual eight (create, delete,
  // deletecollection, get, list, patch, update, watch). Reviews such as
  // SelfSubjectAccessReview are create-only and never stored.
  std::vector<std::string> verbs;

  // "apps/v1", or "v1" for the core group.
  std::string api_version() const;
  // "deployments.apps", or "configmaps" for the core group (the prefix of
  // API error messages such as `deployments.apps "web" not found`).
  std::string group_resource() const;
  bool has_subresource(std::string_view name) const;
};

// Splits "apps/v1" into {"apps", "v1"} and "v1" into {"", "v1"}.
struct GroupVersion {
  std::string group;
  std::string version;
};
GroupVersion parse_api_version(std::string_view api_version);

// Every built-in resource type, grouped by group/version in the order a
// discovery document lists them.
// A ResourceType with its singular name derived from the kind (lowercased).
ResourceType resource_type(std::string group, std::string version, std::string kind, std::string resource,
                           bool namespaced, std::vector<std::string> short_names, std::vector<std::string> subresources,
                           bool has_generation, std::vector<std::string> categories = {});

const std::vector<ResourceType>& builtin_resources();

// nullptr when the kind is not built in.
const ResourceType* find_builtin_kind(std::string_view group, std::string_view version, std::string_view kind);
const ResourceType* find_builtin_resource(std::string_view group, std::string_view version,
                                          std::string_view resource);

// The API's URL of one object, or of a collection when `name` is empty:
// "/apis/apps/v1/namespaces/ns/deployments/web", "/api/v1/namespaces/ns".
// `ns` is ignored for cluster-scoped types.
std::string object_path(const ResourceType& type, std::string_view ns, std::string_view name);

}  // namespace emco::k8s
