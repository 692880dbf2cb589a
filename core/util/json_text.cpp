#include "core/util/json_text.hpp"

namespace emco {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

void append_indented_json(std::string& out, std::string_view s, int indent, int level) {
  auto newline = [&](int depth) {
    out += '\n';
    out.append(static_cast<size_t>(depth * indent), ' ');
  };
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    switch (c) {
      case ' ': case '\t': case '\n': case '\r':
        break;
      case '"': {
        // Copy the string with its escapes untouched.
        size_t start = i++;
        while (i < s.size() && s[i] != '"') i += s[i] == '\\' ? 2 : 1;
        out.append(s.substr(start, i - start + 1));
        break;
      }
      case '{': case '[': {
        char close = c == '{' ? '}' : ']';
        out += c;
        size_t j = i + 1;
        while (j < s.size() && is_space(s[j])) ++j;
        if (j < s.size() && s[j] == close) {  // empty container stays on one line
          out += close;
          i = j;
        } else {
          newline(++level);
        }
        break;
      }
      case '}': case ']':
        newline(--level);
        out += c;
        break;
      case ',':
        out += ',';
        newline(level);
        break;
      case ':':
        out += ": ";
        break;
      default:
        out += c;  // numbers, true, false, null
    }
  }
}

}  // namespace emco
