#pragma once
// Reading what a server or a plugin answered (API objects, ExecCredentials)
// by JSON type: a field that is absent, or of another type than the API's,
// reads as absent instead of throwing nlohmann's type_error, and a value that
// is not an object has no fields. Whatever the answer's shape, these never
// throw.

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace emco::k8s {

// The field `key` of `object`; a null value when absent or `object` is not
// an object.
const nlohmann::json& field(const nlohmann::json& object, std::string_view key);

// The string under `key`; "" when absent or not a string.
std::string str_field(const nlohmann::json& object, std::string_view key);

// The array under `key`; an empty array when absent or not an array.
const nlohmann::json& array_field(const nlohmann::json& object, std::string_view key);

}  // namespace emco::k8s
