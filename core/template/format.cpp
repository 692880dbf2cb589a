#include "core/template/format.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/util/utf8.hpp"

namespace emco::tmpl {

namespace {

// Shortest round-trip digits of |f| (no sign): digits "d1d2...dn" and decimal point position dp
// such that value = 0.d1d2...dn * 10^dp.
// The shortest decimal digits that read back as `f` (as a float32 when `bit_size` is 32), and
// the decimal point's position.
void shortest_digits(double f, std::string& digits, int& dp, int bit_size = 64) {
  char buf[64];
  auto res = bit_size == 32
                 ? std::to_chars(buf, buf + sizeof buf, std::fabs(static_cast<float>(f)), std::chars_format::scientific)
                 : std::to_chars(buf, buf + sizeof buf, std::fabs(f), std::chars_format::scientific);
  std::string_view s(buf, static_cast<size_t>(res.ptr - buf));
  auto e = s.find('e');
  std::string_view mant = s.substr(0, e);
  int exp = std::atoi(std::string(s.substr(e + 1)).c_str());
  digits.clear();
  for (char c : mant)
    if (c != '.') digits.push_back(c);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  dp = exp + 1;
  if (digits == "0") dp = 1;
}

std::string exp_suffix(int exp) {
  std::string out = exp < 0 ? "e-" : "e+";
  int a = exp < 0 ? -exp : exp;
  if (a < 10) out.push_back('0');
  out += std::to_string(a);
  return out;
}

bool is_print_rune(std::uint32_t r) {
  // strconv.IsPrint approximation: ASCII graphic + space, and non-control Unicode outside the
  // C1 range, surrogates, private noncharacters and a few format characters.
  if (r < 0x20 || r == 0x7F) return false;
  if (r < 0x7F) return true;
  if (r >= 0x80 && r < 0xA0) return false;
  if (r == 0xAD) return false;
  if (r >= 0x2028 && r <= 0x202E) return false;
  if (r >= 0x200B && r <= 0x200F) return false;
  if (r >= 0x2060 && r <= 0x206F) return false;
  if (r == 0xFEFF || r == 0xFFFE || r == 0xFFFF || r == 0xFFFD + 0x100) return false;
  if (r >= 0xE000 && r <= 0xF8FF) return false;
  return r <= 0x10FFFF;
}

void quote_to(std::string& out, std::string_view s, char q, bool ascii_only) {
  static const char* hex = "0123456789abcdef";
  out.push_back(q);
  for (size_t i = 0; i < s.size();) {
    char32_t r;
    size_t w = utf8::decode(s, i, r);
    if (w == 1 && r == utf8::k_replacement) {
      out += "\\x";
      out.push_back(hex[static_cast<unsigned char>(s[i]) >> 4]);
      out.push_back(hex[static_cast<unsigned char>(s[i]) & 15]);
      i += 1;
      continue;
    }
    i += w;
    if (r == static_cast<char32_t>(q) || r == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(r));
      continue;
    }
    if (ascii_only ? (r < 0x7F && is_print_rune(r)) : is_print_rune(r)) {
      utf8::append(out, r);
      continue;
    }
    switch (r) {
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\v': out += "\\v"; break;
      default:
        if (r < ' ' || r == 0x7F) {
          out += "\\x";
          out.push_back(hex[r >> 4]);
          out.push_back(hex[r & 15]);
        } else if (r < 0x10000) {
          out += "\\u";
          for (int k = 12; k >= 0; k -= 4) out.push_back(hex[(r >> k) & 15]);
        } else {
          out += "\\U";
          for (int k = 28; k >= 0; k -= 4) out.push_back(hex[(r >> k) & 15]);
        }
    }
  }
  out.push_back(q);
}

struct Flags {
  bool plus = false, minus = false, sharp = false, space = false, zero = false;
  bool plus_v = false, sharp_v = false;
  bool wid_present = false, prec_present = false;
  int wid = 0, prec = 0;
};

class Printer {
public:
  std::string buf;
  Flags f;

  void write_padding(size_t n, bool zeros) { buf.append(n, zeros ? '0' : ' '); }
  void pad(std::string_view s) {
    if (!f.wid_present || f.wid == 0) {
      buf += s;
      return;
    }
    size_t width = utf8::count(s);
    if (static_cast<size_t>(f.wid) <= width) {
      buf += s;
      return;
    }
    size_t n = static_cast<size_t>(f.wid) - width;
    if (!f.minus) {
      write_padding(n, f.zero);
      buf += s;
    } else {
      buf += s;
      write_padding(n, false);
    }
  }

