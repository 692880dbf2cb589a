#pragma once
// How emco reaches one git remote: URL, branch and credentials, plus the
// pure helpers around them (URL parsing and redaction, known_hosts lookup).
//
// Nothing here talks to the network; git_delivery.hpp does. Secrets in these
// structs (tokens, passwords, keys, passphrases) must never be printed: use
// redact_url() for URLs and describe() for a whole spec.

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace emco::gitops {

// No credentials: anonymous access (file://, git://, public HTTP).
struct NoCredentials {};

// HTTPS token, sent as the password of HTTP basic auth. Most forges ignore the
// user name when a token is given; `user` lets one set it when they do not.
struct HttpsToken {
  std::string token;
  std::string user = "x-access-token";
};

// HTTP basic auth with a user name and a password.
struct UserPassword {
  std::string user;
  std::string password;
};

// SSH key authentication. `private_key` is the key text itself (PEM or
// OpenSSH format, ed25519 or ECDSA; RSA keys are signed with SHA-1 by this
// libssh2 and refused by current OpenSSH servers). `public_key` may be empty
// (derived from the private key). `user` overrides the URL's user; when both
// are empty, "git" is used.
struct SshKey {
  std::string private_key;
  std::string passphrase;
  std::string public_key;
  std::string user;
};

using GitCredentials = std::variant<NoCredentials, HttpsToken, UserPassword, SshKey>;

enum class HostKeyCheck { strict, insecure_accept_any };
enum class TlsVerify { on, insecure_skip };

// One remote branch emco delivers to.
struct GitRemoteSpec {
  std::string url;            // file:///abs, /abs, git://, http(s)://, ssh://, user@host:path
  std::string branch = "main";
  GitCredentials credentials;
  // OpenSSH known_hosts text checked for ssh:// remotes (plain or hashed
  // "|1|salt|hash" host fields, "[host]:port" for non-22 ports). When empty,
  // libgit2's own check against $HOME/.ssh/known_hosts decides.
  std::string known_hosts;
  HostKeyCheck host_key_check = HostKeyCheck::strict;
  TlsVerify tls_verify = TlsVerify::on;
  // PEM CA certificates trusted for https:// besides the system store (a
  // private CA): a server certificate the system does not trust is accepted
  // when one of these signed it and it names the URL's host.
  std::string ca_pem;
};

// The parts of a remote URL emco needs. scheme is "file", "git", "http",
// "https" or "ssh" (scp-like "user@host:path" gives "ssh" with port 22).
struct RemoteUrl {
  std::string scheme;
  std::string user;
  bool has_password = false;
  std::string host;
  int port = 0;               // 0 = the scheme's default
  std::string path;           // for file: the absolute filesystem path
};

// Parses `url`; throws emco::Error(invalid) for an empty or unsupported URL
// or one that carries a password (credentials belong in GitRemoteSpec).
RemoteUrl parse_remote_url(std::string_view url);

// `url` with any password in its user info replaced by "***" (safe to print).
std::string redact_url(std::string_view url);

// Throws emco::Error(invalid) unless the spec is usable: URL parses, branch
// is a valid branch name, credentials match the transport.
void validate(const GitRemoteSpec& spec);

// Every secret in the spec's credentials (for scrubbing messages).
std::vector<std::string> secrets_of(const GitRemoteSpec& spec);

// (scrub(), core/util/printable.hpp, replaces them in messages.)

// The cache directory name of a URL: the first 16 hex digits of its SHA-256.
std::string cache_key(std::string_view url);

enum class KnownHostMatch { matches, mismatch, unknown, revoked };

// Looks up `host`:`port` with the SSH wire-format public key `key_blob` in
// OpenSSH known_hosts `text`. `mismatch` = the host is listed, only with other
// keys of the same type; `revoked` = the key is marked @revoked.
KnownHostMatch known_hosts_lookup(std::string_view text, std::string_view host, int port,
                                  std::string_view key_blob);

// Whether the DER server certificate `der` was signed by a certificate of
// `ca_pem` (directly or through the others in it) and is valid now for
// `host` (DNS name). False for unparsable input.
bool certificate_trusted(std::string_view der, std::string_view ca_pem, std::string_view host);

// What a git server answers to a push, as libgit2 hands it over (sideband
// text, per-ref status messages):
// The server's own words (hook output) in sideband `text`: its last 10
// non-empty lines joined by "; ", progress meters dropped, each line made
// printable (no control characters, at most 256 bytes: core/util/printable.hpp).
std::string remote_said(std::string_view text);
// Whether a ref's rejection status means the ref moved meanwhile (a race:
// fetch and push again), rather than a refusal.
bool is_race_status(std::string_view status);

}  // namespace emco::gitops
