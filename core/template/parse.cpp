#include "core/template/parse.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "core/template/format.hpp"
#include "core/util/error.hpp"
#include "core/util/utf8.hpp"

namespace emco::tmpl {

namespace {

enum class It : std::uint8_t {
  error, bool_, char_, char_constant, comment, complex, assign, declare, eof, field, identifier,
  left_delim, left_paren, number, pipe, raw_string, right_delim, right_paren, string, text,
  variable,
  // keywords (after keyword marker)
  keyword, block, break_, continue_, dot, define, else_, end, if_, nil, range, template_, with
};

// val points into the parsed text (owned by the Tree), or for error items at a message owned
// by the Lexer (which outlives the parse). The fields are ordered so that a copy is two
// non-overlapping 16-byte moves, and the lexer constructs items in place: with `typ` first and
// a temporary per item, the compiler wrote Items with overlapping stores and the next read of
// them stalled on store forwarding (perf: a tenth of all rendering time in the token functions).
// Go's lexer makes an item of each run of spaces in an action, which the parser skips everywhere
// except between a command's operands; the item after such a run says so instead (a third of
// all items were spaces).
struct Item {
  Item() = default;
  Item(It t, int p, std::string_view v, int l, bool spaced = false)
      : val(v), pos(p), line(l), typ(t), after_space(spaced) {}
  std::string_view val;
  int pos = 0;
  int line = 1;
  It typ = It::eof;
  bool after_space = false;  // spaces separate it from the item before, in the same action
  std::string str() const {
    if (typ == It::eof) return "EOF";
    if (typ == It::error) return std::string(val);
    if (typ > It::keyword) return "<" + std::string(val) + ">";
    if (val.size() > 10) {
      // %.10q: quote the first 10 runes
      size_t i = 0;
      int n = 0;
      char32_t r;
      while (i < val.size() && n < 10) {
        i += utf8::decode(val, i, r);
        ++n;
      }
      return go_quote(val.substr(0, i)) + "...";
    }
    return go_quote(val);
  }
};

static_assert(std::is_trivially_copyable_v<Item>);

// Character classes by table: the lexer asks for every character of every word.
constexpr std::uint8_t k_space = 1, k_alnum = 2;
constexpr auto k_classes = [] {
  std::array<std::uint8_t, 256> t{};
  for (int c : {' ', '\t', '\r', '\n'}) t[static_cast<unsigned char>(c)] = k_space;
  for (int c = 0; c < 256; ++c)
    if (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80)
      t[static_cast<std::size_t>(c)] = k_alnum;
  return t;
}();
bool is_space(char c) { return k_classes[static_cast<unsigned char>(c)] == k_space; }
bool is_alnum(unsigned char c) { return k_classes[c] == k_alnum; }

std::string rune_desc(std::string_view s, size_t i) {
  // %#U of the rune at s[i] (the lexer decodes as Go's does: a bad byte is U+FFFD)
  char32_t r;
  utf8::decode(s, i, r);
  char buf[32];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(r));
  std::string out = buf;
  bool printable = r >= 0x20 && r != 0x7F && !(r >= 0x80 && r < 0xA0);
  if (printable) {
    out += " '";
    utf8::append(out, r);
    out += "'";
  }
  return out;
}

// Where the characters a quoted string holds as they are end, from `from`: the offset of the
// first '"', '\\' or line feed (or, with `non_ascii`, byte from 0x80), or the size. Sixteen bytes
// at a time (SSE2): include and template names, and other literals, were scanned a byte at a
// time by the lexer and again by unquote.
std::size_t quote_stop(std::string_view s, std::size_t from, bool non_ascii) {
  const char* const p = s.data();
  const std::size_t n = s.size();
  std::size_t i = from;
#ifdef __SSE2__
  while (n - i >= 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    __m128i stops = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
                                 _mm_cmpeq_epi8(x, _mm_set1_epi8('\n')));
    if (non_ascii) stops = _mm_or_si128(stops, _mm_cmplt_epi8(x, _mm_setzero_si128()));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(stops));
    if (mask != 0) return i + static_cast<std::size_t>(__builtin_ctz(mask));
    i += 16;
  }
#endif
  for (; i < n; ++i) {
    const auto c = static_cast<unsigned char>(p[i]);
    if (c == '"' || c == '\\' || c == '\n' || (non_ascii && c >= 0x80)) break;
  }
  return i;
}

// Line numbers of byte offsets in a text, asked in any order: counted from the previous
// answer, forward or back, since most questions are close to the one before.
class LineCounter {
public:
  explicit LineCounter(std::string_view text) : m_text(text) {}
  int line_at(size_t pos) {
    pos = std::min(pos, m_text.size());
    if (pos >= m_pos) m_line += count(m_pos, pos);
    else m_line -= count(pos, m_pos);
    m_pos = pos;
    return m_line;
  }

private:
  int count(size_t from, size_t to) const {
    int n = 0;
    const char* p = m_text.data() + from;
    const char* stop = m_text.data() + to;
    while ((p = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(stop - p)))) != nullptr) {
      ++n;
      ++p;
    }
    return n;
  }
  std::string_view m_text;
  size_t m_pos = 0;
  int m_line = 1;
};

class Lexer {
public:
  // Appends the items of `input` to `items` (valid while the Lexer lives: error items' texts are
  // its own).
  Lexer(std::string_view input, std::vector<Item>& items) : m_in(input), m_lines(input), m_items(items) {}

  void run() {
    m_items.reserve(m_items.size() + m_in.size() / 16 + 16);  // charts average one item per 28 bytes
    while (!m_done) {
      if (m_inside) inside_action();
      else lex_text();
    }
  }

private:
  std::string_view m_in;
  size_t m_pos = 0;
  size_t m_start = 0;
  LineCounter m_lines;
  bool m_inside = false;
  bool m_done = false;
  bool m_after_space = false;  // spaces since the last item (Go's space item)
  int m_paren = 0;
  std::vector<Item>& m_items;
  std::deque<std::string> m_messages;  // error items' texts (a deque: they never move)

