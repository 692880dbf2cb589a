#pragma once
// The tokenizer behind yaml::parse (internal to core/yaml). It follows
// libyaml's scanner as goyaml.v2 has it, token for token, because Helm's
// accept/refuse decisions and error lines come from there: simple keys
// (a key is only known to be one when its ':' arrives, so KEY and
// BLOCK-MAPPING-START tokens are inserted back into the queue), the indent
// stack, flow levels, and the 1024-character limit on implicit keys.

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/yaml/yaml.hpp"

namespace emco::yaml::detail {

struct Mark {
  std::size_t index = 0;  // characters from the start
  int line = 0;           // 0-based
  int column = 0;         // 0-based, characters
};

enum class Tok : std::uint8_t {
  stream_start,
  stream_end,
  version_directive,
  tag_directive,
  document_start,
  document_end,
  block_sequence_start,
  block_mapping_start,
  block_end,
  flow_sequence_start,
  flow_sequence_end,
  flow_mapping_start,
  flow_mapping_end,
  block_entry,
  flow_entry,
  key,
  value,
  alias,
  anchor,
  tag,
  scalar,
};

struct Token {
  Tok type = Tok::stream_start;
  Style style = Style::plain;
  Mark start, end;
  std::string value;   // scalar text, anchor/alias name, tag suffix, directive prefix
  std::string handle;  // tag and %TAG handle
  int major = 0, minor = 0;
};

[[noreturn]] void scanner_error(const Mark& context, const Mark& problem, std::string message);

class Scanner {
public:
  explicit Scanner(std::string_view text);

  // The next token, without consuming it. Throws ParseError.
  Token& peek();
  void next();  // consumes the peeked token

private:
  std::string_view m_in;
  std::size_t m_pos = 0;
  Mark m_mark;

  std::deque<Token> m_tokens;
  std::size_t m_tokens_parsed = 0;
  bool m_token_available = false;
  bool m_stream_start_produced = false;
  bool m_stream_end_produced = false;

  int m_indent = -1;
  std::vector<int> m_indents;
  int m_flow_level = 0;
  bool m_simple_key_allowed = false;
  struct SimpleKey {
    bool possible = false;
    bool required = false;
    std::size_t token_number = 0;
    Mark mark;
  };
  std::vector<SimpleKey> m_simple_keys;
  std::unordered_map<std::size_t, std::size_t> m_simple_keys_by_tok;

  // character classes at byte offset k from the current position
  char at(std::size_t k = 0) const { return m_pos + k < m_in.size() ? m_in[m_pos + k] : '\0'; }
  bool is_z(std::size_t k = 0) const { return m_pos + k >= m_in.size(); }
  // Inline for the ASCII breaks: asked at nearly every character, a call each was 3% of parsing
  // a large values file. The rest of YAML's breaks (NEL, LS, PS) start with 0xC2 or 0xE2.
  bool is_break(std::size_t k = 0) const {
    const char c = at(k);
    return c == '\n' || c == '\r' || ((c == '\xC2' || c == '\xE2') && is_unicode_break(k));
  }
  bool is_unicode_break(std::size_t k) const;
  bool is_blank(std::size_t k = 0) const { return at(k) == ' ' || at(k) == '\t'; }
  bool is_breakz(std::size_t k = 0) const { return is_z(k) || is_break(k); }
  bool is_blankz(std::size_t k = 0) const { return is_blank(k) || is_breakz(k); }
  bool is_alpha(std::size_t k = 0) const;
  // Bytes of the current character (an ASCII one inline: a call per character showed in profiles).
  std::size_t width() const {
    const auto c = static_cast<unsigned char>(at());
    return c < 0x80 ? 1 : wide_width(c);
  }
  static std::size_t wide_width(unsigned char lead);

  void skip();
  void skip_line();
  void skip_to_break();  // skip() up to the next line break or the end of the input
  void read(std::string& s);
  void read_line(std::string& s);

  void fetch_more_tokens();
  void fetch_next_token();
  bool simple_key_is_valid(SimpleKey& key);
  void save_simple_key();
  void remove_simple_key();
  void increase_flow_level();
  void decrease_flow_level();
  void roll_indent(int column, std::ptrdiff_t number, Tok type, const Mark& mark);
  void unroll_indent(int column);
  void insert(std::ptrdiff_t at, Token t);
  void push(Tok type, const Mark& start, const Mark& end);

  void fetch_stream_start();
  void fetch_stream_end();
  void fetch_directive();
  void fetch_document_indicator(Tok type);
  void fetch_flow_collection_start(Tok type);
  void fetch_flow_collection_end(Tok type);
  void fetch_flow_entry();
  void fetch_block_entry();
  void fetch_key();
  void fetch_value();
  void fetch_anchor(Tok type);
  void fetch_tag();
  void fetch_block_scalar(bool literal);
  void fetch_flow_scalar(bool single);
  void fetch_plain_scalar();

  void scan_to_next_token();
  Token scan_directive();
  std::string scan_directive_name(const Mark& start);
  int scan_version_number(const Mark& start);
  Token scan_anchor(Tok type);
  Token scan_tag();
  std::string scan_tag_handle(bool directive, const Mark& start);
  std::string scan_tag_uri(bool directive, std::string_view head, const Mark& start);
  void scan_uri_escapes(const Mark& start, std::string& s);
  Token scan_block_scalar(bool literal);
  void scan_block_scalar_breaks(int& indent, std::string& breaks, const Mark& start, Mark& end);
  Token scan_flow_scalar(bool single);
  Token scan_plain_scalar();
};

}  // namespace emco::yaml::detail
