#pragma once
// PEM and base64 checks for kubeconfig material (OpenSSL behind the scenes).
//
// These functions only decode and inspect; they never print the material.
// Error messages name what is wrong ("not a PEM certificate"), never the bytes.

#include <openssl/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace emco::kube {

struct X509Free { void operator()(X509* x) const; };
struct PkeyFree { void operator()(EVP_PKEY* k) const; };
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

// Every certificate of a PEM bundle, in order (other PEM blocks skipped), and
// the private key of a PEM, as OpenSSL objects for code that hands them to
// OpenSSL itself (the transport); empty when nothing decodes. An encrypted
// key never prompts for a password: it does not load.
std::vector<X509Ptr> load_certificates(std::string_view pem);
PkeyPtr load_private_key(std::string_view pem);

struct CertInfo {
  std::string subject;  // one-line RFC 2253 form, e.g. "CN=admin,O=system:masters"
  std::chrono::system_clock::time_point not_before;
  std::chrono::system_clock::time_point not_after;
  int count = 0;  // certificates in the bundle
};

// Inspects a PEM bundle of one or more certificates; describes the first one
// (for a bundle of CAs, not_after is the earliest expiry of all of them).
// Throws emco::Error(invalid) "<what> is not a PEM certificate" when nothing
// decodes. `what` names the source in the message ("certificate-authority-data
// of cluster 'edge1'").
CertInfo inspect_certificates(std::string_view pem, const std::string& what);

// Checks that `pem` holds a private key OpenSSL can load (RSA, EC, Ed25519,
// PKCS#1/PKCS#8). Throws emco::Error(invalid) naming `what` otherwise.
void check_private_key(std::string_view pem, const std::string& what);

// Checks that the first certificate in `cert_pem` belongs to the key in
// `key_pem`; throws emco::Error(invalid) "<what> does not match its key"
// when it does not.
void check_key_matches(std::string_view cert_pem, std::string_view key_pem, const std::string& what);

// RFC 3339 "2026-11-22T03:04:05Z" (UTC, also with fractional seconds or an
// offset) to a time point; nullopt when it does not parse. A time beyond what
// system_clock holds (about 1678 to 2262) is its latest or earliest point.
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text);
std::string format_rfc3339(std::chrono::system_clock::time_point when);

}  // namespace emco::kube