  // Items leave their line to the parser (line 0: the line of `pos`), which asks for a few of
  // them; counting every item's line here showed in profiles. The error and the eof after it
  // carry the error's line.
  void emit(It t) {
    // m_start <= m_pos <= size always: the view is made directly, without substr's check
    m_items.emplace_back(t, static_cast<int>(m_start), std::string_view(m_in.data() + m_start, m_pos - m_start), 0,
                         m_after_space);
    m_start = m_pos;
    m_after_space = false;
  }
  void error(std::string msg) {
    m_messages.push_back(std::move(msg));
    const int line = m_lines.line_at(m_start);
    m_items.emplace_back(It::error, static_cast<int>(m_start), m_messages.back(), line);
    m_items.emplace_back(It::eof, static_cast<int>(m_pos), "", line);
    m_done = true;
  }
  char peek() const { return m_pos < m_in.size() ? m_in[m_pos] : '\0'; }
  bool eof() const { return m_pos >= m_in.size(); }
  bool has_left_trim(size_t p) const { return p + 1 < m_in.size() && m_in[p] == '-' && is_space(m_in[p + 1]); }
  bool has_right_trim(size_t p) const { return p + 1 < m_in.size() && is_space(m_in[p]) && m_in[p + 1] == '-'; }
  // Whether "}}" starts at p: asked at every step inside an action, so two byte compares
  // rather than a bounds-checked substr and a starts_with.
  bool at_close(size_t p) const { return p + 1 < m_in.size() && m_in[p] == '}' && m_in[p + 1] == '}'; }
  // returns 0 = not at right delim, 1 = at "}}", 2 = at " -}}"
  int at_right_delim(size_t p) const {
    if (at_close(p)) return 1;
    if (has_right_trim(p) && at_close(p + 2)) return 2;
    return 0;
  }
  bool at_terminator() const {
    if (eof()) return true;
    char r = peek();
    if (is_space(r)) return true;
    switch (r) {
      case '.': case ',': case '|': case ':': case ')': case '(': return true;
      default: break;
    }
    return at_close(m_pos);
  }

  // Where the run of characters of class `cls` (k_space, k_alnum) from `p` ends. A local index:
  // stepping m_pos itself made the compiler store it at every character (a char read may alias it).
  std::size_t end_of_run(std::size_t p, std::uint8_t cls) const {
    const char* const s = m_in.data();
    const std::size_t n = m_in.size();
    while (p < n && k_classes[static_cast<unsigned char>(s[p])] == cls) ++p;
    return p;
  }

  // end_of_run(p, k_alnum), sixteen bytes at a time (SSE2) while the input has them: field,
  // variable and function names are most of an action's characters, and a byte at a time was the
  // lexer's costliest line.
  std::size_t end_of_word(std::size_t p) const {
#ifdef __SSE2__
    const char* const s = m_in.data();
    while (m_in.size() - p >= 16) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + p));
      const __m128i folded = _mm_or_si128(x, _mm_set1_epi8(0x20));  // ASCII letters in lower case
      const __m128i letter =
          _mm_and_si128(_mm_cmpgt_epi8(folded, _mm_set1_epi8('a' - 1)), _mm_cmplt_epi8(folded, _mm_set1_epi8('z' + 1)));
      const __m128i digit =
          _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(x, _mm_set1_epi8('9' + 1)));
      const __m128i other = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('_')),
                                         _mm_cmplt_epi8(x, _mm_setzero_si128()));  // '_', bytes from 0x80
      const unsigned word = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(letter, digit), other)));
      if (word != 0xFFFFu) return p + static_cast<std::size_t>(__builtin_ctz(~word));
      p += 16;
    }
