#include "core/yaml/scanner.hpp"

#include <array>
#include <cstdint>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core/util/utf8.hpp"

namespace emco::yaml::detail {

void scanner_error(const Mark& context, const Mark& problem, std::string message) {
  throw ParseError(ParseError::Stage::scanner, std::move(message), problem.line, problem.column, context.line);
}

namespace {

// goyaml prints no position for reader problems; ParseError still carries one for callers.
[[noreturn]] void throw_reader_error(const char* message, int line, int column) {
  throw ParseError(ParseError::Stage::reader, message, line, column, 0);
}

// goyaml's reader: well-formed UTF-8 of printable characters only (tab, line
// breaks, #x20-#x7E, #x85, #xA0-#xD7FF, #xE000-#xFFFD, #x10000-#x10FFFF).
// The character at p[i] (i < n): its width in bytes, or 0 with `problem` set when the reader
// refuses it.
std::size_t char_width(const unsigned char* p, std::size_t i, std::size_t n, const char*& problem) {
  unsigned char c = p[i];
  if (c < 0x80) {
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
      problem = "control characters are not allowed";
      return 0;
    }
    return 1;
  }
  std::size_t width = utf8::sequence_length(c);
  if (width == 0) {
    problem = "invalid leading UTF-8 octet";
    return 0;
  }
  if (i + width > n) {
    problem = "incomplete UTF-8 octet sequence";
    return 0;
  }
  std::uint32_t value = width == 2 ? (c & 0x1F) : width == 3 ? (c & 0x0F) : (c & 0x07);
  for (std::size_t k = 1; k < width; ++k) {
    if ((p[i + k] & 0xC0) != 0x80) {
      problem = "invalid trailing UTF-8 octet";
      return 0;
    }
    value = (value << 6) | (p[i + k] & 0x3F);
  }
  if ((width == 2 && value < 0x80) || (width == 3 && value < 0x800) || (width == 4 && value < 0x10000)) {
    problem = "invalid length of a UTF-8 sequence";
    return 0;
  }
  if ((value >= 0xD800 && value <= 0xDFFF) || value > 0x10FFFF) {
    problem = "invalid Unicode character";
    return 0;
  }
  bool printable = value == 0x85 || (value >= 0xA0 && value <= 0xD7FF) || (value >= 0xE000 && value <= 0xFFFD) ||
                   value >= 0x10000;
  if (!printable) {
    problem = "control characters are not allowed";
    return 0;
  }
  return width;
}

// The high bit of each byte of `v` that is zero, exactly (no borrow crosses bytes).
std::uint64_t zero_bytes(std::uint64_t v) {
  constexpr std::uint64_t k_low7 = 0x7F7F7F7F7F7F7F7FULL;
  return ~(((v & k_low7) + k_low7) | v) & ~k_low7;
}

// Whether the reader accepts all of `in`. Values files and rendered manifests are megabytes of
// plain ASCII, so sixteen (SSE2) or eight bytes are checked at a time: a run of printable ASCII,
// tabs and line breaks needs nothing more; any other word is read character by character.
bool input_acceptable(std::string_view in) {
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  const std::size_t n = in.size();
  constexpr std::uint64_t k_ones = 0x0101010101010101ULL, k_highs = 0x8080808080808080ULL;
  std::size_t i = 0;
  while (i < n) {
#ifdef __SSE2__
    // Below ' ' as signed bytes (so every byte from 0x80 too) and not a tab or line break, or DEL.
    if (i + 16 <= n) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      const __m128i breaks = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('\t')),
                                                       _mm_cmpeq_epi8(x, _mm_set1_epi8('\n'))),
                                          _mm_cmpeq_epi8(x, _mm_set1_epi8('\r')));
      const __m128i other = _mm_or_si128(_mm_andnot_si128(breaks, _mm_cmplt_epi8(x, _mm_set1_epi8(' '))),
                                         _mm_cmpeq_epi8(x, _mm_set1_epi8(0x7F)));
      if (_mm_movemask_epi8(other) == 0) {
        i += 16;
        continue;
      }
    }
#endif
    if (i + 8 <= n) {
      std::uint64_t x;
      std::memcpy(&x, p + i, 8);
      std::uint64_t controls = zero_bytes(x & (k_ones * 0xE0)) & ~zero_bytes(x ^ (k_ones * '\t')) &
                               ~zero_bytes(x ^ (k_ones * '\n')) & ~zero_bytes(x ^ (k_ones * '\r'));
      if (((x & k_highs) | controls | zero_bytes(x ^ (k_ones * 0x7F))) == 0) {
        i += 8;
        continue;
      }
    }
    const char* problem = nullptr;
    std::size_t width = char_width(p, i, n, problem);
    if (width == 0) return false;
    i += width;
  }
  return true;
}

