#pragma once
// Go's time.Duration as text: the one parser and printer (Sprig's duration
// functions, cert-manager durations in ca-certs' CertificateRequests).

#include <cstdint>
#include <string>

namespace emco {

// time.ParseDuration: "1h30m", "8760h", "-1.5s", "0"; false when `text` is
// not a duration (nanoseconds in `out` otherwise).
bool parse_go_duration(const std::string& text, std::int64_t& out);
// time.Duration.String() of `ns` nanoseconds: "8760h0m0s", "1.5s", "0s".
std::string go_duration_string(std::int64_t ns);

}  // namespace emco
