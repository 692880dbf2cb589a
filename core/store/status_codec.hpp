#pragma once
// The stored form of one (app, cluster)'s resource states
// (core/appcontext/status_rows.hpp): one value in that cluster's status row
// instead of a row per resource, whose key repeated the context, app and
// cluster names (a third of a GitOps instantiate went into writing them).
//
// Encoding: the byte 1 (the format), then per resource in bytewise order of
// name: varint n + n bytes of name, then status, message, time and ready,
// each as varint 0 (the same as the previous resource's; the first resource
// compares with "") or varint n+1 followed by n bytes. Varints are unsigned
// LEB128. Resources of one cluster usually share their status, message
// ("commit <sha>") and time, so each costs little more than its name.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace emco::store {

// One resource's state; the views point at the caller's strings (or, from
// the readers below, into the encoding).
struct ResourceStateView {
  std::string_view resource, status, message, time, ready;
};

// `states` must be sorted by resource (bytewise), names unique.
std::string encode_resource_states(const std::vector<ResourceStateView>& states);
// Thrown by the readers below on a malformed or truncated encoding; the
// caller, who knows whose states they are, reports it.
struct MalformedStates {
  size_t at;  // byte offset of the damage
};
// Calls `fn` for each state in order; "" holds none. Throws MalformedStates
// (after calling `fn` for the states before the damage).
void visit_resource_states(std::string_view data, const std::function<void(const ResourceStateView&)>& fn);

}  // namespace emco::store
