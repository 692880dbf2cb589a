// Keys and certificate requests of enrollment, with OpenSSL's EVP API
// (upstream: crypto/rsa and x509.CreateCertificateRequest).

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

#include "core/util/error.hpp"
#include "plugins/ca_certs/ca_certs.hpp"

namespace emco::plugins::ca_certs {

namespace {

template <class T, void (*F)(T*)>
struct Free {
  void operator()(T* p) const { F(p); }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, Free<EVP_PKEY, EVP_PKEY_free>>;
using BioPtr = std::unique_ptr<BIO, Free<BIO, BIO_free_all>>;
using ReqPtr = std::unique_ptr<X509_REQ, Free<X509_REQ, X509_REQ_free>>;

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

[[noreturn]] void crypto_fail(const std::string& what) {
  ERR_clear_error();
  fail(ErrorKind::failed, what);
}

void add_entries(X509_NAME* name, const char* field, const std::vector<std::string>& values) {
  for (const auto& v : values)
    if (X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(v.c_str()), -1, -1,
                                   0) != 1)
      crypto_fail(std::string("cannot put ") + field + " '" + v + "' in a certificate request");
}

}  // namespace

std::string generate_key(int bits) {
  PkeyPtr key(EVP_RSA_gen(static_cast<unsigned int>(bits)));
  if (!key) crypto_fail("cannot generate an RSA key of " + std::to_string(bits) + " bits");
  BioPtr bio(BIO_new(BIO_s_mem()));
  // PKCS#1 ("RSA PRIVATE KEY"), as upstream's GeneratePrivateKey encodes it.
  if (PEM_write_bio_PrivateKey_traditional(bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
    crypto_fail("cannot encode an enrollment key");
  return bio_text(bio.get());
}

std::string make_csr(const CaCert& c, const std::string& cn, const std::string& key_pem) {
  BioPtr kb(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
  PkeyPtr key(PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr));
  if (!key) crypto_fail("an enrollment key cannot be read");
  ReqPtr req(X509_REQ_new());
  if (!req || X509_REQ_set_version(req.get(), 0) != 1) crypto_fail("cannot make a certificate request");
  // Go's pkix.Name order: C, ST, L, STREET, POSTALCODE, O, OU, CN.
  X509_NAME* name = X509_REQ_get_subject_name(req.get());
  add_entries(name, "C", c.country);
  add_entries(name, "ST", c.province);
  add_entries(name, "L", c.locality);
  add_entries(name, "street", c.street_address);
  add_entries(name, "postalCode", c.postal_code);
  add_entries(name, "O", c.organization);
  add_entries(name, "OU", c.units);
  add_entries(name, "CN", {cn});
  std::string san;
  for (const auto& d : c.dns_names) san += (san.empty() ? "DNS:" : ",DNS:") + d;
  for (const auto& m : c.email_addresses) san += (san.empty() ? "email:" : ",email:") + m;
  if (!san.empty()) {
    STACK_OF(X509_EXTENSION)* exts = sk_X509_EXTENSION_new_null();
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, nullptr, NID_subject_alt_name, san.c_str());
    if (!exts || !ext) crypto_fail("cannot put the subject alternative names '" + san + "' in a certificate request");
    sk_X509_EXTENSION_push(exts, ext);
    int ok = X509_REQ_add_extensions(req.get(), exts);
    sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
    if (ok != 1) crypto_fail("cannot add extensions to a certificate request");
  }
  const EVP_MD* md = c.signature_digest == "SHA512" ? EVP_sha512() : c.signature_digest == "SHA384" ? EVP_sha384() : EVP_sha256();
  if (X509_REQ_set_pubkey(req.get(), key.get()) != 1 || X509_REQ_sign(req.get(), key.get(), md) <= 0)
    crypto_fail("cannot sign the certificate request of '" + cn + "'");
  BioPtr out(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509_REQ(out.get(), req.get()) != 1) crypto_fail("cannot encode the certificate request of '" + cn + "'");
  return bio_text(out.get());
}

}  // namespace emco::plugins::ca_certs