#endif
    return end_of_run(p, k_alnum);
  }

  void lex_text() {
    size_t x = m_in.find("{{", m_pos);
    if (x == std::string_view::npos) {
      m_pos = m_in.size();
      if (m_pos > m_start) emit(It::text);
      emit(It::eof);
      m_done = true;
      return;
    }
    if (x > m_start) {
      m_pos = x;
      size_t trim = 0;
      if (has_left_trim(x + 2)) {
        size_t e = x;
        while (e > m_start && is_space(m_in[e - 1])) --e;
        trim = x - e;
      }
      m_pos = x - trim;
      if (m_pos > m_start) emit(It::text);
      m_pos = x;
      m_start = x;
    }
    // left delim
    m_pos = x + 2;
    bool trim_space = has_left_trim(m_pos);
    size_t after = trim_space ? 2 : 0;
    if (m_in.substr(m_pos + after).starts_with("/*")) {
      m_pos += after;
      m_start = m_pos;
      lex_comment();
      return;
    }
    m_items.emplace_back(It::left_delim, static_cast<int>(m_start), "{{", 0);
    m_inside = true;
    m_pos += after;
    m_start = m_pos;
    m_paren = 0;
  }

  void lex_comment() {
    m_pos += 2;
    size_t x = m_in.find("*/", m_pos);
    if (x == std::string_view::npos) {
      error("unclosed comment");
      return;
    }
    m_pos = x + 2;
    int d = at_right_delim(m_pos);
    if (!d) {
      error("comment ends before closing delimiter");
      return;
    }
    if (d == 2) m_pos += 2;
    m_pos += 2;
    if (d == 2)
      m_pos = end_of_run(m_pos, k_space);
    m_start = m_pos;
  }

  void right_delim() {
    int d = at_right_delim(m_pos);
    if (d == 2) {
      m_pos += 2;
      m_start = m_pos;
    }
    m_pos += 2;
    emit(It::right_delim);
    if (d == 2) {
      m_pos = end_of_run(m_pos, k_space);
      m_start = m_pos;
    }
    m_inside = false;
  }

  void inside_action() {
    if (at_right_delim(m_pos)) {
      if (m_paren == 0) {
        right_delim();
      } else {
        error("unclosed left paren");
      }
      return;
    }
    if (eof()) {
      error("unclosed action");
      return;
    }
    char r = m_in[m_pos++];
    if (is_space(r)) {
      --m_pos;
      lex_space();
      return;
    }
    switch (r) {
      case '=': emit(It::assign); return;
      case ':':
        if (peek() != '=') {
          if (!eof()) ++m_pos;
          error("expected :=");
          return;
        }
        ++m_pos;
        emit(It::declare);
        return;
      case '|': emit(It::pipe); return;
      case '"': lex_quote(); return;
      case '`': lex_raw_quote(); return;
      case '$': lex_field_or_variable(It::variable); return;
      case '\'': lex_char(); return;
      case '(':
        emit(It::left_paren);
        ++m_paren;
        return;
      case ')':
        emit(It::right_paren);
        --m_paren;
        if (m_paren < 0) error("unexpected right paren");
        return;
      default: break;
    }
    if (r == '.') {
      if (m_pos < m_in.size() && (m_in[m_pos] < '0' || m_in[m_pos] > '9')) {
        lex_field_or_variable(It::field);
        return;
      }
    }
    if (r == '.' || r == '+' || r == '-' || (r >= '0' && r <= '9')) {
      --m_pos;
      lex_number();
      return;
    }
    if (is_alnum(static_cast<unsigned char>(r))) {
      --m_pos;
      lex_identifier();
      return;
    }
    if (static_cast<unsigned char>(r) < 0x7F && static_cast<unsigned char>(r) >= 0x20) {
      emit(It::char_);
      return;
    }
    --m_pos;
    std::string desc = rune_desc(m_in, m_pos);
    error("unrecognized character in action: " + desc);
  }

  void lex_space() {
    const std::size_t from = m_pos;
    m_pos = end_of_run(m_pos, k_space);
    if (has_right_trim(m_pos - 1) && at_close(m_pos + 1)) {
      --m_pos;
      if (m_pos == from) {
        m_start = m_pos;  // the space belongs to " -}}"
        return;
      }
    }
    m_after_space = true;
    m_start = m_pos;
  }

  void lex_identifier() {
    m_pos = end_of_word(m_pos);
    std::string_view word = m_in.substr(m_start, m_pos - m_start);
    if (!at_terminator()) {
      error("bad character " + rune_desc(m_in, m_pos));
      return;
    }
    emit(keyword(word));
  }

  // The item type of an identifier-like word: a keyword, a boolean or an identifier. A switch
  // on the length first: a map lookup per identifier showed in profiles.
  static It keyword(std::string_view word) {
    switch (word.size()) {
      case 2:
        if (word == "if") return It::if_;
        break;
      case 3:
        if (word == "end") return It::end;
        if (word == "nil") return It::nil;
        break;
      case 4:
        if (word == "else") return It::else_;
        if (word == "with") return It::with;
        if (word == "true") return It::bool_;
        break;
      case 5:
        if (word == "block") return It::block;
        if (word == "break") return It::break_;
        if (word == "range") return It::range;
        if (word == "false") return It::bool_;
        break;
      case 6:
        if (word == "define") return It::define;
        break;
      case 8:
        if (word == "continue") return It::continue_;
        if (word == "template") return It::template_;
        break;
      default: break;
    }
    return It::identifier;
  }

  void lex_field_or_variable(It typ) {
    if (at_terminator()) {
      emit(typ == It::variable ? It::variable : It::dot);
      return;
    }
    m_pos = end_of_word(m_pos);
    if (!at_terminator()) {
      error("bad character " + rune_desc(m_in, m_pos));
      return;
    }
    emit(typ);
  }

  void lex_char() {
    while (true) {
      if (eof()) {
        error("unterminated character constant");
        return;
      }
      char c = m_in[m_pos++];
      if (c == '\\') {
        if (!eof() && m_in[m_pos] != '\n') {
          ++m_pos;
          continue;
        }
        error("unterminated character constant");
        return;
      }
      if (c == '\n') {
        error("unterminated character constant");
        return;
      }
      if (c == '\'') break;
    }
    emit(It::char_constant);
  }

  void lex_quote() {
    while (true) {
      m_pos = quote_stop(m_in, m_pos, false);
      if (eof()) {
        error("unterminated quoted string");
        return;
      }
      char c = m_in[m_pos++];
      if (c == '\\') {
        if (!eof() && m_in[m_pos] != '\n') {
          ++m_pos;
          continue;
        }
        error("unterminated quoted string");
        return;
      }
      if (c == '\n') {
        error("unterminated quoted string");
        return;
      }
      if (c == '"') break;
    }
    emit(It::string);
  }

  void lex_raw_quote() {
    size_t x = m_in.find('`', m_pos);
    if (x == std::string_view::npos) {
      error("unterminated raw quoted string");
      return;
    }
    m_pos = x + 1;
    emit(It::raw_string);
  }

  bool accept(std::string_view set) {
    if (!eof() && set.find(m_in[m_pos]) != std::string_view::npos) {
      ++m_pos;
      return true;
    }
    return false;
  }
  void accept_run(std::string_view set) {
    while (accept(set)) {
    }
  }
  bool scan_number() {
    accept("+-");
    std::string_view digits = "0123456789_";
    if (accept("0")) {
      if (accept("xX")) digits = "0123456789abcdefABCDEF_";
      else if (accept("oO")) digits = "01234567_";
      else if (accept("bB")) digits = "01_";
    }
    accept_run(digits);
    if (accept(".")) accept_run(digits);
    if (digits.size() == 11 && accept("eE")) {
      accept("+-");
      accept_run("0123456789_");
    }
    if (digits.size() == 23 && accept("pP")) {
      accept("+-");
      accept_run("0123456789_");
    }
    accept("i");
    if (!eof() && is_alnum(static_cast<unsigned char>(peek()))) {
      ++m_pos;
      return false;
    }
    return true;
  }
  void lex_number() {
    if (!scan_number()) {
      error("bad number syntax: " + go_quote(m_in.substr(m_start, m_pos - m_start)));
      return;
    }
    char s = peek();
    if (s == '+' || s == '-') {
      if (!scan_number() || m_in[m_pos - 1] != 'i') {
        error("bad number syntax: " + go_quote(m_in.substr(m_start, m_pos - m_start)));
        return;
      }
      emit(It::complex);
      return;
    }
    emit(It::number);
  }
};

