// Sprig's date functions over a time.Time object: Go's layout formatting/parsing, durations.
// The clock comes from Options::clock (emco::system_clock() when unset) so tests can pin it.
#include <cmath>
#include <cstring>
#include <ctime>

#include "core/template/format.hpp"
#include "core/template/funcs.hpp"
#include "core/util/clock.hpp"
#include "core/util/error.hpp"
#include "core/util/go_duration.hpp"

namespace emco::tmpl {

namespace {

using Args = std::vector<Value>;

constexpr std::int64_t k_s = 1000000000LL, k_min = 60 * k_s, k_hour = 60 * k_min;

struct Civil {
  int year, month, day, hour, min, sec, yday, wday;
};

// days since 1970-01-01 -> civil date (Howard Hinnant's algorithm)
void civil_from_days(std::int64_t z, int& y, int& m, int& d) {
  z += 719468;
  std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  std::int64_t doe = z - era * 146097;
  std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  std::int64_t yy = yoe + era * 400;
  std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  std::int64_t mp = (5 * doy + 2) / 153;
  d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  y = static_cast<int>(yy + (m <= 2));
}

std::int64_t days_from_civil(std::int64_t y, int m, int d) {
  y -= m <= 2;
  std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  std::int64_t yoe = y - era * 400;
  std::int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

class TimeObject final : public Object {
public:
  TimeObject(std::int64_t sec, std::int64_t nsec, int offset, std::string zone)
      : m_sec(sec), m_nsec(nsec), m_offset(offset), m_zone(std::move(zone)) {}
  std::string type_name() const override { return "time.Time"; }
  bool has_method(std::string_view n) const override {
    return n == "Unix" || n == "UnixMilli" || n == "UnixNano" || n == "Year" || n == "Day" || n == "Hour" ||
           n == "Minute" || n == "Second" || n == "YearDay" || n == "Format" || n == "UTC" || n == "String" ||
           n == "Nanosecond" || n == "Month" || n == "Weekday";
  }
  Value call_method(std::string_view n, const std::vector<Value>& a) const override {
    Civil c = civil();
    if (n == "Unix") return Value::integer(m_sec, IntType::int64);
    if (n == "UnixMilli") return Value::integer(m_sec * 1000 + m_nsec / 1000000, IntType::int64);
    if (n == "UnixNano") return Value::integer(m_sec * k_s + m_nsec, IntType::int64);
    if (n == "Year") return Value(c.year);
    if (n == "Day") return Value(c.day);
    if (n == "Hour") return Value(c.hour);
    if (n == "Minute") return Value(c.min);
    if (n == "Second") return Value(c.sec);
    if (n == "Nanosecond") return Value(m_nsec);
    if (n == "YearDay") return Value(c.yday);
    if (n == "Month") return Value(month_name(c.month));
    if (n == "Weekday") return Value(day_name(c.wday));
    if (n == "UTC") return Value(std::shared_ptr<const Object>(std::make_shared<TimeObject>(m_sec, m_nsec, 0, "UTC")));
    if (n == "String") return Value(go_string_value());
    if (n == "Format") {
      if (a.size() != 1 || !a[0].is_string()) func_fail("wrong number of args for Format: want 1 got " + std::to_string(a.size()));
      return Value(format(a[0].as_string()));
    }
    func_fail("can't call method " + std::string(n));
  }
  std::optional<std::string> go_string() const override { return go_string_value(); }

  std::int64_t sec() const { return m_sec; }
  std::int64_t nsec() const { return m_nsec; }
  int offset() const { return m_offset; }
  const std::string& zone() const { return m_zone; }

  static std::string month_name(int m) {
    static const char* names[] = {"January", "February", "March", "April", "May", "June", "July",
                                  "August", "September", "October", "November", "December"};
    return names[(m - 1) % 12];
  }
  static std::string day_name(int d) {
    static const char* names[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
    return names[d % 7];
  }

  Civil civil() const {
    std::int64_t local = m_sec + m_offset;
    std::int64_t days = local >= 0 ? local / 86400 : (local - 86399) / 86400;
    std::int64_t secs = local - days * 86400;
    Civil c{};
    civil_from_days(days, c.year, c.month, c.day);
    c.hour = static_cast<int>(secs / 3600);
    c.min = static_cast<int>(secs / 60 % 60);
    c.sec = static_cast<int>(secs % 60);
    c.yday = static_cast<int>(days - days_from_civil(c.year, 1, 1) + 1);
    c.wday = static_cast<int>(((days % 7) + 11) % 7);  // 1970-01-01 was a Thursday
    return c;
  }

  std::string go_string_value() const {
    std::string s = format("2006-01-02 15:04:05.999999999 -0700 MST");
    return s;
  }

  std::string format(const std::string& layout) const;

private:
  std::int64_t m_sec;
  std::int64_t m_nsec;
  int m_offset;
  std::string m_zone;
};

std::string pad(std::int64_t v, int width, char fill = '0') {
  std::string s = std::to_string(v < 0 ? -v : v);
  while (static_cast<int>(s.size()) < width) s.insert(s.begin(), fill);
  return v < 0 ? "-" + s : s;
}

std::string TimeObject::format(const std::string& layout) const {
  Civil c = civil();
  std::string out;
  size_t i = 0;
  auto starts = [&](const char* p) { return layout.compare(i, std::strlen(p), p) == 0; };
  while (i < layout.size()) {
    char ch = layout[i];
    if (starts("January")) { out += month_name(c.month); i += 7; continue; }
    if (starts("Jan")) { out += month_name(c.month).substr(0, 3); i += 3; continue; }
    if (starts("Monday")) { out += day_name(c.wday); i += 6; continue; }
    if (starts("Mon")) { out += day_name(c.wday).substr(0, 3); i += 3; continue; }
    if (starts("MST")) { out += m_zone.empty() ? "UTC" : m_zone; i += 3; continue; }
    if (starts("2006")) { out += pad(c.year, 4); i += 4; continue; }
    if (starts("2")) {
      if (starts("2")) { out += std::to_string(c.day); i += 1; continue; }
    }
    if (starts("06")) { out += pad(c.year % 100, 2); i += 2; continue; }
    if (starts("01")) { out += pad(c.month, 2); i += 2; continue; }
    if (starts("02")) { out += pad(c.day, 2); i += 2; continue; }
    if (starts("03")) { out += pad(c.hour % 12 == 0 ? 12 : c.hour % 12, 2); i += 2; continue; }
    if (starts("04")) { out += pad(c.min, 2); i += 2; continue; }
    if (starts("05")) { out += pad(c.sec, 2); i += 2; continue; }
    if (starts("002")) { out += pad(c.yday, 3); i += 3; continue; }
    if (starts("15")) { out += pad(c.hour, 2); i += 2; continue; }
    if (starts("_2")) { out += pad(c.day, 2, ' '); i += 2; continue; }
    if (starts("PM")) { out += c.hour >= 12 ? "PM" : "AM"; i += 2; continue; }
    if (starts("pm")) { out += c.hour >= 12 ? "pm" : "am"; i += 2; continue; }
    bool zulu = starts("Z07:00") || starts("Z0700") || starts("Z07");
    if (zulu || starts("-07:00") || starts("-0700") || starts("-07")) {
      size_t len = starts("Z07:00") || starts("-07:00") ? 6 : (starts("Z0700") || starts("-0700")) ? 5 : 3;
      if (zulu && m_offset == 0) {
        out += "Z";
      } else {
        int off = m_offset;
        out += off < 0 ? "-" : "+";
        off = off < 0 ? -off : off;
        out += pad(off / 3600, 2);
        if (len == 6) out += ":" + pad(off / 60 % 60, 2);
        else if (len == 5) out += pad(off / 60 % 60, 2);
      }
      i += len;
      continue;
    }
    if ((ch == '.' || ch == ',') && i + 1 < layout.size() && (layout[i + 1] == '0' || layout[i + 1] == '9')) {
      char digit = layout[i + 1];
      size_t j = i + 1;
      while (j < layout.size() && layout[j] == digit) ++j;
      bool std_frac = j >= layout.size() || !(layout[j] >= '0' && layout[j] <= '9');
      if (std_frac) {
        size_t n = j - i - 1;
        std::string frac = pad(m_nsec, 9).substr(0, std::min<size_t>(n, 9));
        if (digit == '9') {
          while (!frac.empty() && frac.back() == '0') frac.pop_back();
          if (!frac.empty()) out += std::string(1, ch) + frac;
        } else {
          out += std::string(1, ch) + frac;
        }
        i = j;
        continue;
      }
    }
    if (starts("1")) { out += std::to_string(c.month); i += 1; continue; }
    if (starts("3")) { out += std::to_string(c.hour % 12 == 0 ? 12 : c.hour % 12); i += 1; continue; }
    if (starts("4")) { out += std::to_string(c.min); i += 1; continue; }
    if (starts("5")) { out += std::to_string(c.sec); i += 1; continue; }
    out.push_back(ch);
    ++i;
  }
  return out;
}

Clock& clock_of(Context& c) { return c.options().clock ? *c.options().clock : system_clock(); }

std::shared_ptr<const TimeObject> make_time(std::int64_t sec, std::int64_t nsec, bool local) {
  if (!local) return std::make_shared<TimeObject>(sec, nsec, 0, "UTC");
  std::time_t t = static_cast<std::time_t>(sec);
  std::tm tm{};
  localtime_r(&t, &tm);
  return std::make_shared<TimeObject>(sec, nsec, static_cast<int>(tm.tm_gmtoff), tm.tm_zone ? tm.tm_zone : "UTC");
}

std::shared_ptr<const TimeObject> now(Context& c) {
  std::int64_t ms = clock_of(c).now_unix_ms();
  std::int64_t sec = ms >= 0 ? ms / 1000 : (ms - 999) / 1000;
  return make_time(sec, (ms - sec * 1000) * 1000000, true);
}

const TimeObject* as_time(const Value& v) {
  if (!v.is_object()) return nullptr;
  return dynamic_cast<const TimeObject*>(v.as_object().get());
}

std::shared_ptr<const TimeObject> time_arg(Context& c, const Value& v) {
  if (const TimeObject* t = as_time(v)) return std::make_shared<TimeObject>(*t);
  if (v.is_int()) return make_time(v.as_int(), 0, true);
  return now(c);
}

std::string in_zone(const TimeObject& t, const std::string& zone, const std::string& layout) {
  bool local = zone == "Local";
  auto z = make_time(t.sec(), t.nsec(), local);
  return z->format(layout);
}



Value time_value(std::shared_ptr<const TimeObject> t) { return Value(std::shared_ptr<const Object>(std::move(t))); }

// time.ParseInLocation for the numeric layouts charts use
bool parse_time(const std::string& layout, const std::string& value, std::shared_ptr<const TimeObject>& out) {
  int year = 1, month = 1, day = 1, hour = 0, min = 0, sec = 0, offset = 0;
  std::int64_t nsec = 0;
  bool has_offset = false, pm = false, has_pm = false;
  size_t i = 0, j = 0;
  auto num = [&](int width, int& dst) {
    size_t st = j;
    while (j < value.size() && std::isdigit(static_cast<unsigned char>(value[j])) && (width <= 0 || static_cast<int>(j - st) < width)) ++j;
    if (j == st || (width > 0 && static_cast<int>(j - st) != width)) return false;
    dst = std::atoi(value.substr(st, j - st).c_str());
    return true;
  };
  auto starts = [&](const char* p) { return layout.compare(i, std::strlen(p), p) == 0; };
  while (i < layout.size()) {
    if (starts("2006")) { if (!num(4, year)) return false; i += 4; continue; }
    if (starts("01")) { if (!num(2, month)) return false; i += 2; continue; }
    if (starts("02")) { if (!num(2, day)) return false; i += 2; continue; }
    if (starts("15")) { if (!num(2, hour)) return false; i += 2; continue; }
    if (starts("03")) { if (!num(2, hour)) return false; i += 2; continue; }
    if (starts("04")) { if (!num(2, min)) return false; i += 2; continue; }
    if (starts("05")) { if (!num(2, sec)) return false; i += 2; continue; }
    if (starts("06")) { if (!num(2, year)) return false; year += year >= 69 ? 1900 : 2000; i += 2; continue; }
    if (starts("PM")) {
      if (value.compare(j, 2, "PM") == 0) pm = true;
      else if (value.compare(j, 2, "AM") != 0) return false;
      has_pm = true;
      j += 2;
      i += 2;
      continue;
    }
    if (starts("Z07:00") || starts("-07:00")) {
      if (starts("Z07:00") && j < value.size() && value[j] == 'Z') {
        ++j;
      } else {
        if (j + 6 > value.size() || (value[j] != '+' && value[j] != '-')) return false;
        int h = std::atoi(value.substr(j + 1, 2).c_str()), m = std::atoi(value.substr(j + 4, 2).c_str());
        offset = (h * 3600 + m * 60) * (value[j] == '-' ? -1 : 1);
        j += 6;
      }
      has_offset = true;
      i += 6;
      continue;
    }
    if (starts("1")) { if (!num(0, month)) return false; i += 1; continue; }
    if (starts("2")) { if (!num(0, day)) return false; i += 1; continue; }
    if (starts("3")) { if (!num(0, hour)) return false; i += 1; continue; }
    if (starts("4")) { if (!num(0, min)) return false; i += 1; continue; }
    if (starts("5")) { if (!num(0, sec)) return false; i += 1; continue; }
    if (layout[i] == '.' && i + 1 < layout.size() && (layout[i + 1] == '0' || layout[i + 1] == '9')) {
      size_t k = i + 1;
      while (k < layout.size() && layout[k] == layout[i + 1]) ++k;
      if (j < value.size() && value[j] == '.') {
        ++j;
        size_t st = j;
        while (j < value.size() && std::isdigit(static_cast<unsigned char>(value[j]))) ++j;
        std::string frac = value.substr(st, std::min<size_t>(9, j - st));
        while (frac.size() < 9) frac.push_back('0');
        nsec = std::atoll(frac.c_str());
      }
      i = k;
      continue;
    }
    if (j >= value.size() || value[j] != layout[i]) return false;
    ++i;
    ++j;
  }
  if (j != value.size()) return false;
  if (has_pm && pm && hour < 12) hour += 12;
  if (has_pm && !pm && hour == 12) hour = 0;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 59) return false;
  std::int64_t days = days_from_civil(year, month, day);
  std::int64_t local = days * 86400 + hour * 3600 + min * 60 + sec;
  if (has_offset) {
    out = std::make_shared<TimeObject>(local - offset, nsec, offset, offset == 0 ? "UTC" : "");
    return true;
  }
  // no zone in the layout: the value is local time
  std::time_t guess = static_cast<std::time_t>(local);
  std::tm tm{};
  localtime_r(&guess, &tm);
  out = make_time(local - tm.tm_gmtoff, nsec, true);
  return true;
}

}  // namespace

void register_sprig_time(FuncMap& m) {
  m["now"] = {[](Context& c, Args&) { return time_value(now(c)); }, ""};
  m["date"] = {[](Context& c, Args& a) { return Value(in_zone(*time_arg(c, a[1]), "Local", a[0].as_string())); }, "sa"};
  m["dateInZone"] = {[](Context& c, Args& a) { return Value(in_zone(*time_arg(c, a[1]), a[2].as_string(), a[0].as_string())); },
                     "sas"};
  m["date_in_zone"] = m["dateInZone"];
  m["htmlDate"] = {[](Context& c, Args& a) { return Value(in_zone(*time_arg(c, a[0]), "Local", "2006-01-02")); }, "a"};
  m["htmlDateInZone"] = {[](Context& c, Args& a) { return Value(in_zone(*time_arg(c, a[0]), a[1].as_string(), "2006-01-02")); },
                         "as"};
  m["unixEpoch"] = {[](Context& c, Args& a) { return Value(std::to_string(time_arg(c, a[0])->sec())); }, "a"};
  auto modify = [](bool must) {
    return [must](Context& c, Args& a) -> Value {
      auto t = time_arg(c, a[1]);
      std::int64_t d = 0;
      if (!parse_go_duration(a[0].as_string(), d)) {
        if (must) func_fail("time: invalid duration " + go_quote(a[0].as_string()));
        return time_value(t);
      }
      std::int64_t total = t->nsec() + d;
      std::int64_t sec = t->sec() + (total >= 0 ? total / k_s : (total - k_s + 1) / k_s);
      std::int64_t ns = total - (total >= 0 ? total / k_s : (total - k_s + 1) / k_s) * k_s;
      return time_value(std::make_shared<TimeObject>(sec, ns, t->offset(), t->zone()));
    };
  };
  m["dateModify"] = {modify(false), "sa"};
  m["date_modify"] = m["dateModify"];
  m["mustDateModify"] = {modify(true), "sa"};
  m["ago"] = {[](Context& c, Args& a) {
                auto t = time_arg(c, a[0]);
                auto n = now(c);
                std::int64_t d = (n->sec() - t->sec()) * k_s + (n->nsec() - t->nsec());
                std::int64_t r = (d >= 0 ? d + k_s / 2 : d - k_s / 2) / k_s * k_s;
                return Value(go_duration_string(r));
              },
              "a"};
  m["duration"] = {[](Context&, Args& a) {
                     std::int64_t n = 0;
                     if (a[0].is_string()) {
                       char* end = nullptr;
                       n = std::strtoll(a[0].as_string().c_str(), &end, 10);
                       if (*end) n = 0;
                     } else if (a[0].is_int() && a[0].int_type() == IntType::int64) {
                       n = a[0].as_int();
                     }
                     return Value(go_duration_string(n * k_s));
                   },
                   "a"};
  m["durationRound"] = {[](Context& c, Args& a) {
                          std::int64_t d = 0;
                          if (a[0].is_string()) {
                            if (!parse_go_duration(a[0].as_string(), d)) d = 0;
                          } else if (a[0].is_int() && a[0].int_type() == IntType::int64) {
                            d = a[0].as_int();
                          } else if (const TimeObject* t = as_time(a[0])) {
                            auto n = now(c);
                            d = (n->sec() - t->sec()) * k_s + (n->nsec() - t->nsec());
                          }
                          std::uint64_t u = d < 0 ? static_cast<std::uint64_t>(-(d + 1)) + 1 : static_cast<std::uint64_t>(d);
                          const std::uint64_t hour = static_cast<std::uint64_t>(k_hour), day = hour * 24, month = day * 30,
                                              year = day * 365, minute = static_cast<std::uint64_t>(k_min),
                                              second = static_cast<std::uint64_t>(k_s);
                          std::string out = "0s";
                          if (u > year) out = std::to_string(u / year) + "y";
                          else if (u > month) out = std::to_string(u / month) + "mo";
                          else if (u > day) out = std::to_string(u / day) + "d";
                          else if (u > hour) out = std::to_string(u / hour) + "h";
                          else if (u > minute) out = std::to_string(u / minute) + "m";
                          else if (u > second) out = std::to_string(u / second) + "s";
                          return Value(out);
                        },
                        "a"};
  auto to_date = [](bool must) {
    return [must](Context&, Args& a) -> Value {
      std::shared_ptr<const TimeObject> t;
      if (!parse_time(a[0].as_string(), a[1].as_string(), t)) {
        if (must)
          func_fail("parsing time " + go_quote(a[1].as_string()) + " as " + go_quote(a[0].as_string()) + ": cannot parse");
        return time_value(std::make_shared<TimeObject>(-62135596800LL, 0, 0, "UTC"));
      }
      return time_value(t);
    };
  };
  m["toDate"] = {to_date(false), "ss"};
  m["mustToDate"] = {to_date(true), "ss"};
}

}  // namespace emco::tmpl
