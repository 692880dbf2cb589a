#include "core/util/base64.hpp"

#include <array>

namespace emco {

namespace {

constexpr char k_standard[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char k_url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr unsigned char k_invalid = 0xff;

using DecodeMap = std::array<unsigned char, 256>;

DecodeMap make_map(const char* alphabet, const char* also) {
  DecodeMap m;
  m.fill(k_invalid);
  for (unsigned char i = 0; i < 64; ++i) m[static_cast<unsigned char>(alphabet[i])] = i;
  if (also)
    for (unsigned char i = 62; i < 64; ++i) m[static_cast<unsigned char>(also[i])] = i;
  return m;
}

const DecodeMap& decode_map(bool url, bool either) {
  static const DecodeMap standard = make_map(k_standard, nullptr), url_map = make_map(k_url, nullptr),
                         both = make_map(k_standard, k_url);
  return either ? both : url ? url_map : standard;
}

bool is_newline(char c) { return c == '\n' || c == '\r'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

void flush(std::string& out, const unsigned char (&q)[4], int n) {
  unsigned v = (unsigned{q[0]} << 18) | (unsigned{q[1]} << 12) | (unsigned{q[2]} << 6) | q[3];
  if (n >= 2) out.push_back(static_cast<char>((v >> 16) & 0xff));
  if (n >= 3) out.push_back(static_cast<char>((v >> 8) & 0xff));
  if (n >= 4) out.push_back(static_cast<char>(v & 0xff));
}

std::optional<std::string> decode_lenient(std::string_view text) {
  const DecodeMap& map = decode_map(false, true);
  std::string out;
  out.reserve(text.size() / 4 * 3 + 3);
  unsigned char q[4] = {0, 0, 0, 0};
  int n = 0;
  bool padding = false;
  for (char c : text) {
    if (is_space(c)) continue;
    if (c == '=') {
      padding = true;
      continue;
    }
    unsigned char v = map[static_cast<unsigned char>(c)];
    if (padding || v == k_invalid) return std::nullopt;  // data after padding, or not base64
    q[n++] = v;
    if (n == 4) {
      flush(out, q, 4);
      n = 0;
      q[0] = q[1] = q[2] = q[3] = 0;
    }
  }
  if (n == 1) return std::nullopt;  // a lone trailing character carries no byte
  flush(out, q, n);
  return out;
}

}  // namespace

std::string base64_encode(std::string_view bytes, Base64Format format) {
  const char* alphabet = format.url ? k_url : k_standard;
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  auto byte = [&](size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(bytes[k])); };
  for (; i + 2 < bytes.size(); i += 3) {
    unsigned n = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += alphabet[(n >> 6) & 63];
    out += alphabet[n & 63];
  }
  if (i < bytes.size()) {
    bool two = i + 1 < bytes.size();
    unsigned n = (byte(i) << 16) | (two ? byte(i + 1) << 8 : 0);
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    if (two) out += alphabet[(n >> 6) & 63];
    if (format.padded) out += two ? "=" : "==";
  }
  return out;
}

// Go's Encoding.DecodeString, quantum by quantum (decodeQuantum), so that errors carry the
// offsets Go reports.
std::optional<std::string> base64_decode(std::string_view text, Base64Format format, std::size_t* error_offset) {
  if (format.lenient) return decode_lenient(text);
  const DecodeMap& map = decode_map(format.url, false);
  auto fail = [&](size_t at) -> std::optional<std::string> {
    if (error_offset) *error_offset = at;
    return std::nullopt;
  };
  std::string out;
  out.reserve(text.size() / 4 * 3);
  size_t si = 0;
  while (true) {
    unsigned char q[4] = {0, 0, 0, 0};
    int n = 4;
    bool end = false;
    for (int j = 0; j < 4; ++j) {
      if (si == text.size()) {
        if (j == 0) return out;
        if (j == 1 || format.padded) return fail(si - static_cast<size_t>(j));
        n = j;
        end = true;
        break;
      }
      char in = text[si++];
      unsigned char v = map[static_cast<unsigned char>(in)];
      if (v != k_invalid) {
        q[j] = v;
        continue;
      }
      if (is_newline(in)) {
        --j;
        continue;
      }
      if (in != '=' || !format.padded) return fail(si - 1);
      // padding: "==" after two characters, "=" after three
      if (j < 2) return fail(si - 1);
      if (j == 2) {
        while (si < text.size() && is_newline(text[si])) ++si;
        if (si == text.size()) return fail(text.size());
        if (text[si] != '=') return fail(si - 1);
        ++si;
      }
      while (si < text.size() && is_newline(text[si])) ++si;
      if (si < text.size()) return fail(si);  // data after the padding
      n = j;
      end = true;
      break;
    }
    flush(out, q, n);
    if (end) return out;
  }
}

}  // namespace emco
