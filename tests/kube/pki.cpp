#include "pki.hpp"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <stdexcept>

namespace emco::kube::test {
namespace {

std::string to_pem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(len));
  BIO_free(bio);
  return out;
}

// Encrypted with AES-256 under `passphrase` unless it is empty.
std::string to_pem(EVP_PKEY* key, const std::string& passphrase = "") {
  BIO* bio = BIO_new(BIO_s_mem());
  if (passphrase.empty())
    PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  else
    PEM_write_bio_PKCS8PrivateKey(bio, key, EVP_aes_256_cbc(), passphrase.c_str(), static_cast<int>(passphrase.size()),
                                  nullptr, nullptr);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(len));
  BIO_free(bio);
  return out;
}

EVP_PKEY* load_key(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return key;
}

X509* load_cert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return cert;
}

void add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) throw std::runtime_error("bad extension " + value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

KeyPair build(const std::string& cn, const KeyPair* ca, const std::vector<std::string>& dns,
              const std::vector<std::string>& ips, long nb, long na) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  static long serial = 1;
  ASN1_INTEGER_set(X509_get_serialNumber(cert), ++serial);
  X509_gmtime_adj(X509_getm_notBefore(cert), nb);
  X509_gmtime_adj(X509_getm_notAfter(cert), na);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* issuer = cert;
  EVP_PKEY* signer = key;
  X509* ca_cert = nullptr;
  EVP_PKEY* ca_key = nullptr;
  if (ca) {
    ca_cert = load_cert(ca->cert_pem);
    ca_key = load_key(ca->key_pem);
    issuer = ca_cert;
    signer = ca_key;
  }
  X509_set_issuer_name(cert, X509_get_subject_name(issuer));
  if (!ca) {
    add_ext(cert, cert, NID_basic_constraints, "critical,CA:TRUE");
    add_ext(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
  } else {
    add_ext(cert, issuer, NID_basic_constraints, "critical,CA:FALSE");
    add_ext(cert, issuer, NID_ext_key_usage, "serverAuth,clientAuth");
    std::string san;
    for (const auto& d : dns) san += (san.empty() ? "" : ",") + std::string("DNS:") + d;
    for (const auto& i : ips) san += (san.empty() ? "" : ",") + std::string("IP:") + i;
    if (!san.empty()) add_ext(cert, issuer, NID_subject_alt_name, san);
  }
  X509_sign(cert, signer, EVP_sha256());
  KeyPair out{to_pem(cert), to_pem(key)};
  X509_free(cert);
  EVP_PKEY_free(key);
  X509_free(ca_cert);
  EVP_PKEY_free(ca_key);
  return out;
}

}  // namespace

KeyPair make_ca(const std::string& cn, long not_before_s, long not_after_s) {
  return build(cn, nullptr, {}, {}, not_before_s, not_after_s);
}

KeyPair make_cert(const KeyPair& ca, const std::string& cn, const std::vector<std::string>& dns,
                  const std::vector<std::string>& ips, long not_before_s, long not_after_s) {
  return build(cn, &ca, dns, ips, not_before_s, not_after_s);
}

KeyPair make_csr(const std::string& cn) {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509_REQ* req = X509_REQ_new();
  X509_REQ_set_version(req, 0);
  X509_NAME* name = X509_REQ_get_subject_name(req);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_REQ_set_pubkey(req, key);
  X509_REQ_sign(req, key, EVP_sha256());
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509_REQ(bio, req);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  KeyPair out{std::string(data, static_cast<size_t>(len)), to_pem(key)};
  BIO_free(bio);
  X509_REQ_free(req);
  EVP_PKEY_free(key);
  return out;
}

std::string encrypted_key(const std::string& key_pem, const std::string& passphrase) {
  EVP_PKEY* key = load_key(key_pem);
  std::string out = to_pem(key, passphrase);
  EVP_PKEY_free(key);
  return out;
}

}  // namespace emco::kube::test