  void fmt_integer(std::uint64_t u, bool negative, int base, char verb, bool upper) {
    std::string digits;
    const char* dig = upper ? "0123456789ABCDEFX" : "0123456789abcdefx";
    int prec = -1;
    if (f.prec_present) {
      prec = f.prec;
      if (prec == 0 && u == 0) {
        bool oldzero = f.zero;
        f.zero = false;
        pad("");
        f.zero = oldzero;
        return;
      }
    } else if (f.zero && f.wid_present && !f.minus) {
      prec = f.wid;
      if (negative || f.plus || f.space) prec--;
    }
    do {
      digits.push_back(dig[u % static_cast<unsigned>(base)]);
      u /= static_cast<unsigned>(base);
    } while (u);
    while (prec > 0 && static_cast<int>(digits.size()) < prec) digits.push_back('0');
    if (f.sharp) {
      if (base == 2) digits += "b0";
      else if (base == 8 && digits.back() != '0') digits.push_back('0');
      else if (base == 16) {
        digits.push_back(dig[16]);
        digits.push_back('0');
      }
    }
    if (verb == 'O') digits += "o0";
    if (negative) digits.push_back('-');
    else if (f.plus) digits.push_back('+');
    else if (f.space) digits.push_back(' ');
    std::string s(digits.rbegin(), digits.rend());
    bool oldzero = f.zero;
    f.zero = false;
    pad(s);
    f.zero = oldzero;
  }

  void fmt_float(double v, char verb, int prec) {
    if (f.prec_present) prec = f.prec;
    std::string num;
    if (std::isnan(v)) {
      num = "NaN";
    } else if (std::isinf(v)) {
      num = v < 0 ? "-Inf" : "+Inf";
    } else if (prec < 0 && (verb == 'g' || verb == 'G')) {
      num = format_float_g(v);
      if (verb == 'G')
        for (auto& c : num)
          if (c == 'e') c = 'E';
    } else {
      char fmtbuf[16];
      std::snprintf(fmtbuf, sizeof fmtbuf, "%%.%d%c", prec < 0 ? 6 : prec, verb == 'F' ? 'f' : verb);
      char out[512];
      int n = std::snprintf(out, sizeof out, fmtbuf, v);
      if (n < 0 || n >= static_cast<int>(sizeof out)) n = 0;
      num.assign(out, static_cast<size_t>(n));
    }
    if (num[0] != '-' && num[0] != '+') num.insert(num.begin(), '+');
    if (f.space && num[0] == '+' && !f.plus) num[0] = ' ';
    if (num[1] == 'I' || num[1] == 'N') {
      bool oldzero = f.zero;
      f.zero = false;
      if (num[1] == 'N' && !f.space && !f.plus) num.erase(0, 1);
      pad(num);
      f.zero = oldzero;
      return;
    }
    if (f.plus || num[0] != '+') {
      if (f.zero && !f.minus && f.wid_present && f.wid > static_cast<int>(num.size())) {
        buf.push_back(num[0]);
        write_padding(static_cast<size_t>(f.wid) - num.size(), true);
        buf.append(num, 1);
        return;
      }
      pad(num);
      return;
    }
    pad(std::string_view(num).substr(1));
  }

  void fmt_string(std::string_view s, char verb) {
    switch (verb) {
      case 'v':
        if (f.sharp_v) {
          std::string q;
          quote_to(q, s, '"', false);
          pad(q);
          return;
        }
        [[fallthrough]];
      case 's': {
        if (f.prec_present) {
          size_t i = 0;
          int n = 0;
          char32_t r;
          while (i < s.size() && n < f.prec) {
            i += utf8::decode(s, i, r);
            ++n;
          }
          s = s.substr(0, i);
        }
        pad(s);
        return;
      }
      case 'q': {
        std::string q;
        if (f.sharp && s.find('`') == std::string_view::npos &&
            [&] {
              for (char c : s)
                if ((static_cast<unsigned char>(c) < ' ' && c != '\t') || c == 0x7F) return false;
              return true;
            }()) {
          q = "`" + std::string(s) + "`";
        } else {
          quote_to(q, s, '"', f.plus);
        }
        pad(q);
        return;
      }
      case 'x':
      case 'X': {
        const char* dig = verb == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
        std::string out;
        size_t len = s.size();
        if (f.prec_present && static_cast<size_t>(f.prec) < len) len = static_cast<size_t>(f.prec);
        for (size_t i = 0; i < len; ++i) {
          if (f.space && i > 0) out.push_back(' ');
          if (f.sharp && (f.space || i == 0)) {
            out.push_back('0');
            out.push_back(verb);
          }
          unsigned char c = static_cast<unsigned char>(s[i]);
          out.push_back(dig[c >> 4]);
          out.push_back(dig[c & 15]);
        }
        pad(out);
        return;
      }
      default: bad_verb(verb, Value(std::string(s)));
    }
  }

