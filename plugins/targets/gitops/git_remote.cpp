#include "plugins/targets/gitops/git_remote.hpp"

#include <git2.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <memory>
#include <mutex>
#include <thread>

#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "core/util/openssl_init.hpp"
#include "core/util/printable.hpp"
#include "core/util/sha256.hpp"
#include "core/util/strings.hpp"
#include "plugins/targets/gitops/git_stream.hpp"
#include "plugins/targets/gitops/libgit2_init.hpp"

namespace emco::gitops {

void ensure_libgit2() {
  static std::once_flag once;
  std::call_once(once, [] {
    git_libgit2_init();
    // emco only links trees to objects it has just written or read; checking
    // that each exists again costs a lookup per tree entry.
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
    install_bounded_stream();
  });
}

void warm_up_libgit2() {
  // A function-local static: destroyed (joined) at exit, so a process that
  // ends before delivering never leaves the thread running into teardown.
  // libgit2's initialisation initialises OpenSSL (through libssh2); done
  // first on the warming thread, OpenSSL's cleanup ran before the join and
  // freed OpenSSL under a thread still initialising it when a command failed
  // early (a crash at exit).
  initialise_openssl();
  static std::jthread warming([] { ensure_libgit2(); });
}

namespace {

bool is_scp_like(std::string_view url) {
  // user@host:path or host:path, with no "://" and the colon before any '/'.
  auto colon = url.find(':');
  if (colon == std::string_view::npos || url.find("://") != std::string_view::npos) return false;
  auto slash = url.find('/');
  return slash == std::string_view::npos || colon < slash;
}

int default_port(const std::string& scheme) {
  if (scheme == "ssh") return 22;
  if (scheme == "git") return 9418;
  if (scheme == "http") return 80;
  if (scheme == "https") return 443;
  return 0;
}

std::string quoted_redacted(std::string_view url) { return "'" + redact_url(url) + "'"; }

}  // namespace

RemoteUrl parse_remote_url(std::string_view url) {
  RemoteUrl out;
  if (url.empty()) fail(ErrorKind::invalid, "git remote url is empty");
  if (url.front() == '/') {
    out.scheme = "file";
    out.path = std::string(url);
    return out;
  }
  if (is_scp_like(url)) {
    out.scheme = "ssh";
    auto colon = url.find(':');
    std::string_view authority = url.substr(0, colon);
    auto at = authority.rfind('@');
    if (at != std::string_view::npos) {
      out.user = std::string(authority.substr(0, at));
      authority = authority.substr(at + 1);
    }
    out.host = std::string(authority);
    out.port = 22;
    out.path = std::string(url.substr(colon + 1));
    if (out.host.empty() || out.path.empty())
      fail(ErrorKind::invalid, "invalid git remote url " + quoted_redacted(url));
    return out;
  }
  auto sep = url.find("://");
  if (sep == std::string_view::npos)
    fail(ErrorKind::invalid, "invalid git remote url " + quoted_redacted(url),
         "use file://, git://, http://, https:// or ssh://");
  out.scheme = to_lower(url.substr(0, sep));
  std::string_view rest = url.substr(sep + 3);
  if (out.scheme == "file") {
    if (rest.empty() || rest.front() != '/')
      fail(ErrorKind::invalid, "file url " + quoted_redacted(url) + " must hold an absolute path");
    out.path = std::string(rest);
    return out;
  }
  if (out.scheme != "git" && out.scheme != "http" && out.scheme != "https" && out.scheme != "ssh")
    fail(ErrorKind::invalid, "unsupported git remote scheme '" + out.scheme + "'",
         "use file://, git://, http://, https:// or ssh://");
  auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  out.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  auto at = authority.rfind('@');
  if (at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    auto colon = userinfo.find(':');
    out.user = std::string(userinfo.substr(0, colon));
    out.has_password = colon != std::string_view::npos;
    authority = authority.substr(at + 1);
  }
  if (out.has_password)
    fail(ErrorKind::invalid, "git remote url " + quoted_redacted(url) + " carries a password",
         "give credentials separately (token, user/password or ssh key), not in the url");
  std::string_view hostport = authority;
  if (!hostport.empty() && hostport.front() == '[') {
    auto close = hostport.find(']');
    if (close == std::string_view::npos) fail(ErrorKind::invalid, "invalid git remote url " + quoted_redacted(url));
    out.host = std::string(hostport.substr(1, close - 1));
    hostport = hostport.substr(close + 1);
    if (!hostport.empty() && hostport.front() == ':') hostport.remove_prefix(1);
    else hostport = {};
  } else {
    auto colon = hostport.rfind(':');
    out.host = std::string(hostport.substr(0, colon));
    hostport = colon == std::string_view::npos ? std::string_view{} : hostport.substr(colon + 1);
  }
  if (!hostport.empty()) {
    int port = 0;
    for (char c : hostport) {
      if (!std::isdigit(static_cast<unsigned char>(c)) || port > 65535) port = -1;
      if (port < 0) break;
      port = port * 10 + (c - '0');
    }
    if (port < 1 || port > 65535) fail(ErrorKind::invalid, "invalid port in git remote url " + quoted_redacted(url));
    out.port = port;
  }
  if (out.host.empty()) fail(ErrorKind::invalid, "git remote url " + quoted_redacted(url) + " has no host");
  if (out.port == 0) out.port = default_port(out.scheme);
  return out;
}

std::string redact_url(std::string_view url) {
  auto sep = url.find("://");
  if (sep == std::string_view::npos) return std::string(url);
  auto start = sep + 3;
  auto slash = url.find('/', start);
  auto at = url.rfind('@', slash == std::string_view::npos ? url.size() : slash);
  if (at == std::string_view::npos || at < start) return std::string(url);
  auto colon = url.find(':', start);
  if (colon == std::string_view::npos || colon > at) return std::string(url);
  return std::string(url.substr(0, colon + 1)) + "***" + std::string(url.substr(at));
}

void validate(const GitRemoteSpec& spec) {
  ensure_libgit2();
  RemoteUrl url = parse_remote_url(spec.url);
  std::string ref = "refs/heads/" + spec.branch;
  int valid = 0;
  if (spec.branch.empty() || git_reference_name_is_valid(&valid, ref.c_str()) < 0 || !valid)
    fail(ErrorKind::invalid, "invalid git branch name '" + spec.branch + "'");
  bool http = url.scheme == "http" || url.scheme == "https";
  if ((std::holds_alternative<HttpsToken>(spec.credentials) ||
       std::holds_alternative<UserPassword>(spec.credentials)) && !http)
    fail(ErrorKind::invalid,
         "a token or password is only used over http(s), not for " + quoted_redacted(spec.url));
  if (std::holds_alternative<SshKey>(spec.credentials)) {
    if (url.scheme != "ssh")
      fail(ErrorKind::invalid, "an ssh key is only used over ssh, not for " + quoted_redacted(spec.url));
    if (trim(std::get<SshKey>(spec.credentials).private_key).empty())
      fail(ErrorKind::invalid, "the ssh key for " + quoted_redacted(spec.url) + " is empty");
  }
}

std::vector<std::string> secrets_of(const GitRemoteSpec& spec) {
  std::vector<std::string> out;
  auto add = [&](const std::string& s) {
    if (!s.empty()) out.push_back(s);
  };
  if (auto* t = std::get_if<HttpsToken>(&spec.credentials)) add(t->token);
  if (auto* p = std::get_if<UserPassword>(&spec.credentials)) add(p->password);
  if (auto* k = std::get_if<SshKey>(&spec.credentials)) {
    add(k->passphrase);
    add(k->private_key);
  }
  return out;
}

bool certificate_trusted(std::string_view der, std::string_view ca_pem, std::string_view host) {
  if (der.empty() || ca_pem.empty() || host.empty()) return false;
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  std::unique_ptr<X509, decltype(&X509_free)> cert(d2i_X509(nullptr, &p, static_cast<long>(der.size())), X509_free);
  if (!cert) return false;
  std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store(X509_STORE_new(), X509_STORE_free);
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size())),
                                                BIO_free);
  if (!store || !bio) return false;
  int loaded = 0;
  while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    if (X509_STORE_add_cert(store.get(), ca) == 1) ++loaded;
    X509_free(ca);
  }
  ERR_clear_error();  // the loop ends on a "no start line" error
  if (loaded == 0) return false;
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> ctx(X509_STORE_CTX_new(), X509_STORE_CTX_free);
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store.get(), cert.get(), nullptr) != 1) return false;
  bool chain_ok = X509_verify_cert(ctx.get()) == 1;
  ERR_clear_error();
  if (!chain_ok) return false;
  std::string name(host);
  return X509_check_host(cert.get(), name.data(), name.size(), 0, nullptr) == 1;
}