void check_input(std::string_view in) {
  if (input_acceptable(in)) return;
  // Find the problem again, counting lines and columns for the error.
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  std::size_t n = in.size();
  int line = 0;
  int column = 0;
  for (std::size_t i = 0; i < n; ++column) {
    if (p[i] == '\n') {
      ++line;
      column = -1;
    }
    const char* problem = nullptr;
    std::size_t width = char_width(p, i, n, problem);
    if (width == 0) throw_reader_error(problem, line, column);
    i += width;
  }
}

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int hex_value(char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

// The ASCII bytes that may end a plain scalar's run of characters: blanks, breaks, ':' before a
// blank, and (in a flow collection) flow indicators.
constexpr auto k_plain_stops = [] {
  std::array<bool, 128> stops{};
  for (unsigned char c : std::string_view(" \t\r\n:,?[]{}")) stops[c] = true;
  return stops;
}();

constexpr int k_max_flow_level = 10000;
constexpr std::size_t k_max_indents = 10000;

}  // namespace

Scanner::Scanner(std::string_view text) : m_in(text) {
  check_input(text);
  // the reader consumes a UTF-8 byte order mark
  if (m_in.substr(0, 3) == "\xEF\xBB\xBF") m_pos = 3;
}

bool Scanner::is_unicode_break(std::size_t k) const {
  const char c = at(k);
  if (c == '\xC2') return at(k + 1) == '\x85';
  if (c == '\xE2') return at(k + 1) == '\x80' && (at(k + 2) == '\xA8' || at(k + 2) == '\xA9');
  return false;
}

bool Scanner::is_alpha(std::size_t k) const {
  char c = at(k);
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-';
}

// The input passed the reader's check (check_input), so every lead byte announces a length.
std::size_t Scanner::wide_width(unsigned char lead) { return utf8::sequence_length(lead); }

void Scanner::skip() {
  m_pos += width();
  ++m_mark.index;
  ++m_mark.column;
}

void Scanner::skip_to_break() {
  // skip() per character showed in profiles of comment-heavy values.yaml files (a bitnami
  // chart's is mostly comments): one pass over the bytes instead, counting characters as
  // skip() does (the input is valid UTF-8, so every non-continuation byte starts one).
  // Local pointers, and ASCII bytes (nearly all) tested against the two breaks only.
  const char* const begin = m_in.data();
  const char* const end = begin + m_in.size();
  const char* p = begin + m_pos;
  std::size_t chars = 0;
  // Sixteen (SSE2), then eight bytes at a time while none is a line feed, a carriage return or
  // a non-ASCII byte: characters that cannot end the line. A block with one is left at its first.
#ifdef __SSE2__
  while (end - p >= 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i breaks = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('\n')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\r')));
    const int stops = _mm_movemask_epi8(_mm_or_si128(breaks, x));  // the high bits: breaks, non-ASCII
    const int plain = stops == 0 ? 16 : __builtin_ctz(static_cast<unsigned>(stops));
    p += plain;
    chars += static_cast<std::size_t>(plain);
    if (plain < 16) break;
  }
#endif
  constexpr std::uint64_t k_ones = 0x0101010101010101ULL, k_highs = 0x8080808080808080ULL;
  while (end - p >= 8) {
    std::uint64_t x;
    std::memcpy(&x, p, 8);
    if (((x & k_highs) | zero_bytes(x ^ (k_ones * '\n')) | zero_bytes(x ^ (k_ones * '\r'))) != 0) break;
    p += 8;
    chars += 8;
  }
  for (; p < end; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c < 0x80) {
      if (c == '\n' || c == '\r') break;
      ++chars;
      continue;
    }
    if ((c == 0xC2 || c == 0xE2) && is_unicode_break(static_cast<std::size_t>(p - begin) - m_pos)) break;
    chars += (c & 0xC0) != 0x80;
  }
  m_pos = static_cast<std::size_t>(p - begin);
  m_mark.index += chars;
  m_mark.column += chars;
}

void Scanner::skip_line() {
  if (at() == '\r' && at(1) == '\n') {
    m_pos += 2;
    m_mark.index += 2;
  } else if (is_break()) {
    m_pos += width();
    ++m_mark.index;
  } else {
    return;
  }
  m_mark.column = 0;
  ++m_mark.line;
}

