#include "plugins/targets/kube/pem.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <array>
#include <cstdio>
#include <ctime>
#include <memory>

#include "core/util/error.hpp"

namespace emco::kube {
namespace {

struct BioFree { void operator()(BIO* b) const { BIO_free(b); } };
using BioPtr = std::unique_ptr<BIO, BioFree>;

BioPtr memory_bio(std::string_view data) {
  return BioPtr(BIO_new_mem_buf(data.data(), static_cast<int>(data.size())));
}

// system_clock counts nanoseconds: about 292 years either side of 1970. A
// time past that (a certificate valid until 9999-12-31, as RFC 5280 writes
// "no expiry"; an exec credential "expiring" in 4198, found by
// exec_credential_fuzz) is the furthest time point it has, not a signed
// overflow.
std::chrono::system_clock::time_point time_point_of(std::time_t when) {
  using Clock = std::chrono::system_clock;
  constexpr std::time_t k_latest = std::chrono::duration_cast<std::chrono::seconds>(Clock::duration::max()).count() - 1;
  if (when >= k_latest) return Clock::time_point::max();
  if (when <= -k_latest) return Clock::time_point::min();
  return Clock::from_time_t(when);
}

std::chrono::system_clock::time_point to_time_point(const ASN1_TIME* t) {
  struct tm parts {};
  ASN1_TIME_to_tm(t, &parts);
  return time_point_of(timegm(&parts));
}

// A password callback that refuses: encrypted keys cannot be used unattended
// and OpenSSL must never prompt on the terminal.
int no_password(char*, int, int, void*) { return -1; }

}  // namespace

void X509Free::operator()(X509* x) const { X509_free(x); }
void PkeyFree::operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }

std::vector<X509Ptr> load_certificates(std::string_view pem) {
  auto bio = memory_bio(pem);
  std::vector<X509Ptr> certs;
  while (X509Ptr cert{PEM_read_bio_X509(bio.get(), nullptr, no_password, nullptr)}) certs.push_back(std::move(cert));
  ERR_clear_error();  // the end of the bundle
  return certs;
}

PkeyPtr load_private_key(std::string_view pem) {
  auto bio = memory_bio(pem);
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_password, nullptr));
  ERR_clear_error();
  return key;
}

CertInfo inspect_certificates(std::string_view pem, const std::string& what) {
  CertInfo info;
  for (const auto& cert : load_certificates(pem)) {
    auto not_after = to_time_point(X509_get0_notAfter(cert.get()));
    if (info.count == 0) {
      info.not_before = to_time_point(X509_get0_notBefore(cert.get()));
      info.not_after = not_after;
      BioPtr out(BIO_new(BIO_s_mem()));
      X509_NAME_print_ex(out.get(), X509_get_subject_name(cert.get()), 0, XN_FLAG_RFC2253);
      char* data = nullptr;
      long len = BIO_get_mem_data(out.get(), &data);
      info.subject.assign(data, static_cast<size_t>(len));
    } else if (not_after < info.not_after) {
      info.not_after = not_after;
    }
    ++info.count;
  }
  if (info.count == 0) fail(ErrorKind::invalid, what + " is not a PEM certificate");
  return info;
}

void check_private_key(std::string_view pem, const std::string& what) {
  if (!load_private_key(pem)) {
    fail(ErrorKind::invalid, what + " is not a PEM private key",
         "the key must be unencrypted PEM (PKCS#1, PKCS#8 or SEC1)");
  }
}

void check_key_matches(std::string_view cert_pem, std::string_view key_pem, const std::string& what) {
  auto certs = load_certificates(cert_pem);
  auto key = load_private_key(key_pem);
  if (certs.empty() || !key) return;  // reported by the other checks
  if (X509_check_private_key(certs.front().get(), key.get()) != 1) {
    ERR_clear_error();
    fail(ErrorKind::invalid, what + " does not match its key");
  }
}

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text) {
  int y, mo, d, h, mi, s;
  char tail[40] = {};
  std::string copy(text.substr(0, 60));
  int n = std::sscanf(copy.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%39s", &y, &mo, &d, &h, &mi, &s, tail);
  if (n < 6) return std::nullopt;
  struct tm parts {};
  parts.tm_year = y - 1900;
  parts.tm_mon = mo - 1;
  parts.tm_mday = d;
  parts.tm_hour = h;
  parts.tm_min = mi;
  parts.tm_sec = s;
  std::time_t base = timegm(&parts);
  std::string_view rest(tail);
  if (!rest.empty() && rest[0] == '.') {  // fractional seconds carry no weight here
    size_t i = 1;
    while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9') ++i;
    rest.remove_prefix(i);
  }
  long offset = 0;
  if (rest == "Z" || rest == "z") {
    offset = 0;
  } else if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':') {
    int oh = (rest[1] - '0') * 10 + (rest[2] - '0');
    int om = (rest[4] - '0') * 10 + (rest[5] - '0');
    offset = (oh * 3600L + om * 60L) * (rest[0] == '-' ? -1 : 1);
  } else {
    return std::nullopt;
  }
  return time_point_of(base - offset);
}

std::string format_rfc3339(std::chrono::system_clock::time_point when) {
  std::time_t t = std::chrono::system_clock::to_time_t(when);
  struct tm parts {};
  gmtime_r(&t, &parts);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &parts);
  return buf.data();
}

}  // namespace emco::kube