// strconv.Unquote for "..." , `...` and '...'
bool unquote(std::string_view s, std::string& out) {
  out.clear();
  if (s.size() < 2) return false;
  char q = s.front();
  if (q != s.back()) return false;
  s = s.substr(1, s.size() - 2);
  out.reserve(s.size());  // never longer than the quoted text
  if (q == '`') {
    if (s.find('`') != std::string_view::npos) return false;
    // runs between carriage returns appended at once (raw strings carry whole embedded files)
    for (size_t from = 0; from < s.size();) {
      size_t cr = std::min(s.find('\r', from), s.size());
      out.append(s, from, cr - from);
      from = cr + 1;
    }
    return true;
  }
  if (q != '"' && q != '\'') return false;
  auto hexval = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  size_t runes = 0;
  for (size_t i = 0; i < s.size();) {
    if (q == '"') {
      // A run of ASCII characters that need no decoding, appended at once (the rune count
      // only matters for '...').
      const size_t j = quote_stop(s, i, true);
      if (j > i) {
        out.append(s, i, j - i);
        i = j;
        continue;
      }
    }
    char c = s[i];
    ++runes;
    if (c == q && q == '"') return false;
    if (c == '\n') return false;
    if (static_cast<unsigned char>(c) < 0x80 && c != '\\') {
      out.push_back(c);
      ++i;
      continue;
    }
    if (c != '\\') {
      char32_t r;
      size_t w = utf8::decode(s, i, r);
      out.append(s, i, w);
      i += w;
      continue;
    }
    if (i + 1 >= s.size()) return false;
    char e = s[i + 1];
    i += 2;
    switch (e) {
      case 'a': out.push_back('\a'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'v': out.push_back('\v'); break;
      case '\\': out.push_back('\\'); break;
      case '\'':
        if (q != '\'') return false;
        out.push_back('\'');
        break;
      case '"':
        if (q != '"') return false;
        out.push_back('"');
        break;
      case 'x': case 'u': case 'U': {
        size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        if (i + n > s.size()) return false;
        std::uint32_t v = 0;
        for (size_t k = 0; k < n; ++k) {
          int h = hexval(s[i + k]);
          if (h < 0) return false;
          v = (v << 4) | static_cast<std::uint32_t>(h);
        }
        i += n;
        if (e == 'x') out.push_back(static_cast<char>(v));
        else {
          if (v > 0x10FFFF || (v >= 0xD800 && v < 0xE000)) return false;
          utf8::append(out, v);  // v is a valid scalar value (checked above)
        }
        break;
      }
      case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
        if (i + 2 > s.size()) return false;
        std::uint32_t v = static_cast<std::uint32_t>(e - '0');
        for (size_t k = 0; k < 2; ++k) {
          char d = s[i + k];
          if (d < '0' || d > '7') return false;
          v = v * 8 + static_cast<std::uint32_t>(d - '0');
        }
        if (v > 255) return false;
        i += 2;
        out.push_back(static_cast<char>(v));
        break;
      }
      default: return false;
    }
  }
  if (q == '\'') {
    // exactly one rune
    size_t n = utf8::count(out);
    if (n != 1 && !(runes == 1 && !out.empty())) return false;
  }
  return true;
}

struct ParseError {
  std::string msg;
};

class Parser {
public:
  Parser(const std::string& name, std::shared_ptr<const std::string> text, std::span<const Item> items,
         const FunctionResolver& resolve, std::shared_ptr<Arena> arena, std::vector<std::shared_ptr<Tree>>& out)
      : m_parse_name(name), m_text(std::move(text)), m_items(items), m_lines(*m_text),
        m_resolve(resolve), m_arena(std::move(arena)), m_out(out) {
    // The last item is the lexer's eof: at the end of the text (line 0, counted if an error
    // needs it) or after an error item, with its line.
    m_eof.pos = static_cast<int>(m_text->size());
    m_eof.line = m_items.empty() ? 1 : m_items.back().line;
  }

  void parse_file() {
    auto tree = new_tree(m_parse_name);
    m_vars = {"$"};
    tree->root = m_arena->make(NodeType::list, peek().pos);
    const size_t mark = m_scratch.size();
    while (peek().typ != It::eof) {
      if (peek().typ == It::left_delim) {
        const size_t delim = m_next;
        next();
        if (next().typ == It::define) {
          parse_definition();
          continue;
        }
        m_next = delim;
      }
      Node* n = text_or_action();
      if (is_end(n) || is_else(n)) errorf("unexpected " + node_string(n));
      if (n->type == NodeType::comment) continue;
      m_scratch.push_back(n);
    }
    tree->root->nodes = take_scratch(mark);
    add(tree, true);
  }

private:
  std::string m_parse_name;
  std::shared_ptr<const std::string> m_text;
  std::span<const Item> m_items;
  // The lines of items that leave it to the parser, counted only for error messages (nodes
  // keep their byte offset: counting lines for every action was a sixth of parsing).
  LineCounter m_lines;
  Item m_eof;             // what reading past the items gives (the lexer ends them with eof)
  size_t m_next = 0;      // the next item to read
  size_t m_furthest = 0;  // one past the furthest item read: Go's token[0], whose line errors name
  const FunctionResolver& m_resolve;
  // Functions m_resolve found, by a hash of their name's length and ends: a file calls a few
  // functions many times, and asking through the std::function and the engine's hashed
  // function map per identifier was 1.5% of rendering a chart.
  std::array<std::pair<std::string_view, const FuncDef*>, 64> m_defined{};
  std::shared_ptr<Arena> m_arena;
  std::vector<std::shared_ptr<Tree>>& m_out;
  std::map<std::string, std::shared_ptr<Tree>> m_set;
  std::vector<std::string_view> m_vars;  // views into the file's text ("$" a literal)
  // String literals' constants by their quoted text: a file repeats a few (include's template
  // names, dict keys) many times, and making each one's Value was 1% of rendering a chart. The
  // thread's table of the latest literal per hash of the text rather than a hash map per parse
  // (its nodes and hashing were 3% of parsing); a slot is this parse's if it carries its number.
  // A literal whose slot holds another gets a constant of its own of the same value: the table
  // only saves work.
  struct LiteralSlot {
    std::uint64_t parse = 0;
    std::string_view quoted;
    const Value* constant = nullptr;
  };
  using LiteralSlots = std::array<LiteralSlot, 1024>;
  // On the heap, made at the thread's first parse: as a thread_local array its 32 KiB were
  // cleared by the loader at every process start and thread creation (8 page faults each).
  static LiteralSlots& literal_slots() {
    thread_local std::unique_ptr<LiteralSlots> slots;
    if (!slots) slots = std::make_unique<LiteralSlots>();
    return *slots;
  }
  LiteralSlots& m_literals = literal_slots();
  static std::uint64_t next_parse_number() {
    thread_local std::uint64_t parses = 0;
    return ++parses;
  }
  const std::uint64_t m_parse_number = next_parse_number();
  const Value*& literal(std::string_view quoted) {
    // A hash of the length and of the first and last eight bytes, read as words (a quoted
    // literal has at least two; literals can be whole files).
    const std::size_t n = quoted.size();
    std::uint64_t head = 0, tail = 0;
    std::memcpy(&head, quoted.data(), std::min<std::size_t>(n, 8));
    std::memcpy(&tail, quoted.data() + (n > 8 ? n - 8 : 0), std::min<std::size_t>(n, 8));
    std::uint64_t h = (head * 0x9E3779B97F4A7C15ULL) ^ (tail + n) * 0xC2B2AE3D27D4EB4FULL;
    h ^= h >> 29;
    LiteralSlot& slot = m_literals[h % m_literals.size()];
    if (slot.parse != m_parse_number || slot.quoted != quoted) slot = {m_parse_number, quoted, nullptr};
    return slot.constant;
  }
  // Children of the lists, pipelines and commands being parsed, innermost last: each node's
  // list is allocated once at its final size (grown a child at a time, the arena's vectors
  // reallocated several times per list, which showed in profiles).
  std::vector<Node*> m_scratch;
  int m_range_depth = 0;
  int m_action_pos = -1;  // the open action's "{{" (its line is counted for an error in it)
  int m_depth = 0;