void Scanner::read(std::string& s) {
  // An ASCII character is one byte: push_back, not an append (a memcpy call per character
  // showed in profiles of quoted scalars).
  if (static_cast<unsigned char>(at()) < 0x80 && !is_z()) {
    s.push_back(m_in[m_pos]);
    ++m_pos;
  } else {
    std::size_t w = width();
    s.append(m_in.substr(m_pos, w));
    m_pos += w;
  }
  ++m_mark.index;
  ++m_mark.column;
}

void Scanner::read_line(std::string& s) {
  if (at() == '\r' && at(1) == '\n') {
    s += '\n';
    m_pos += 2;
    m_mark.index += 2;
  } else if (at() == '\r' || at() == '\n') {
    s += '\n';
    ++m_pos;
    ++m_mark.index;
  } else if (at() == '\xC2' && at(1) == '\x85') {
    s += '\n';
    m_pos += 2;
    ++m_mark.index;
  } else if (is_break()) {
    s.append(m_in.substr(m_pos, 3));  // LS and PS are kept
    m_pos += 3;
    ++m_mark.index;
  } else {
    return;
  }
  m_mark.column = 0;
  ++m_mark.line;
}

Token& Scanner::peek() {
  if (!m_token_available) fetch_more_tokens();
  return m_tokens.front();
}

void Scanner::next() {
  m_token_available = false;
  ++m_tokens_parsed;
  m_tokens.pop_front();
}

void Scanner::fetch_more_tokens() {
  for (;;) {
    if (!m_tokens.empty()) {
      auto it = m_simple_keys_by_tok.find(m_tokens_parsed);
      if (it == m_simple_keys_by_tok.end()) break;
      if (!simple_key_is_valid(m_simple_keys[it->second])) break;
    }
    if (m_stream_end_produced) break;
    fetch_next_token();
  }
  m_token_available = true;
}

void Scanner::fetch_next_token() {
  if (!m_stream_start_produced) return fetch_stream_start();
  scan_to_next_token();
  unroll_indent(m_mark.column);
  if (is_z()) return fetch_stream_end();
  char c = at();
  if (m_mark.column == 0 && c == '%') return fetch_directive();
  if (m_mark.column == 0 && c == '-' && at(1) == '-' && at(2) == '-' && is_blankz(3))
    return fetch_document_indicator(Tok::document_start);
  if (m_mark.column == 0 && c == '.' && at(1) == '.' && at(2) == '.' && is_blankz(3))
    return fetch_document_indicator(Tok::document_end);
  switch (c) {
    case '[': return fetch_flow_collection_start(Tok::flow_sequence_start);
    case '{': return fetch_flow_collection_start(Tok::flow_mapping_start);
    case ']': return fetch_flow_collection_end(Tok::flow_sequence_end);
    case '}': return fetch_flow_collection_end(Tok::flow_mapping_end);
    case ',': return fetch_flow_entry();
    default: break;
  }
  if (c == '-' && is_blankz(1)) return fetch_block_entry();
  if (c == '?' && (m_flow_level > 0 || is_blankz(1))) return fetch_key();
  if (c == ':' && (m_flow_level > 0 || is_blankz(1))) return fetch_value();
  if (c == '*') return fetch_anchor(Tok::alias);
  if (c == '&') return fetch_anchor(Tok::anchor);
  if (c == '!') return fetch_tag();
  if (c == '|' && m_flow_level == 0) return fetch_block_scalar(true);
  if (c == '>' && m_flow_level == 0) return fetch_block_scalar(false);
  if (c == '\'') return fetch_flow_scalar(true);
  if (c == '"') return fetch_flow_scalar(false);
  static constexpr std::string_view k_indicators = "-?:,[]{}#&*!|>'\"%@`";
  if (!(is_blankz() || k_indicators.find(c) != std::string_view::npos) || (c == '-' && !is_blank(1)) ||
      (m_flow_level == 0 && (c == '?' || c == ':') && !is_blankz(1)))
    return fetch_plain_scalar();
  scanner_error(m_mark, m_mark, "found character that cannot start any token");
}

bool Scanner::simple_key_is_valid(SimpleKey& key) {
  if (!key.possible) return false;
  if (key.mark.line < m_mark.line || key.mark.index + 1024 < m_mark.index) {
    if (key.required) scanner_error(key.mark, m_mark, "could not find expected ':'");
    key.possible = false;
    return false;
  }
  return true;
}

