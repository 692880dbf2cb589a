#pragma once
// The one UTF-8 helper, with Go's unicode/utf8 semantics (the template engine, Sprig, Helm
// and the YAML printer must treat bad bytes exactly as Go does).
//
// Invalid input: a byte that does not start a well-formed sequence (a stray continuation
// byte, a truncated sequence, an overlong form, a surrogate, a value past U+10FFFF) decodes
// as U+FFFD with width 1, and counts as one rune.

#include <cstddef>
#include <string>
#include <string_view>

namespace emco::utf8 {

constexpr char32_t k_replacement = 0xFFFD;

// utf8.DecodeRuneInString(s[i:]): the rune at byte i and its width in bytes (1 to 4).
// Requires i < s.size().
std::size_t decode(std::string_view s, std::size_t i, char32_t& rune);
// utf8.AppendRune: surrogates and values past U+10FFFF are written as U+FFFD.
void append(std::string& out, char32_t rune);
// utf8.RuneCountInString.
std::size_t count(std::string_view s);
// The length a lead byte announces (1 for ASCII, 2 to 4), or 0 for a continuation byte or
// a byte that starts no sequence; says nothing about the bytes that follow.
std::size_t sequence_length(unsigned char lead);
// utf8.ValidString, and the byte offset of the first invalid sequence (npos when valid).
bool valid(std::string_view s);
std::size_t invalid_offset(std::string_view s);

}  // namespace emco::utf8