  static constexpr int k_max_depth = 1000;

  const FuncDef* function(std::string_view name) {  // name: an identifier, never empty
    auto& slot = m_defined[(name.size() * 31 + static_cast<unsigned char>(name.front()) * 7 +
                            static_cast<unsigned char>(name.back())) % m_defined.size()];
    if (slot.first == name) return slot.second;
    const FuncDef* f = m_resolve(name);
    if (f) slot = {name, f};
    return f;
  }

  // The children collected since `mark`, moved into the arena.
  NodeList take_scratch(size_t mark) {
    NodeList taken = m_arena->copy(std::span<Node* const>(m_scratch).subspan(mark));
    m_scratch.resize(mark);
    return taken;
  }

  std::span<const std::string_view> one_ident(std::string_view name) {
    return m_arena->copy(std::span<const std::string_view>(&name, 1));
  }

  // `head` followed by the names of the field items at m_next (".a" -> "a"), consumed.
  std::span<const std::string_view> fields_after(std::span<const std::string_view> head) {
    size_t fields = 0;
    while (item_at(m_next + fields).typ == It::field && !item_at(m_next + fields).after_space) ++fields;
    std::span<std::string_view> names = m_arena->array<std::string_view>(head.size() + fields);
    std::copy(head.begin(), head.end(), names.begin());
    for (size_t i = head.size(); i < names.size(); ++i) names[i] = next().val.substr(1);
    peek();  // Go's parser peeked at the item after the last field
    return names;
  }

  std::shared_ptr<Tree> new_tree(const std::string& name) {
    auto t = std::make_shared<Tree>();
    t->name = name;
    t->parse_name = m_parse_name;
    t->text = m_text;
    t->arena = m_arena;
    return t;
  }

  // end/else pseudo nodes (Go's nodeEnd/nodeElse)
  Node* make_end(int pos) {
    Node* n = m_arena->make(NodeType::comment, pos);
    n->text = "{{end}}";
    n->is_assign = true;  // marks "end"
    return n;
  }
  Node* make_else(int pos) {
    Node* n = m_arena->make(NodeType::comment, pos);
    n->text = "{{else}}";
    n->is_assign = false;
    n->number_is_int = true;  // marks "else"
    return n;
  }
  static bool is_end(const Node* n) { return n->type == NodeType::comment && n->is_assign; }
  static bool is_else(const Node* n) { return n->type == NodeType::comment && n->number_is_int; }
  static std::string node_string(const Node* n) { return n->type == NodeType::comment ? std::string(n->text) : n->to_string(); }

  [[noreturn]] void errorf(const std::string& msg) {
    const int line = m_furthest == 0 ? 0 : line_of(item_at(m_furthest - 1));
    throw ParseError{"template: " + m_parse_name + ":" + std::to_string(line) + ": " + msg};
  }

  // The token stream is m_items read by index (m_next): backing up is moving the index back,
  // and no token is copied. Go's parser keeps a three-token window instead (backup2/backup3) and
  // skips space items (nextNonSpace, peekNonSpace) everywhere but between operands, which
  // Item::after_space tells.
  const Item& item_at(size_t i) const { return i < m_items.size() ? m_items[i] : m_eof; }
  int line_of(const Item& t) { return t.line != 0 ? t.line : m_lines.line_at(static_cast<size_t>(t.pos)); }
  const Item& next() {
    const Item& t = item_at(m_next++);
    m_furthest = std::max(m_furthest, m_next);
    return t;
  }
  void backup() { --m_next; }
  const Item& peek() {
    m_furthest = std::max(m_furthest, m_next + 1);
    return item_at(m_next);
  }
  const Item& expect(It typ, std::string_view context) {
    const Item& t = next();
    if (t.typ != typ) unexpected(t, context);
    return t;
  }
  const Item& expect_one_of(It a, It b, std::string_view context) {
    const Item& t = next();
    if (t.typ != a && t.typ != b) unexpected(t, context);
    return t;
  }
  [[noreturn]] void unexpected(const Item& t, std::string_view context) {
    if (t.typ == It::error) {
      std::string extra;
      const int action_line = m_action_pos < 0 ? 0 : m_lines.line_at(static_cast<size_t>(m_action_pos));
      if (action_line != 0 && action_line != line_of(t)) {
        extra = " in action started at " + m_parse_name + ":" + std::to_string(action_line);
        if (t.val.ends_with(" action")) extra = extra.substr(std::string(" in action").size());
      }
      errorf(t.str() + extra);
    }
    errorf("unexpected " + t.str() + " in " + std::string(context));
  }

  void add(const std::shared_ptr<Tree>& t, bool main) {
    auto it = m_set.find(t->name);
    if (it == m_set.end() || is_empty_tree(it->second->root)) {
      if (it != m_set.end()) {
        for (auto& o : m_out)
          if (o == it->second) o = t;
        it->second = t;
      } else {
        m_set[t->name] = t;
        if (main) m_out.insert(m_out.begin(), t);
        else m_out.push_back(t);
      }
      return;
    }
    if (!is_empty_tree(t->root)) errorf("template: multiple definition of template " + go_quote(t->name));
  }

  void parse_definition() {
    const std::string_view context = "define clause";
    const Item& name = expect_one_of(It::string, It::raw_string, context);
    std::string unq;
    if (!unquote(name.val, unq)) errorf("invalid syntax");
    auto tree = new_tree(unq);
    auto saved_vars = m_vars;
    m_vars = {"$"};
    expect(It::right_delim, context);
    auto [list, end] = item_list();
    if (!is_end(end)) errorf("unexpected " + node_string(end) + " in " + std::string(context));
    tree->root = list;
    add(tree, false);
    m_vars = saved_vars;
  }

  std::pair<Node*, Node*> item_list() {
    Node* list = m_arena->make(NodeType::list, peek().pos);
    const size_t mark = m_scratch.size();
    while (peek().typ != It::eof) {
      Node* n = text_or_action();
      if (is_end(n) || is_else(n)) {
        list->nodes = take_scratch(mark);
        return {list, n};
      }
      if (n->type == NodeType::comment) continue;
      m_scratch.push_back(n);
    }
    errorf("unexpected EOF");
  }

