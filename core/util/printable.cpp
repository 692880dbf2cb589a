#include "core/util/printable.hpp"

#include "core/util/utf8.hpp"

namespace emco {

std::string printable(std::string_view text, std::size_t max_bytes) {
  constexpr std::string_view k_replacement = "\xEF\xBF\xBD";  // U+FFFD
  std::string out;
  char32_t rune = 0;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t width = utf8::decode(text, i, rune);
    bool keep = rune != utf8::k_replacement &&
                (rune >= 0xA0 || (rune >= 0x20 && rune < 0x7F) || rune == '\t' || rune == '\n');
    // Servers write multi-line messages (RBAC's list of rules) and CRLF bodies:
    // LF stays, CR goes (it would let the text overwrite its own line); any
    // other control character or invalid byte shows as U+FFFD.
    std::string_view piece = keep ? text.substr(i, width) : rune == '\r' ? std::string_view() : k_replacement;
    i += width;
    if (out.size() + piece.size() > max_bytes) return out + "...";
    out += piece;
  }
  return out;
}

std::string scrub(std::string text, const std::vector<std::string>& secrets) {
  for (const auto& secret : secrets) {
    if (secret.empty()) continue;
    for (auto pos = text.find(secret); pos != std::string::npos; pos = text.find(secret, pos + 3))
      text.replace(pos, secret.size(), "***");
  }
  return text;
}

}  // namespace emco
