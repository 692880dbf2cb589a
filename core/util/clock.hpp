#pragma once
// The clock and random ids behind an interface, so tests can fix them.

#include <cstdint>
#include <string>

namespace emco {

class Clock {
public:
  virtual ~Clock() = default;
  // UTC time as RFC 3339 with milliseconds ("2026-11-22T03:11:23.591Z").
  virtual std::string now_rfc3339() = 0;
  virtual int64_t now_unix_ms() = 0;
};

// `unix_ms` as RFC 3339 with milliseconds, UTC ("2026-11-22T03:11:23.591Z").
std::string rfc3339_ms(int64_t unix_ms);

// The system clock; EMCO_FAKE_NOW=<RFC3339> pins it (used by e2e tests for
// byte-stable output).
Clock& system_clock();

// A random non-negative int63 as decimal text (AppContext ids, as upstream).
std::string random_context_id();

}  // namespace emco
