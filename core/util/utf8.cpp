#include "core/util/utf8.hpp"

namespace emco::utf8 {

std::size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 0;
}

std::size_t decode(std::string_view s, std::size_t i, char32_t& rune) {
  auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = sequence_length(c);
  if (n == 1) {
    rune = c;
    return 1;
  }
  rune = k_replacement;
  if (n == 0 || i + n > s.size()) return 1;
  char32_t v = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
  for (std::size_t k = 1; k < n; ++k) {
    auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 1;
    v = (v << 6) | (cc & 0x3F);
  }
  // overlong forms, surrogates and values past U+10FFFF
  if ((n == 2 && v < 0x80) || (n == 3 && v < 0x800) || (n == 4 && (v < 0x10000 || v > 0x10FFFF)) ||
      (v >= 0xD800 && v <= 0xDFFF))
    return 1;
  rune = v;
  return n;
}

void append(std::string& out, char32_t r) {
  if (r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) r = k_replacement;
  if (r < 0x80) {
    out.push_back(static_cast<char>(r));
  } else if (r < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (r >> 6)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else if (r < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (r >> 12)));
    out.push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (r >> 18)));
    out.push_back(static_cast<char>(0x80 | ((r >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  }
}

std::size_t count(std::string_view s) {
  std::size_t n = 0;
  char32_t r;
  for (std::size_t i = 0; i < s.size(); i += decode(s, i, r)) ++n;
  return n;
}

std::size_t invalid_offset(std::string_view s) {
  char32_t r;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t w = decode(s, i, r);
    if (r == k_replacement && w == 1) return i;  // a real U+FFFD is three bytes wide
    i += w;
  }
  return std::string_view::npos;
}

bool valid(std::string_view s) { return invalid_offset(s) == std::string_view::npos; }

}  // namespace emco::utf8