std::string remote_said(std::string_view text) {
  constexpr std::size_t k_max_said_line = 256;
  std::vector<std::string> lines;
  std::string current;
  auto flush = [&] {
    std::string line = trim(current);
    current.clear();
    if (line.empty()) return;
    for (const char* noise : {"Counting objects", "Compressing objects", "Resolving deltas", "Writing objects",
                              "Total ", "Enumerating objects", "Delta compression", "Unpacking objects"})
      if (starts_with(line, noise)) return;
    lines.push_back(printable(line, k_max_said_line));
  };
  for (char c : text) {
    if (c == '\n' || c == '\r') flush();
    else current += c;
  }
  flush();
  if (lines.size() > 10) lines.erase(lines.begin(), lines.end() - 10);
  return join(lines, "; ");
}

bool is_race_status(std::string_view status) {
  for (const char* s : {"non-fast-forward", "fetch first", "failed to update ref", "failed to lock",
                        "cannot lock ref", "stale info", "reference already exists"})
    if (status.find(s) != std::string_view::npos) return true;
  return false;
}

std::string cache_key(std::string_view url) { return sha256_hex(url).substr(0, 16); }

namespace {

// OpenSSH host pattern: '*' any run, '?' one character, case-insensitive.
// Greedy with one backtrack point (the last '*'): at most |pattern|·|text|
// steps. The recursive form it replaces took time exponential in the number
// of stars (a known_hosts line of "*a*a*a...": found by git_remote_fuzz).
bool wildcard_match(std::string_view pattern, std::string_view text) {
  auto same = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  };
  size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && (pattern[p] == '?' || same(pattern[p], text[t]))) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// "|1|base64(salt)|base64(HMAC-SHA1(salt, host))"
