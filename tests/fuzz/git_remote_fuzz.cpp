// libFuzzer target: what emco itself parses of a git server's answers, where libgit2 hands
// them over (plugins/targets/gitops): the TLS certificate a remote presents (DER, checked
// against the remote's CA by certificate_trusted), the ssh host key blob it presents (looked
// up in known_hosts text by known_hosts_lookup), the sideband text of a push (remote_said) and
// the per-ref push status (is_race_status), plus the remote URL parser and its redaction.
// libgit2's own protocol parsing (pkt-lines, ref advertisements, packs) is not emco's code and
// is not fuzzed here; git_stream.cpp only moves bytes under deadlines and parses nothing.
//
// Input: parts separated by a line "%%": sideband text, push status, certificate DER, host
// key blob, known_hosts text, URL. Missing parts are empty. Built by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/error.hpp"
#include "plugins/targets/gitops/git_remote.hpp"

#ifndef EMCO_SOURCE_DIR
#error "EMCO_SOURCE_DIR names the checkout (tests/fuzz/CMakeLists.txt)"
#endif

namespace {

using namespace emco::gitops;

std::vector<std::string_view> split_parts(std::string_view in, std::size_t count) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < count) {
    auto at = in.find("\n%%\n");
    if (at == std::string_view::npos) break;
    parts.push_back(in.substr(0, at));
    in.remove_prefix(at + 4);
  }
  parts.push_back(in);
  parts.resize(count);
  return parts;
}

const std::string& fixture_ca() {
  static const std::string pem = [] {
    std::ifstream in(EMCO_SOURCE_DIR "/tests/fuzz/fixtures/ca.crt");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }();
  return pem;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto parts = split_parts(std::string_view(reinterpret_cast<const char*>(data), size), 6);
  // The server's words reach the user's terminal: bounded and printable (no escape sequences,
  // no forged lines).
  std::string said = remote_said(parts[0]);
  if (said.size() > 4096) std::abort();
  for (unsigned char c : said)
    if ((c < 0x20 && c != '\t') || c == 0x7F) std::abort();
  (void)is_race_status(parts[1]);
  (void)certificate_trusted(parts[2], fixture_ca(), "git.example.com");
  (void)certificate_trusted(parts[2], parts[4], "git.example.com");
  for (int port : {22, 2222})
    (void)known_hosts_lookup(parts[4], "git.example.com", port, parts[3]);
  try {
    RemoteUrl url = parse_remote_url(parts[5]);
    (void)url;
  } catch (const emco::Error&) {
  }
  std::string redacted = redact_url(parts[5]);
  (void)cache_key(parts[5]);
  (void)redacted;
  return 0;
}
