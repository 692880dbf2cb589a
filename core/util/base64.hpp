#pragma once
// Standard base64 (RFC 4648, with padding): kubeconfig data fields, CSR
// requests, Secret data, list continue tokens.

#include <string>
#include <string_view>

namespace emco {

std::string base64_encode(std::string_view bytes);

}  // namespace emco