void Scanner::save_simple_key() {
  bool required = m_flow_level == 0 && m_indent == m_mark.column;
  if (!m_simple_key_allowed) return;
  SimpleKey key{true, required, m_tokens_parsed + m_tokens.size(), m_mark};
  remove_simple_key();
  m_simple_keys.back() = key;
  m_simple_keys_by_tok[key.token_number] = m_simple_keys.size() - 1;
}

void Scanner::remove_simple_key() {
  SimpleKey& key = m_simple_keys.back();
  if (!key.possible) return;
  if (key.required) scanner_error(key.mark, m_mark, "could not find expected ':'");
  key.possible = false;
  m_simple_keys_by_tok.erase(key.token_number);
}

void Scanner::increase_flow_level() {
  m_simple_keys.push_back(SimpleKey{false, false, m_tokens_parsed + m_tokens.size(), m_mark});
  if (++m_flow_level > k_max_flow_level)
    scanner_error(m_simple_keys.back().mark, m_mark, "exceeded max depth of " + std::to_string(k_max_flow_level));
}

void Scanner::decrease_flow_level() {
  if (m_flow_level == 0) return;
  --m_flow_level;
  m_simple_keys_by_tok.erase(m_simple_keys.back().token_number);
  m_simple_keys.pop_back();
}

void Scanner::insert(std::ptrdiff_t at, Token t) {
  if (at < 0 || static_cast<std::size_t>(at) >= m_tokens.size()) {
    m_tokens.push_back(std::move(t));
  } else {
    m_tokens.insert(m_tokens.begin() + at, std::move(t));
  }
}

void Scanner::push(Tok type, const Mark& start, const Mark& end) {
  Token t;
  t.type = type;
  t.start = start;
  t.end = end;
  m_tokens.push_back(std::move(t));
}

void Scanner::roll_indent(int column, std::ptrdiff_t number, Tok type, const Mark& mark) {
  if (m_flow_level > 0 || m_indent >= column) return;
  m_indents.push_back(m_indent);
  m_indent = column;
  if (m_indents.size() > k_max_indents)
    scanner_error(m_simple_keys.back().mark, m_mark, "exceeded max depth of " + std::to_string(k_max_indents));
  Token t;
  t.type = type;
  t.start = t.end = mark;
  if (number > -1) number -= static_cast<std::ptrdiff_t>(m_tokens_parsed);
  insert(number, std::move(t));
}

void Scanner::unroll_indent(int column) {
  if (m_flow_level > 0) return;
  while (m_indent > column) {
    push(Tok::block_end, m_mark, m_mark);
    m_indent = m_indents.back();
    m_indents.pop_back();
  }
}

void Scanner::fetch_stream_start() {
  m_indent = -1;
  m_simple_keys.emplace_back();
  m_simple_key_allowed = true;
  m_stream_start_produced = true;
  push(Tok::stream_start, m_mark, m_mark);
}

void Scanner::fetch_stream_end() {
  // force a new line, as libyaml does (error lines at the end count one more)
  if (m_mark.column != 0) {
    m_mark.column = 0;
    ++m_mark.line;
  }
  unroll_indent(-1);
  remove_simple_key();
  m_simple_key_allowed = false;
  push(Tok::stream_end, m_mark, m_mark);
  m_stream_end_produced = true;
}

void Scanner::fetch_directive() {
  unroll_indent(-1);
  remove_simple_key();
  m_simple_key_allowed = false;
  m_tokens.push_back(scan_directive());
}

void Scanner::fetch_document_indicator(Tok type) {
  unroll_indent(-1);
  remove_simple_key();
  m_simple_key_allowed = false;
  Mark start = m_mark;
  skip();
  skip();
  skip();
  push(type, start, m_mark);
}

void Scanner::fetch_flow_collection_start(Tok type) {
  save_simple_key();
  increase_flow_level();
  m_simple_key_allowed = true;
  Mark start = m_mark;
  skip();
  push(type, start, m_mark);
}

void Scanner::fetch_flow_collection_end(Tok type) {
  remove_simple_key();
  decrease_flow_level();
  m_simple_key_allowed = false;
  Mark start = m_mark;
  skip();
  push(type, start, m_mark);
}

void Scanner::fetch_flow_entry() {
  remove_simple_key();
  m_simple_key_allowed = true;
  Mark start = m_mark;
  skip();
  push(Tok::flow_entry, start, m_mark);
}

