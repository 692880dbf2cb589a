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
    auto ms = now_unix_ms();
    std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                       tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
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

Clock& system_clock() {
  static SystemClock clock;
  return clock;
}

std::string random_context_id() { return std::to_string(rng()() >> 1); }

std::string random_uuid() {
  uint64_t a = rng()(), b = rng()();
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xffff, b >> 48,
                     b & 0xffffffffffffULL);
}

}  // namespace emco
