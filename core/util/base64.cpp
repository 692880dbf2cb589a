#include "core/util/base64.hpp"

namespace emco {

std::string base64_encode(std::string_view bytes) {
  static constexpr char k_alphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    unsigned n = (static_cast<unsigned char>(bytes[i]) << 16) |
                 (static_cast<unsigned char>(bytes[i + 1]) << 8) | static_cast<unsigned char>(bytes[i + 2]);
    out += k_alphabet[(n >> 18) & 63];
    out += k_alphabet[(n >> 12) & 63];
    out += k_alphabet[(n >> 6) & 63];
    out += k_alphabet[n & 63];
  }
  if (i < bytes.size()) {
    unsigned n = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += k_alphabet[(n >> 18) & 63];
    out += k_alphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? k_alphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace emco