void Scanner::fetch_block_entry() {
  if (m_flow_level == 0) {
    if (!m_simple_key_allowed) scanner_error(m_mark, m_mark, "block sequence entries are not allowed in this context");
    roll_indent(m_mark.column, -1, Tok::block_sequence_start, m_mark);
  }
  // in flow context '-' is an error the parser reports
  remove_simple_key();
  m_simple_key_allowed = true;
  Mark start = m_mark;
  skip();
  push(Tok::block_entry, start, m_mark);
}

void Scanner::fetch_key() {
  if (m_flow_level == 0) {
    if (!m_simple_key_allowed) scanner_error(m_mark, m_mark, "mapping keys are not allowed in this context");
    roll_indent(m_mark.column, -1, Tok::block_mapping_start, m_mark);
  }
  remove_simple_key();
  m_simple_key_allowed = m_flow_level == 0;
  Mark start = m_mark;
  skip();
  push(Tok::key, start, m_mark);
}

void Scanner::fetch_value() {
  SimpleKey& key = m_simple_keys.back();
  if (simple_key_is_valid(key)) {
    Token t;
    t.type = Tok::key;
    t.start = t.end = key.mark;
    insert(static_cast<std::ptrdiff_t>(key.token_number - m_tokens_parsed), std::move(t));
    roll_indent(key.mark.column, static_cast<std::ptrdiff_t>(key.token_number), Tok::block_mapping_start, key.mark);
    key.possible = false;
    m_simple_keys_by_tok.erase(key.token_number);
    m_simple_key_allowed = false;
  } else {
    if (m_flow_level == 0) {
      if (!m_simple_key_allowed) scanner_error(m_mark, m_mark, "mapping values are not allowed in this context");
      roll_indent(m_mark.column, -1, Tok::block_mapping_start, m_mark);
    }
    m_simple_key_allowed = m_flow_level == 0;
  }
  Mark start = m_mark;
  skip();
  push(Tok::value, start, m_mark);
}

void Scanner::fetch_anchor(Tok type) {
  save_simple_key();
  m_simple_key_allowed = false;
  m_tokens.push_back(scan_anchor(type));
}

void Scanner::fetch_tag() {
  save_simple_key();
  m_simple_key_allowed = false;
  m_tokens.push_back(scan_tag());
}

void Scanner::fetch_block_scalar(bool literal) {
  remove_simple_key();
  m_simple_key_allowed = true;
  m_tokens.push_back(scan_block_scalar(literal));
}

void Scanner::fetch_flow_scalar(bool single) {
  save_simple_key();
  m_simple_key_allowed = false;
  m_tokens.push_back(scan_flow_scalar(single));
}

void Scanner::fetch_plain_scalar() {
  save_simple_key();
  m_simple_key_allowed = false;
  m_tokens.push_back(scan_plain_scalar());
}

void Scanner::scan_to_next_token() {
  for (;;) {
    if (m_mark.column == 0 && at() == '\xEF' && at(1) == '\xBB' && at(2) == '\xBF') skip();
    while (at() == ' ' || ((m_flow_level > 0 || !m_simple_key_allowed) && at() == '\t')) skip();
    if (at() == '#')
      skip_to_break();
    if (!is_break()) break;
    skip_line();
    if (m_flow_level == 0) m_simple_key_allowed = true;
  }
}

Token Scanner::scan_directive() {
  Mark start = m_mark;
  skip();
  std::string name = scan_directive_name(start);
  Token t;
  t.start = start;
  if (name == "YAML") {
    while (is_blank()) skip();
    t.major = scan_version_number(start);
    if (at() != '.') scanner_error(start, m_mark, "did not find expected digit or '.' character");
    skip();
    t.minor = scan_version_number(start);
    t.type = Tok::version_directive;
  } else if (name == "TAG") {
    while (is_blank()) skip();
    t.handle = scan_tag_handle(true, start);
    if (!is_blank()) scanner_error(start, m_mark, "did not find expected whitespace");
    while (is_blank()) skip();
    t.value = scan_tag_uri(true, {}, start);
    if (!is_blankz()) scanner_error(start, m_mark, "did not find expected whitespace or line break");
    t.type = Tok::tag_directive;
  } else {
    scanner_error(start, m_mark, "found unknown directive name");
  }
  t.end = m_mark;
  while (is_blank()) skip();
  if (at() == '#')
    skip_to_break();
  if (!is_breakz()) scanner_error(start, m_mark, "did not find expected comment or line break");
  skip_line();
  return t;
}

std::string Scanner::scan_directive_name(const Mark& start) {
  std::string s;
  while (is_alpha()) read(s);
  if (s.empty()) scanner_error(start, m_mark, "could not find expected directive name");
  if (!is_blankz()) scanner_error(start, m_mark, "found unexpected non-alphabetical character");
  return s;
}