  Node* text_or_action() {
    const Item& token = next();
    switch (token.typ) {
      case It::text: {
        Node* n = m_arena->make(NodeType::text, token.pos);
        n->text = token.val;
        return n;
      }
      case It::left_delim: {
        m_action_pos = token.pos;
        Node* n = action();
        m_action_pos = -1;
        return n;
      }
      case It::comment: {
        Node* n = m_arena->make(NodeType::comment, token.pos);
        return n;
      }
      default: unexpected(token, "input");
    }
  }

  Node* action() {
    const Item& token = next();
    switch (token.typ) {
      case It::block: return block_control();
      case It::break_: return break_control(token, "{{break}}", NodeType::break_);
      case It::continue_: return break_control(token, "{{continue}}", NodeType::continue_);
      case It::else_: return else_control();
      case It::end: return end_control();
      case It::if_: return control(NodeType::if_, "if");
      case It::range: return control(NodeType::range, "range");
      case It::template_: return template_control();
      case It::with: return control(NodeType::with, "with");
      default: break;
    }
    backup();
    const Item& t = peek();
    Node* n = m_arena->make(NodeType::action, t.pos);
    n->pipe = pipeline("command", It::right_delim);
    return n;
  }

  Node* break_control(const Item& tok, const char* what, NodeType type) {
    const Item& t = next();
    if (t.typ != It::right_delim) unexpected(t, what);
    if (m_range_depth == 0) errorf(std::string(what) + " outside {{range}}");
    return m_arena->make(type, tok.pos);
  }

  Node* pipeline(std::string_view context, It end) {
    const Item& token = peek();
    Node* pipe = m_arena->make(NodeType::pipe, token.pos);
    const size_t decls = m_scratch.size();
  decls:
    const Item& v = peek();
    const size_t v_at = m_next;
    if (v.typ == It::variable) {
      next();
      const Item& nx = peek();
      if (nx.typ == It::assign || nx.typ == It::declare) {
        pipe->is_assign = nx.typ == It::assign;
        next();
        Node* var = m_arena->make(NodeType::variable, v.pos);
        var->idents = one_ident(v.val);
        m_scratch.push_back(var);
        m_vars.emplace_back(v.val);
      } else if (nx.typ == It::char_ && nx.val == ",") {
        next();
        Node* var = m_arena->make(NodeType::variable, v.pos);
        var->idents = one_ident(v.val);
        m_scratch.push_back(var);
        m_vars.emplace_back(v.val);
        if (context == "range" && m_scratch.size() - decls < 2) {
          It p = peek().typ;
          if (p == It::variable || p == It::right_delim || p == It::right_paren) goto decls;
          errorf("range can only initialize variables");
        }
        errorf("too many declarations in " + std::string(context));
      } else {
        m_next = v_at;  // Go's backup3(v, after) or backup2(v)
      }
    }
    pipe->decls = take_scratch(decls);
    const size_t mark = m_scratch.size();
    while (true) {
      const Item& t = next();
      if (t.typ == end) {
        pipe->nodes = take_scratch(mark);
        check_pipeline(pipe, context);
        return pipe;
      }
      switch (t.typ) {
        case It::bool_: case It::char_constant: case It::complex: case It::dot: case It::field:
        case It::identifier: case It::number: case It::nil: case It::raw_string: case It::string:
        case It::variable: case It::left_paren:
          backup();
          m_scratch.push_back(command());
          break;
        default: unexpected(t, context);
      }
    }
  }

  void check_pipeline(Node* pipe, std::string_view context) {
    if (pipe->nodes.empty()) errorf("missing value for " + std::string(context));
    for (size_t i = 1; i < pipe->nodes.size(); ++i) {
      switch (pipe->nodes[i]->nodes[0]->type) {
        case NodeType::boolean: case NodeType::dot: case NodeType::nil: case NodeType::number: case NodeType::string:
          errorf("non executable command in pipeline stage " + std::to_string(i + 1));
        default: break;
      }
    }
  }

  Node* control(NodeType type, std::string_view context) {
    size_t nvars = m_vars.size();
    Node* pipe = pipeline(context, It::right_delim);
    if (type == NodeType::range) ++m_range_depth;
    if (++m_depth > k_max_depth) errorf("max expression depth exceeded");
    auto [list, next_node] = item_list();
    --m_depth;
    if (type == NodeType::range) --m_range_depth;
    Node* else_list = nullptr;
    if (is_else(next_node)) {
      if (context == "if" && peek().typ == It::if_) {
        next();
        else_list = m_arena->make(NodeType::list, next_node->pos);
        if (++m_depth > k_max_depth) errorf("max expression depth exceeded");
        m_scratch.push_back(control(NodeType::if_, "if"));
        else_list->nodes = take_scratch(m_scratch.size() - 1);
        --m_depth;
      } else if (context == "with" && peek().typ == It::with) {
        next();
        else_list = m_arena->make(NodeType::list, next_node->pos);
        if (++m_depth > k_max_depth) errorf("max expression depth exceeded");
        m_scratch.push_back(control(NodeType::with, "with"));
        else_list->nodes = take_scratch(m_scratch.size() - 1);
        --m_depth;
      } else {
        auto [el, nn] = item_list();
        if (!is_end(nn)) errorf("expected end; found " + node_string(nn));
        else_list = el;
      }
    }
    m_vars.resize(nvars);
    Node* n = m_arena->make(type, pipe->pos);
    n->pipe = pipe;
    n->branches = {list, else_list};
    return n;
  }

  Node* else_control() {
    const Item& p = peek();
    if (p.typ == It::if_ || p.typ == It::with) return make_else(p.pos);
    return make_else(expect(It::right_delim, "else").pos);
  }

  Node* end_control() { return make_end(expect(It::right_delim, "end").pos); }

  std::string template_name(const Item& token, std::string_view context) {
    if (token.typ != It::string && token.typ != It::raw_string) unexpected(token, context);
    std::string s;
    if (!unquote(token.val, s)) errorf("invalid syntax");
    return s;
  }

  Node* block_control() {
    const std::string_view context = "block clause";
    const Item& token = next();
    std::string name = template_name(token, context);
    Node* pipe = pipeline(context, It::right_delim);
    auto tree = new_tree(name);
    auto saved_vars = m_vars;
    m_vars = {"$"};
    auto [list, end] = item_list();
    if (!is_end(end)) errorf("unexpected " + node_string(end) + " in " + std::string(context));
    tree->root = list;
    add(tree, false);
    m_vars = saved_vars;
    Node* n = m_arena->make(NodeType::template_, token.pos);
    n->text = m_arena->keep(std::string_view(name));
    n->pipe = pipe;
    return n;
  }