  void bad_verb(char verb, const Value& v) {
    buf += "%!";
    buf.push_back(verb);
    buf.push_back('(');
    if (v.is_null()) {
      buf += "<nil>";
    } else {
      buf += v.go_type();
      buf.push_back('=');
      Flags saved = f;
      f = Flags{};
      print_arg(v, 'v', 0);
      f = saved;
    }
    buf.push_back(')');
  }

  void print_arg(const Value& v, char verb, int depth) {
    if (verb == 'T' && depth == 0) {
      fmt_string(v.is_null() ? "<nil>" : v.go_type(), 's');
      return;
    }
    switch (v.kind()) {
      case Kind::null:
        if (verb == 'v' || (depth > 0)) pad("<nil>");
        else bad_verb(verb, v);
        return;
      case Kind::boolean:
        if (verb == 't' || verb == 'v') pad(v.as_bool() ? "true" : "false");
        else bad_verb(verb, v);
        return;
      case Kind::integer: {
        std::int64_t i = v.as_int();
        bool neg = i < 0;
        std::uint64_t u = neg ? (~static_cast<std::uint64_t>(i) + 1) : static_cast<std::uint64_t>(i);
        switch (verb) {
          case 'v':
            if (f.sharp_v) {
              bool s = f.sharp;
              f.sharp = false;
              fmt_integer(u, neg, 10, 'd', false);
              f.sharp = s;
            } else {
              fmt_integer(u, neg, 10, 'd', false);
            }
            return;
          case 'd': fmt_integer(u, neg, 10, verb, false); return;
          case 'b': fmt_integer(u, neg, 2, verb, false); return;
          case 'o': case 'O': fmt_integer(u, neg, 8, verb, false); return;
          case 'x': fmt_integer(u, neg, 16, verb, false); return;
          case 'X': fmt_integer(u, neg, 16, verb, true); return;
          case 'c': {
            std::string s;
            utf8::append(s, static_cast<char32_t>(i < 0 || i > 0x10FFFF ? 0xFFFD : i));
            pad(s);
            return;
          }
          case 'q': {
            std::string s, q;
            utf8::append(s, static_cast<char32_t>(i < 0 || i > 0x10FFFF ? 0xFFFD : i));
            quote_to(q, s, '\'', f.plus);
            pad(q);
            return;
          }
          case 'U': {
            char tmp[32];
            std::snprintf(tmp, sizeof tmp, "U+%04llX", static_cast<unsigned long long>(u));
            pad(tmp);
            return;
          }
          default: bad_verb(verb, v); return;
        }
      }
      case Kind::floating:
        switch (verb) {
          case 'v': fmt_float(v.as_float(), 'g', -1); return;
          case 'g': case 'G': fmt_float(v.as_float(), verb, -1); return;
          case 'f': case 'F': case 'e': case 'E': fmt_float(v.as_float(), verb, 6); return;
          default: bad_verb(verb, v); return;
        }
      case Kind::string: fmt_string(v.as_string(), verb); return;
      case Kind::list: {
        if (f.sharp_v) {
          buf += "[]interface {}{";
          bool first = true;
          for (const auto& e : v.as_list()) {
            if (!first) buf += ", ";
            first = false;
            print_arg(e, verb, depth + 1);
          }
          buf.push_back('}');
          return;
        }
        buf.push_back('[');
        bool first = true;
        for (const auto& e : v.as_list()) {
          if (!first) buf.push_back(' ');
          first = false;
          print_arg(e, verb, depth + 1);
        }
        buf.push_back(']');
        return;
      }
      case Kind::map: {
        buf += f.sharp_v ? "map[string]interface {}{" : "map[";
        bool first = true;
        for (const auto& [k, e] : v.as_map()) {
          if (!first) buf += f.sharp_v ? ", " : " ";
          first = false;
          print_arg(Value(k), verb, depth + 1);
          buf.push_back(':');
          print_arg(e, verb, depth + 1);
        }
        buf.push_back(f.sharp_v ? '}' : ']');
        return;
      }
      case Kind::object: {
        if (auto str = v.as_object()->go_string()) {
          if (verb == 'v' || verb == 's') fmt_string(*str, 's');
          else if (verb == 'q' || verb == 'x' || verb == 'X') fmt_string(*str, verb);
          else bad_verb(verb, Value(*str));
          return;
        }
        auto d = v.as_object()->data();
        if (d) {
          print_arg(*d, verb, depth);
        } else {
          pad("{" + v.as_object()->type_name() + "}");
        }
        return;
      }
    }
  }
};

bool parse_num(std::string_view s, size_t& i, int& out) {
  size_t start = i;
  long long n = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    n = n * 10 + (s[i] - '0');
    if (n > 1000000) return false;
    ++i;
  }
  out = static_cast<int>(n);
  return i > start;
}

}  // namespace