int Scanner::scan_version_number(const Mark& start) {
  int value = 0;
  int length = 0;
  while (at() >= '0' && at() <= '9') {
    if (++length > 9) scanner_error(start, m_mark, "found extremely long version number");
    value = value * 10 + (at() - '0');
    skip();
  }
  if (length == 0) scanner_error(start, m_mark, "did not find expected version number");
  return value;
}

Token Scanner::scan_anchor(Tok type) {
  Token t;
  t.type = type;
  t.start = m_mark;
  skip();
  while (is_alpha()) read(t.value);
  t.end = m_mark;
  char c = at();
  if (t.value.empty() ||
      !(is_blankz() || c == '?' || c == ':' || c == ',' || c == ']' || c == '}' || c == '%' || c == '@' || c == '`'))
    scanner_error(t.start, m_mark, "did not find expected alphabetic or numeric character");
  return t;
}

Token Scanner::scan_tag() {
  Token t;
  t.type = Tok::tag;
  t.start = m_mark;
  if (at(1) == '<') {
    skip();
    skip();
    t.value = scan_tag_uri(false, {}, t.start);
    if (at() != '>') scanner_error(t.start, m_mark, "did not find the expected '>'");
    skip();
  } else {
    std::string handle = scan_tag_handle(false, t.start);
    if (handle.size() > 1 && handle.front() == '!' && handle.back() == '!') {
      t.handle = std::move(handle);
      t.value = scan_tag_uri(false, {}, t.start);
    } else {
      t.value = scan_tag_uri(false, handle, t.start);
      t.handle = "!";
      if (t.value.empty()) std::swap(t.handle, t.value);
    }
  }
  if (!is_blankz()) scanner_error(t.start, m_mark, "did not find expected whitespace or line break");
  t.end = m_mark;
  return t;
}

std::string Scanner::scan_tag_handle(bool directive, const Mark& start) {
  if (at() != '!')
    scanner_error(start, m_mark, "did not find expected '!'");
  std::string s;
  read(s);
  while (is_alpha()) read(s);
  if (at() == '!') {
    read(s);
  } else if (directive && s != "!") {
    scanner_error(start, m_mark, "did not find expected '!'");
  }
  return s;
}

std::string Scanner::scan_tag_uri(bool directive, std::string_view head, const Mark& start) {
  std::string s;
  bool has_tag = !head.empty();
  if (head.size() > 1) s.append(head.substr(1));
  static constexpr std::string_view k_uri = ";/?:@&=+$,.!~*'()[]%";
  while (is_alpha() || (!is_z() && k_uri.find(at()) != std::string_view::npos)) {
    if (at() == '%') {
      scan_uri_escapes(start, s);
    } else {
      read(s);
    }
    has_tag = true;
  }
  if (!has_tag) scanner_error(start, m_mark, "did not find expected tag URI");
  (void)directive;
  return s;
}

void Scanner::scan_uri_escapes(const Mark& start, std::string& s) {
  int width = 1024;
  while (width > 0) {
    if (!(at() == '%' && is_hex(at(1)) && is_hex(at(2)))) scanner_error(start, m_mark, "did not find URI escaped octet");
    auto octet = static_cast<unsigned char>((hex_value(at(1)) << 4) + hex_value(at(2)));
    if (width == 1024) {
      width = static_cast<int>(utf8::sequence_length(octet));
      if (width == 0) scanner_error(start, m_mark, "found an incorrect leading UTF-8 octet");
    } else if ((octet & 0xC0) != 0x80) {
      scanner_error(start, m_mark, "found an incorrect trailing UTF-8 octet");
    }
    s += static_cast<char>(octet);
    skip();
    skip();
    skip();
    --width;
  }
}