  Node* template_control() {
    const std::string_view context = "template clause";
    const Item& token = next();
    std::string name = template_name(token, context);
    Node* pipe = nullptr;
    if (next().typ != It::right_delim) {
      backup();
      pipe = pipeline(context, It::right_delim);
    }
    Node* n = m_arena->make(NodeType::template_, token.pos);
    n->text = m_arena->keep(std::string_view(name));
    n->pipe = pipe;
    return n;
  }

  Node* command() {
    Node* cmd = m_arena->make(NodeType::command, peek().pos);
    const size_t mark = m_scratch.size();
    while (true) {
      Node* op = operand();
      if (op) m_scratch.push_back(op);
      // After an operand: the end of the command, or spaces and the next operand.
      const Item& t = next();
      if (t.typ == It::right_delim || t.typ == It::right_paren) {
        backup();
        break;
      }
      if (t.typ == It::pipe) break;
      if (!op || !t.after_space) unexpected(t, "operand");
      backup();
    }
    cmd->nodes = take_scratch(mark);
    if (cmd->nodes.empty()) errorf("empty command");
    return cmd;
  }

  Node* operand() {
    Node* node = term();
    if (!node) return nullptr;
    const Item& after = peek();
    if (after.typ != It::field || after.after_space) return node;
    if (node->type == NodeType::field || node->type == NodeType::variable) {
      // .a.b.c / $x.a.b: one node with every name (a chain node and two lists showed in profiles)
      Node* n = m_arena->make(node->type, peek().pos);
      n->idents = fields_after(node->idents);  // `node` is dropped
      return n;
    }
    Node* chain = m_arena->make(NodeType::chain, peek().pos);
    chain->pipe = node;
    chain->idents = fields_after({});
    switch (node->type) {
      case NodeType::boolean: case NodeType::string: case NodeType::number: case NodeType::nil:
      case NodeType::dot:
        errorf("unexpected . after term " + go_quote(node->to_string()));
      default: return chain;
    }
  }

  Node* term() {
    const Item& token = next();
    switch (token.typ) {
      case It::identifier: {
        const FuncDef* f = function(token.val);
        if (!f) errorf("function " + go_quote(token.val) + " not defined");
        Node* n = m_arena->make(NodeType::identifier, token.pos);
        n->text = token.val;
        n->func = f;
        return n;
      }
      case It::dot: return m_arena->make(NodeType::dot, token.pos);
      case It::nil: return m_arena->make(NodeType::nil, token.pos);
      case It::variable: {
        Node* n = m_arena->make(NodeType::variable, token.pos);
        size_t dot = token.val.find('.');
        const std::string_view head = token.val.substr(0, dot);
        n->idents = one_ident(head);
        bool found = false;
        for (auto& v : m_vars)
          if (v == head) found = true;
        if (!found) errorf("undefined variable " + go_quote(head));
        return n;
      }
      case It::field: {
        Node* n = m_arena->make(NodeType::field, token.pos);
        n->idents = one_ident(token.val.substr(1));
        return n;
      }
      case It::bool_: {
        Node* n = m_arena->make(NodeType::boolean, token.pos);
        n->constant = m_arena->keep(Value(token.val == "true"));
        n->text = token.val;
        return n;
      }
      case It::char_constant: case It::complex: case It::number: return number(token);
      case It::left_paren: {
        if (++m_depth > k_max_depth) errorf("max expression depth exceeded");
        Node* p = pipeline("parenthesized pipeline", It::right_paren);
        --m_depth;
        return p;
      }
      case It::string: case It::raw_string: {
        Node* n = m_arena->make(NodeType::string, token.pos);
        n->text = token.val;
        const Value*& constant = literal(token.val);
        if (!constant) {
          std::string s;
          if (!unquote(token.val, s)) errorf("invalid syntax");
          constant = m_arena->keep_string(std::move(s));
        }
        n->constant = constant;
        return n;
      }
      default: break;
    }
    backup();
    return nullptr;
  }

  Node* number(const Item& token) {
    Node* n = m_arena->make(NodeType::number, token.pos);
    n->text = token.val;
    const std::string text(token.val);
    if (token.typ == It::char_constant) {
      std::string s;
      if (!unquote(text, s) || s.empty()) errorf("malformed character constant: " + text);
      char32_t r;
      utf8::decode(s, 0, r);
      n->constant = m_arena->keep(Value(static_cast<std::int64_t>(r)));
      n->number_is_int = true;
      return n;
    }
    if (token.typ == It::complex) errorf("complex numbers are not supported: " + text);
    std::string clean;
    for (char c : text)
      if (c != '_') clean.push_back(c);
    bool has_prefix = false;
    {
      std::string_view t = clean;
      if (!t.empty() && (t[0] == '+' || t[0] == '-')) t.remove_prefix(1);
      has_prefix = t.size() > 1 && t[0] == '0' && std::string_view("xXoObB").find(t[1]) != std::string_view::npos;
    }
    // integer?
    std::string digits = clean;
    int base = 10;
    bool neg = false;
    {
      std::string_view t = digits;
      if (!t.empty() && (t[0] == '+' || t[0] == '-')) {
        neg = t[0] == '-';
        t.remove_prefix(1);
      }
      if (has_prefix) {
        char p = t[1];
        base = (p == 'x' || p == 'X') ? 16 : (p == 'o' || p == 'O') ? 8 : 2;
        t.remove_prefix(2);
      } else if (t.size() > 1 && t[0] == '0') {
        base = 8;
        t.remove_prefix(1);
      }
      digits = std::string(t);
    }
    bool is_intlike = !digits.empty() && digits.find_first_of(base == 16 ? "pP." : ".eEpP") == std::string::npos;
    if (is_intlike) {
      errno = 0;
      char* endp = nullptr;
      unsigned long long u = std::strtoull(digits.c_str(), &endp, base);
      if (*endp == '\0' && errno == 0) {
        if ((!neg && u <= static_cast<unsigned long long>(INT64_MAX)) ||
            (neg && u <= static_cast<unsigned long long>(INT64_MAX) + 1ULL)) {
          std::int64_t v = neg ? static_cast<std::int64_t>(0 - u) : static_cast<std::int64_t>(u);
          n->constant = m_arena->keep(Value(v));
          n->number_is_int = true;
          return n;
        }
        if (!neg) {
          n->number_overflows_int = true;
          n->constant = m_arena->keep(Value(static_cast<double>(u)));
          return n;
        }
      }
      if (base != 10 || *endp != '\0') errorf("illegal number syntax: " + go_quote(text));
      errorf("integer overflow: " + go_quote(text));
    }
    if (base == 16 && clean.find_first_of("pP") != std::string::npos) {
      // hexadecimal floating point ("0x1p-2")
      char* hend = nullptr;
      double hf = std::strtod(clean.c_str(), &hend);
      if (*hend != '\0') errorf("illegal number syntax: " + go_quote(text));
      n->constant = m_arena->keep(Value(hf));
      if (std::isfinite(hf) && hf == std::floor(hf) && std::fabs(hf) < 9.2e18) n->number_is_int = true;
      return n;
    }
    if (base == 16 || base == 2 || (base == 8 && has_prefix)) errorf("illegal number syntax: " + go_quote(text));
    errno = 0;
    char* endp = nullptr;
    double f = std::strtod(clean.c_str(), &endp);
    if (*endp != '\0' || clean.empty()) errorf("illegal number syntax: " + go_quote(text));
    n->constant = m_arena->keep(Value(f));
    if (std::isfinite(f) && f == std::floor(f) && std::fabs(f) < 9.2e18) n->number_is_int = true;
    return n;
  }
};

}  // namespace