std::string format_float_g(double f, int bit_size) {
  if (bit_size == 32) f = static_cast<float>(f);
  if (std::isnan(f)) return "NaN";
  if (std::isinf(f)) return f < 0 ? "-Inf" : "+Inf";
  std::string digits;
  int dp;
  shortest_digits(f, digits, dp, bit_size);
  std::string out;
  if (std::signbit(f)) out.push_back('-');
  int exp = dp - 1;
  if (exp < -4 || exp >= 6) {
    // %e with shortest digits (Go uses eprec 6 for the shortest form)
    out.push_back(digits[0]);
    if (digits.size() > 1) {
      out.push_back('.');
      out.append(digits, 1);
    }
    out += exp_suffix(exp);
    return out;
  }
  if (dp <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-dp), '0');
    out += digits;
  } else if (static_cast<size_t>(dp) >= digits.size()) {
    out += digits;
    out.append(static_cast<size_t>(dp) - digits.size(), '0');
  } else {
    out.append(digits, 0, static_cast<size_t>(dp));
    out.push_back('.');
    out.append(digits, static_cast<size_t>(dp));
  }
  return out;
}

std::string format_json_float(double f) {
  double a = std::fabs(f);
  std::string digits;
  int dp;
  shortest_digits(f, digits, dp);
  std::string out;
  if (std::signbit(f) && f != 0) out.push_back('-');
  if (a != 0 && (a < 1e-6 || a >= 1e21)) {
    int exp = dp - 1;
    out.push_back(digits[0]);
    if (digits.size() > 1) {
      out.push_back('.');
      out.append(digits, 1);
    }
    out.push_back('e');
    out.push_back(exp < 0 ? '-' : '+');
    out += std::to_string(exp < 0 ? -exp : exp);
    return out;
  }
  if (dp <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-dp), '0');
    out += digits;
  } else if (static_cast<size_t>(dp) >= digits.size()) {
    out += digits;
    out.append(static_cast<size_t>(dp) - digits.size(), '0');
  } else {
    out.append(digits, 0, static_cast<size_t>(dp));
    out.push_back('.');
    out.append(digits, static_cast<size_t>(dp));
  }
  return out;
}

void append_value(std::string& out, const Value& v) {
  switch (v.kind()) {
    case Kind::string: out += v.as_string(); return;
    case Kind::integer: out += std::to_string(v.as_int()); return;
    case Kind::boolean: out += v.as_bool() ? "true" : "false"; return;
    case Kind::floating: out += format_float_g(v.as_float()); return;
    default: {
      Printer p;
      p.print_arg(v, 'v', 0);
      out += p.buf;
    }
  }
}

std::string format_value(const Value& v) {
  std::string out;
  append_value(out, v);
  return out;
}

std::string go_sprint(const std::vector<Value>& args) {
  std::string out;
  bool prev_string = false;
  for (size_t i = 0; i < args.size(); ++i) {
    bool is_string = args[i].is_string();
    if (i > 0 && !is_string && !prev_string) out.push_back(' ');
    append_value(out, args[i]);
    prev_string = is_string;
  }
  return out;
}

std::string go_sprintln(const std::vector<Value>& args) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) out.push_back(' ');
    append_value(out, args[i]);
  }
  out.push_back('\n');
  return out;
}

std::string go_quote(std::string_view s) {
  std::string out;
  quote_to(out, s, '"', false);
  return out;
}

