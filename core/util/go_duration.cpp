// Go's time.ParseDuration and Duration.String(), as the Go standard library does them.
#include "core/util/go_duration.hpp"

#include <cctype>
#include <cstdlib>

namespace emco {

namespace {

constexpr std::int64_t k_ns = 1, k_us = 1000, k_ms = 1000000, k_s = 1000000000LL, k_min = 60 * k_s, k_hour = 60 * k_min;

std::string pad(std::int64_t v, int width) {
  std::string s = std::to_string(v);
  while (static_cast<int>(s.size()) < width) s.insert(s.begin(), '0');
  return s;
}

}  // namespace

// time.Duration.String()
std::string go_duration_string(std::int64_t d) {
  if (d == 0) return "0s";
  bool neg = d < 0;
  std::uint64_t u = neg ? static_cast<std::uint64_t>(-(d + 1)) + 1 : static_cast<std::uint64_t>(d);
  std::string out;
  if (u < static_cast<std::uint64_t>(k_s)) {
    const char* unit;
    std::uint64_t div;
    if (u < static_cast<std::uint64_t>(k_us)) {
      unit = "ns";
      div = 1;
    } else if (u < static_cast<std::uint64_t>(k_ms)) {
      unit = "\xC2\xB5s";
      div = static_cast<std::uint64_t>(k_us);
    } else {
      unit = "ms";
      div = static_cast<std::uint64_t>(k_ms);
    }
    std::string whole = std::to_string(u / div);
    std::string frac = div > 1 ? pad(static_cast<std::int64_t>(u % div), static_cast<int>(std::to_string(div).size() - 1)) : "";
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    out = whole + (frac.empty() ? "" : "." + frac) + unit;
  } else {
    std::uint64_t secs = u / static_cast<std::uint64_t>(k_s);
    std::uint64_t ns = u % static_cast<std::uint64_t>(k_s);
    std::string frac = pad(static_cast<std::int64_t>(ns), 9);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    std::string s = std::to_string(secs % 60) + (frac.empty() ? "" : "." + frac) + "s";
    std::uint64_t mins = secs / 60;
    if (mins > 0) {
      s = std::to_string(mins % 60) + "m" + s;
      std::uint64_t hours = mins / 60;
      if (hours > 0) s = std::to_string(hours) + "h" + s;
    }
    out = s;
  }
  return neg ? "-" + out : out;
}

// time.ParseDuration
bool parse_go_duration(const std::string& in, std::int64_t& out) {
  std::string s = in;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s = s.substr(1);
  }
  if (s == "0") {
    out = 0;
    return true;
  }
  if (s.empty()) return false;
  long double total = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t st = i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (st == i) return false;
    long double v = std::strtold(s.substr(st, i - st).c_str(), nullptr);
    size_t us = i;
    while (i < s.size() && !std::isdigit(static_cast<unsigned char>(s[i])) && s[i] != '.') ++i;
    std::string unit = s.substr(us, i - us);
    std::int64_t mult;
    if (unit == "ns") mult = k_ns;
    else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") mult = k_us;
    else if (unit == "ms") mult = k_ms;
    else if (unit == "s") mult = k_s;
    else if (unit == "m") mult = k_min;
    else if (unit == "h") mult = k_hour;
    else return false;
    total += v * static_cast<long double>(mult);
  }
  if (total > 9.2e18L) return false;
  out = static_cast<std::int64_t>(neg ? -total : total);
  return true;
}

}  // namespace emco