Arena::~Arena() {
  while (m_last) std::free(std::exchange(m_last, m_last->previous));
}

void Arena::add_block(std::size_t size) {
  constexpr std::size_t header = alignof(std::max_align_t);  // keeps the block's data aligned
  static_assert(sizeof(Block) <= header);
  auto* block = static_cast<Block*>(std::malloc(header + size));
  if (!block) throw std::bad_alloc();
  block->previous = m_last;
  m_last = block;
  m_next = reinterpret_cast<std::uintptr_t>(block) + header;
  m_end = m_next + size;
}

void* Arena::allocate_in_new_block(std::size_t n, std::size_t align) {
  add_block(std::max(k_block, n + align));
  return allocate(n, align);
}

std::string Node::to_string() const {
  switch (type) {
    case NodeType::list: {
      std::string s;
      for (auto* n : nodes) s += n->to_string();
      return s;
    }
    case NodeType::text: return std::string(text);
    case NodeType::comment: return std::string(text);
    case NodeType::action: return "{{" + pipe->to_string() + "}}";
    case NodeType::pipe: {
      std::string s;
      if (!decls.empty()) {
        for (size_t i = 0; i < decls.size(); ++i) {
          if (i > 0) s += ", ";
          s += decls[i]->to_string();
        }
        s += is_assign ? " = " : " := ";
      }
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (i > 0) s += " | ";
        s += nodes[i]->to_string();
      }
      return s;
    }
    case NodeType::command: {
      std::string s;
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (i > 0) s += " ";
        if (nodes[i]->type == NodeType::pipe) s += "(" + nodes[i]->to_string() + ")";
        else s += nodes[i]->to_string();
      }
      return s;
    }
    case NodeType::field: {
      std::string s;
      for (auto i : idents) {
        s += '.';
        s += i;
      }
      return s;
    }
    case NodeType::variable: {
      std::string s;
      for (size_t i = 0; i < idents.size(); ++i) {
        if (i > 0) s += ".";
        s += idents[i];
      }
      return s;
    }
    case NodeType::chain: {
      std::string s = pipe->to_string();
      if (pipe->type == NodeType::pipe) s = "(" + s + ")";
      for (auto f : idents) {
        s += '.';
        s += f;
      }
      return s;
    }
    case NodeType::identifier: return std::string(text);
    case NodeType::dot: return ".";
    case NodeType::nil: return "nil";
    case NodeType::boolean: case NodeType::number: case NodeType::string: return std::string(text);
    case NodeType::if_: case NodeType::range: case NodeType::with: {
      const char* kw = type == NodeType::if_ ? "if" : type == NodeType::range ? "range" : "with";
      std::string s = std::string("{{") + kw + " " + pipe->to_string() + "}}" + branches.list->to_string();
      if (branches.else_list) s += "{{else}}" + branches.else_list->to_string();
      return s + "{{end}}";
    }
    case NodeType::template_:
      if (!pipe) return "{{template " + go_quote(text) + "}}";
      return "{{template " + go_quote(text) + " " + pipe->to_string() + "}}";
    case NodeType::break_: return "{{break}}";
    case NodeType::continue_: return "{{continue}}";
  }
  return "";
}

std::string Tree::location(const Node* n) const {
  size_t pos = static_cast<size_t>(n->pos);
  std::string_view t = std::string_view(*text).substr(0, std::min(pos, text->size()));
  size_t nl = t.rfind('\n');
  size_t col = nl == std::string_view::npos ? pos : pos - (nl + 1);
  size_t line = 1;
  for (char c : t)
    if (c == '\n') ++line;
  return parse_name + ":" + std::to_string(line) + ":" + std::to_string(col);
}

bool is_empty_tree(const Node* n) {
  if (!n) return true;
  switch (n->type) {
    case NodeType::list:
      for (auto* c : n->nodes)
        if (!is_empty_tree(c)) return false;
      return true;
    case NodeType::text:
      for (char c : n->text)
        if (!is_space(c) && c != '\v' && c != '\f') return false;
      return true;
    case NodeType::comment: return true;
    default: return false;
  }
}

std::vector<std::shared_ptr<Tree>> parse_template(const std::string& name, std::shared_ptr<const std::string> text,
                                                  const FunctionResolver& resolve) {
  // The items of the thread's previous parse make room for this one's: a vector per file,
  // grown as a dense file outran its estimate, was the largest of a render's allocations. A
  // parse never starts another (the resolver only looks functions up). Beyond a million items
  // (32 MiB) the room is given back.
  thread_local std::vector<Item> items;
  struct Release {
    std::vector<Item>& items;
    ~Release() {
      items.clear();
      if (items.capacity() > (std::size_t{1} << 20)) std::vector<Item>().swap(items);
    }
  } release{items};
  // Emptied here as well: gcc 12 left the release's clear() out of the path a parse error takes
  // (the next parse then read the failed one's items), once the text came in as a parameter.
  items.clear();
  Lexer lexer(*text, items);
  lexer.run();
  std::vector<std::shared_ptr<Tree>> out;
  Parser parser(name, std::move(text), items, resolve, std::make_shared<Arena>(Arena::first_block_for(items.size())), out);
  try {
    parser.parse_file();
  } catch (const ParseError& e) {
    throw Error(ErrorKind::invalid, e.msg);
  }
  return out;
}

}  // namespace emco::tmpl