std::string go_sprintf(std::string_view format, const std::vector<Value>& a) {
  Printer p;
  size_t end = format.size();
  size_t arg_num = 0;
  bool reordered = false;
  size_t i = 0;
  auto arg_number = [&](size_t& argn, size_t& pos, bool& ok) -> bool {
    // [n] explicit argument index
    if (pos >= end || format[pos] != '[') return false;
    reordered = true;
    size_t j = pos + 1;
    int n = 0;
    if (parse_num(format, j, n) && j < end && format[j] == ']' && n >= 1 && static_cast<size_t>(n) <= a.size()) {
      argn = static_cast<size_t>(n - 1);
      pos = j + 1;
      return true;
    }
    ok = false;
    size_t close = format.find(']', pos);
    pos = close == std::string_view::npos ? end : close + 1;
    return true;
  };
  while (i < end) {
    size_t lasti = i;
    while (i < end && format[i] != '%') ++i;
    p.buf.append(format.substr(lasti, i - lasti));
    if (i >= end) break;
    ++i;
    p.f = Flags{};
    bool good_arg = true;
    for (; i < end; ++i) {
      char c = format[i];
      if (c == '#') p.f.sharp = true;
      else if (c == '0') p.f.zero = !p.f.minus;
      else if (c == '+') p.f.plus = true;
      else if (c == '-') {
        p.f.minus = true;
        p.f.zero = false;
      } else if (c == ' ') p.f.space = true;
      else break;
    }
    bool after_index = arg_number(arg_num, i, good_arg);
    if (i < end && format[i] == '*') {
      ++i;
      if (arg_num < a.size() && a[arg_num].is_int()) {
        std::int64_t w = a[arg_num].as_int();
        p.f.wid_present = w >= -1000000 && w <= 1000000;
        p.f.wid = static_cast<int>(w);
        if (p.f.wid < 0) {
          p.f.wid = -p.f.wid;
          p.f.minus = true;
          p.f.zero = false;
        }
      }
      if (arg_num < a.size()) ++arg_num;
      if (!p.f.wid_present) p.buf += "%!(BADWIDTH)";
      after_index = false;
    } else {
      p.f.wid_present = parse_num(format, i, p.f.wid);
      if (after_index && p.f.wid_present) good_arg = false;
    }
    if (i + 1 < end && format[i] == '.') {
      ++i;
      if (after_index) good_arg = false;
      after_index = arg_number(arg_num, i, good_arg);
      if (i < end && format[i] == '*') {
        ++i;
        if (arg_num < a.size() && a[arg_num].is_int()) {
          std::int64_t pr = a[arg_num].as_int();
          p.f.prec_present = pr >= 0 && pr <= 1000000;
          p.f.prec = p.f.prec_present ? static_cast<int>(pr) : 0;
        }
        if (arg_num < a.size()) ++arg_num;
        if (!p.f.prec_present) p.buf += "%!(BADPREC)";
        after_index = false;
      } else {
        p.f.prec_present = true;
        if (!parse_num(format, i, p.f.prec)) p.f.prec = 0;
      }
    }
    if (!after_index) after_index = arg_number(arg_num, i, good_arg);
    if (i >= end) {
      p.buf += "%!(NOVERB)";
      break;
    }
    char32_t verb_rune;
    i += utf8::decode(format, i, verb_rune);
    char verb = verb_rune < 0x80 ? static_cast<char>(verb_rune) : '?';
    if (verb == '%') {
      p.buf.push_back('%');
    } else if (!good_arg) {
      p.buf += "%!";
      utf8::append(p.buf, verb_rune);
      p.buf += "(BADINDEX)";
    } else if (arg_num >= a.size()) {
      p.buf += "%!";
      utf8::append(p.buf, verb_rune);
      p.buf += "(MISSING)";
    } else {
      if (verb == 'v') {
        p.f.sharp_v = p.f.sharp;
        p.f.sharp = false;
        p.f.plus_v = p.f.plus;
        p.f.plus = false;
      }
      if (verb_rune >= 0x80) {
        p.buf += "%!";
        utf8::append(p.buf, verb_rune);
        p.buf += "(";
        p.buf += a[arg_num].is_null() ? "<nil>" : a[arg_num].go_type() + "=" + format_value(a[arg_num]);
        p.buf += ")";
      } else {
        p.print_arg(a[arg_num], verb, 0);
      }
      ++arg_num;
    }
  }
  if (!reordered && arg_num < a.size()) {
    p.f = Flags{};
    p.buf += "%!(EXTRA ";
    for (size_t k = arg_num; k < a.size(); ++k) {
      if (k > arg_num) p.buf += ", ";
      if (a[k].is_null()) {
        p.buf += "<nil>";
      } else {
        p.buf += a[k].go_type();
        p.buf.push_back('=');
        p.print_arg(a[k], 'v', 0);
      }
    }
    p.buf.push_back(')');
  }
  return p.buf;
}

}  // namespace emco::tmpl