Token Scanner::scan_block_scalar(bool literal) {
  Token t;
  t.type = Tok::scalar;
  t.style = literal ? Style::literal : Style::folded;
  t.start = m_mark;
  skip();
  int chomping = 0;
  int increment = 0;
  auto read_chomping = [&] {
    chomping = at() == '+' ? 1 : -1;
    skip();
  };
  auto read_increment = [&] {
    if (at() == '0') scanner_error(t.start, m_mark, "found an indentation indicator equal to 0");
    increment = at() - '0';
    skip();
  };
  if (at() == '+' || at() == '-') {
    read_chomping();
    if (at() >= '0' && at() <= '9') read_increment();
  } else if (at() >= '0' && at() <= '9') {
    read_increment();
    if (at() == '+' || at() == '-') read_chomping();
  }
  while (is_blank()) skip();
  if (at() == '#')
    skip_to_break();
  if (!is_breakz()) scanner_error(t.start, m_mark, "did not find expected comment or line break");
  if (is_break()) skip_line();
  Mark end = m_mark;
  int indent = 0;
  if (increment > 0) indent = m_indent >= 0 ? m_indent + increment : increment;
  std::string s, leading_break, trailing_breaks;
  scan_block_scalar_breaks(indent, trailing_breaks, t.start, end);
  bool leading_blank = false;
  while (m_mark.column == indent && !is_z()) {
    bool trailing_blank = is_blank();
    if (!literal && !leading_blank && !trailing_blank && !leading_break.empty() && leading_break[0] == '\n') {
      if (trailing_breaks.empty()) s += ' ';
    } else {
      s += leading_break;
    }
    leading_break.clear();
    s += trailing_breaks;
    trailing_breaks.clear();
    leading_blank = is_blank();
    std::size_t from = m_pos;
    skip_to_break();
    s.append(m_in.substr(from, m_pos - from));
    read_line(leading_break);
    scan_block_scalar_breaks(indent, trailing_breaks, t.start, end);
  }
  if (chomping != -1) s += leading_break;
  if (chomping == 1) s += trailing_breaks;
  t.value = std::move(s);
  t.end = end;
  return t;
}

void Scanner::scan_block_scalar_breaks(int& indent, std::string& breaks, const Mark& start, Mark& end) {
  end = m_mark;
  int max_indent = 0;
  for (;;) {
    while ((indent == 0 || m_mark.column < indent) && at() == ' ') skip();
    if (m_mark.column > max_indent) max_indent = m_mark.column;
    if ((indent == 0 || m_mark.column < indent) && at() == '\t')
      scanner_error(start, m_mark, "found a tab character where an indentation space is expected");
    if (!is_break()) break;
    read_line(breaks);
    end = m_mark;
  }
  if (indent == 0) {
    indent = max_indent;
    if (indent < m_indent + 1) indent = m_indent + 1;
    if (indent < 1) indent = 1;
  }
}

Token Scanner::scan_flow_scalar(bool single) {
  Token t;
  t.type = Tok::scalar;
  t.style = single ? Style::single_quoted : Style::double_quoted;
  t.start = m_mark;
  skip();
  std::string& s = t.value;
  std::string leading_break, trailing_breaks, whitespaces;
  for (;;) {
    if (m_mark.column == 0 &&
        ((at() == '-' && at(1) == '-' && at(2) == '-') || (at() == '.' && at(1) == '.' && at(2) == '.')) &&
        is_blankz(3))
      scanner_error(t.start, m_mark, "found unexpected document indicator");
    if (is_z()) scanner_error(t.start, m_mark, "found unexpected end of stream");
    bool leading_blanks = false;
    while (!is_blankz()) {
      char c = at();
      if (single && c == '\'' && at(1) == '\'') {
        s += '\'';
        skip();
        skip();
      } else if (c == (single ? '\'' : '"')) {
        break;
      } else if (!single && c == '\\' && is_break(1)) {
        skip();
        skip_line();
        leading_blanks = true;
        break;
      } else if (!single && c == '\\') {
        int code_length = 0;
        switch (at(1)) {
          case '0': s += '\0'; break;
          case 'a': s += '\x07'; break;
          case 'b': s += '\x08'; break;
          case 't':
          case '\t': s += '\x09'; break;
          case 'n': s += '\x0A'; break;
          case 'v': s += '\x0B'; break;
          case 'f': s += '\x0C'; break;
          case 'r': s += '\x0D'; break;
          case 'e': s += '\x1B'; break;
          case ' ': s += ' '; break;
          case '"': s += '"'; break;
          case '/': s += '/'; break;
          case '\'': s += '\''; break;
          case '\\': s += '\\'; break;
          case 'N': s += "\xC2\x85"; break;
          case '_': s += "\xC2\xA0"; break;
          case 'L': s += "\xE2\x80\xA8"; break;
          case 'P': s += "\xE2\x80\xA9"; break;
          case 'x': code_length = 2; break;
          case 'u': code_length = 4; break;
          case 'U': code_length = 8; break;
          default: scanner_error(t.start, m_mark, "found unknown escape character");
        }
        skip();
        skip();
        if (code_length > 0) {
          std::uint32_t value = 0;
          for (int k = 0; k < code_length; ++k) {
            if (!is_hex(at(static_cast<std::size_t>(k))))
              scanner_error(t.start, m_mark, "did not find expected hexdecimal number");
            value = (value << 4) + static_cast<std::uint32_t>(hex_value(at(static_cast<std::size_t>(k))));
          }
          if ((value >= 0xD800 && value <= 0xDFFF) || value > 0x10FFFF)
            scanner_error(t.start, m_mark, "found invalid Unicode character escape code");
          utf8::append(s, value);
          for (int k = 0; k < code_length; ++k) skip();
        }
      } else {
        read(s);
      }
    }
    if (at() == (single ? '\'' : '"')) break;
    while (is_blank() || is_break()) {
      if (is_blank()) {
        if (!leading_blanks) {
          read(whitespaces);
        } else {
          skip();
        }
      } else if (!leading_blanks) {
        whitespaces.clear();
        read_line(leading_break);
        leading_blanks = true;
      } else {
        read_line(trailing_breaks);
      }
    }
    if (leading_blanks) {
      if (!leading_break.empty() && leading_break[0] == '\n') {
        if (trailing_breaks.empty()) {
          s += ' ';
        } else {
          s += trailing_breaks;
        }
      } else {
        s += leading_break;
        s += trailing_breaks;
      }
      leading_break.clear();
      trailing_breaks.clear();
    } else {
      s += whitespaces;
      whitespaces.clear();
    }
  }
  skip();
  t.end = m_mark;
  return t;
}

