#pragma once
// The one base64 codec (RFC 4648): kubeconfig data fields, CSR requests, Secret data, list
// continue tokens, known_hosts and SSH key blobs, Sprig's b64enc/b64dec and AES/cert helpers.
//
// Encoding and the strict decoding follow Go's encoding/base64 (StdEncoding, URLEncoding and
// their Raw forms): on decoding '\r' and '\n' are skipped anywhere, padding must be exactly
// right for a padded format and absent for a raw one, and an error names the offset of the
// offending byte in the input as Go's CorruptInputError does. The lenient mode is for text
// people and other tools write (kubeconfigs, known_hosts, continue tokens): either alphabet,
// any ASCII white space skipped, padding optional.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace emco {

struct Base64Format {
  bool url = false;     // '-' and '_' in place of '+' and '/'
  bool padded = true;   // '=' padding to a multiple of four characters
  bool lenient = false; // decoding only: see above
};

std::string base64_encode(std::string_view bytes, Base64Format format = {});
// nullopt when `text` is not base64 in `format`; then *error_offset (when given) is the
// byte offset Go would report ("illegal base64 data at input byte N").
std::optional<std::string> base64_decode(std::string_view text, Base64Format format = {},
                                         std::size_t* error_offset = nullptr);

}  // namespace emco