bool hashed_match(std::string_view field, const std::string& host) {
  auto parts = split(field.substr(3), '|');
  if (parts.size() != 2) return false;
  auto salt = base64_decode(parts[0], {.lenient = true}), hash = base64_decode(parts[1], {.lenient = true});
  if (!salt || !hash) return false;
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int len = 0;
  if (!HMAC(EVP_sha1(), salt->data(), static_cast<int>(salt->size()),
            reinterpret_cast<const unsigned char*>(host.data()), host.size(), mac.data(), &len))
    return false;
  return len == hash->size() && std::equal(hash->begin(), hash->end(), mac.begin(),
                                          [](char a, unsigned char b) { return static_cast<unsigned char>(a) == b; });
}

bool host_matches(std::string_view hosts_field, const std::string& host) {
  if (starts_with(hosts_field, "|1|")) return hashed_match(hosts_field, host);
  bool matched = false;
  for (const auto& pattern : split(hosts_field, ',')) {
    if (!pattern.empty() && pattern.front() == '!') {
      if (wildcard_match(std::string_view(pattern).substr(1), host)) return false;
    } else if (wildcard_match(pattern, host)) {
      matched = true;
    }
  }
  return matched;
}

std::vector<std::string> fields_of(std::string_view line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.emplace_back(line.substr(start, i - start));
  }
  return out;
}

// The key type name at the start of an SSH wire-format key blob.
std::string blob_type(std::string_view blob) {
  if (blob.size() < 4) return {};
  uint32_t len = (static_cast<uint32_t>(static_cast<unsigned char>(blob[0])) << 24) |
                 (static_cast<uint32_t>(static_cast<unsigned char>(blob[1])) << 16) |
                 (static_cast<uint32_t>(static_cast<unsigned char>(blob[2])) << 8) |
                 static_cast<uint32_t>(static_cast<unsigned char>(blob[3]));
  if (len > blob.size() - 4) return {};
  return std::string(blob.substr(4, len));
}

}  // namespace

KnownHostMatch known_hosts_lookup(std::string_view text, std::string_view host, int port,
                                  std::string_view key_blob) {
  std::string name = port == 22 || port == 0 ? std::string(host)
                                             : "[" + std::string(host) + "]:" + std::to_string(port);
  std::string key_type = blob_type(key_blob);
  bool listed_other_key = false;
  bool matched = false;
  for (const auto& raw_line : split(text, '\n')) {
    std::string line = trim(raw_line);
    if (line.empty() || line.front() == '#') continue;
    auto fields = fields_of(line);
    std::string marker;
    if (!fields.empty() && fields.front().front() == '@') {
      marker = fields.front();
      fields.erase(fields.begin());
    }
    if (fields.size() < 3 || marker == "@cert-authority") continue;
    if (!host_matches(fields[0], name)) continue;
    auto blob = base64_decode(fields[2], {.lenient = true});
    if (!blob) continue;
    bool same_key = *blob == key_blob;
    if (marker == "@revoked") {
      if (same_key) return KnownHostMatch::revoked;
      continue;
    }
    if (same_key) matched = true;
    else if (fields[1] == key_type) listed_other_key = true;
  }
  if (matched) return KnownHostMatch::matches;
  return listed_other_key ? KnownHostMatch::mismatch : KnownHostMatch::unknown;
}

}  // namespace emco::gitops
