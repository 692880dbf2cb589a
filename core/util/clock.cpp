#include "core/util/clock.hpp"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <random>

#include <fmt/core.h>

namespace emco {

namespace {

class SystemClock : public Clock {
public:
  std::string now_rfc3339() override {
    if (const char* fixed = std::getenv("EMCO_FAKE_NOW"); fixed && *fixed) return fixed;
    return rfc3339_ms(now_unix_ms());
  }
  int64_t now_unix_ms() override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  }
};

std::mt19937_64& rng() {
  thread_local std::mt19937_64 gen{std::random_device{}()};
  return gen;
}

}  // namespace

std::string rfc3339_ms(int64_t unix_ms) {
  std::time_t secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec, static_cast<int>(unix_ms % 1000));
}

Clock& system_clock() {
  static SystemClock clock;
  return clock;
}

std::string random_context_id() { return std::to_string(rng()() >> 1); }

}  // namespace emco