Token Scanner::scan_plain_scalar() {
  Token t;
  t.type = Tok::scalar;
  t.style = Style::plain;
  t.start = m_mark;
  Mark end = m_mark;
  std::string& s = t.value;
  std::string leading_break, trailing_breaks, whitespaces;
  bool leading_blanks = false;
  int indent = m_indent + 1;
  for (;;) {
    if (m_mark.column == 0 &&
        ((at() == '-' && at(1) == '-' && at(2) == '-') || (at() == '.' && at(1) == '.' && at(2) == '.')) &&
        is_blankz(3))
      break;
    if (at() == '#') break;
    while (!is_blankz()) {
      char c = at();
      if ((c == ':' && is_blankz(1)) ||
          (m_flow_level > 0 && (c == ',' || c == '?' || c == '[' || c == ']' || c == '{' || c == '}')))
        break;
      if (leading_blanks || !whitespaces.empty()) {
        if (leading_blanks) {
          if (leading_break[0] == '\n') {
            if (trailing_breaks.empty()) {
              s += ' ';
            } else {
              s += trailing_breaks;
            }
          } else {
            s += leading_break;
            s += trailing_breaks;
          }
          trailing_breaks.clear();
          leading_break.clear();
          leading_blanks = false;
        } else {
          s += whitespaces;
          whitespaces.clear();
        }
      }
      // The rest of the run up to the next blank, break or indicator, appended at once (read()
      // per character was most of the scanner's time on large values files).
      // Its ASCII bytes are classed by a table, and only the few it marks are looked at again.
      const std::size_t from = m_pos;
      std::size_t chars = 0;
      for (;;) {
        m_pos += width();
        ++chars;
        if (is_z()) break;
        const auto b = static_cast<unsigned char>(m_in[m_pos]);
        if (b >= 0x80) {
          if ((b == 0xC2 || b == 0xE2) && is_unicode_break(0)) break;
          continue;
        }
        if (!k_plain_stops[b]) continue;
        if (b == ' ' || b == '\t' || b == '\n' || b == '\r') break;
        if (b == ':' ? is_blankz(1) : m_flow_level > 0) break;  // else a flow indicator
      }
      s.append(m_in.substr(from, m_pos - from));
      m_mark.index += chars;
      m_mark.column += chars;
      end = m_mark;
    }
    if (!(is_blank() || is_break())) break;
    while (is_blank() || is_break()) {
      if (is_blank()) {
        if (leading_blanks && m_mark.column < indent && at() == '\t')
          scanner_error(t.start, m_mark, "found a tab character that violates indentation");
        if (!leading_blanks) {
          read(whitespaces);
        } else {
          skip();
        }
      } else if (!leading_blanks) {
        whitespaces.clear();
        read_line(leading_break);
        leading_blanks = true;
      } else {
        read_line(trailing_breaks);
      }
    }
    if (m_flow_level == 0 && m_mark.column < indent) break;
  }
  t.end = end;
  if (leading_blanks) m_simple_key_allowed = true;
  return t;
}

}  // namespace emco::yaml::detail
