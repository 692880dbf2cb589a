#pragma once
// What emco reads from an object the API server returns after a write: its
// metadata's resourceVersion, uid and generation.

#include <string>
#include <string_view>

namespace emco::kube {

struct ObjectMetadata {
  std::string resource_version;
  std::string uid;
  long long generation = 0;
};

// Reads them from `body` without building the object (a write's answer is the
// whole object, managedFields included). Gives exactly what parsing the body
// into a JSON value and reading metadata.resourceVersion / .uid as strings and
// .generation as an integer gives: the last of duplicate keys wins, a field of
// another type reads as absent, a body that is not one JSON object yields
// nothing.
ObjectMetadata read_object_metadata(std::string_view body);

}  // namespace emco::kube
