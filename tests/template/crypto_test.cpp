// Keys and certificates from genCA/genSignedCert are valid for OpenSSL: the RSA key passes the
// full key check and the leaf certificate verifies against its CA.
#include <catch2/catch.hpp>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <tuple>
#include <vector>

#include "core/template/funcs.hpp"
#include "helpers.hpp"

using namespace emco::tmpl;
using namespace emco::tmpl::test;

namespace {
EVP_PKEY* read_key(const std::string& pem) {
  BIO* b = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* k = PEM_read_bio_PrivateKey(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  return k;
}
X509* read_cert(const std::string& pem) {
  BIO* b = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* x = PEM_read_bio_X509(b, nullptr, nullptr, nullptr);
  BIO_free(b);
  return x;
}
// The PEM holds an RSA key of `bits` bits that passes OpenSSL's full check (primality of p
// and q, the pairwise test).
void check_rsa_key(const std::string& pem, int bits) {
  EVP_PKEY* key = read_key(pem);
  REQUIRE(key != nullptr);
  CHECK(EVP_PKEY_get_bits(key) == bits);
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new(key, nullptr);
  CHECK(EVP_PKEY_check(ctx) == 1);
  EVP_PKEY_CTX_free(ctx);
  EVP_PKEY_free(key);
}
}  // namespace

TEST_CASE("crypto: generated RSA keys and certificates are valid", "[template][crypto]") {
  Engine e;
  e.add("ca", "{{ (genCA \"test-ca\" 30).Cert }}");
  e.add("t",
        "{{ $ca := genCA \"test-ca\" 30 }}{{ $c := genSignedCert \"leaf\" (list \"10.1.2.3\") (list \"leaf.ns.svc\") 30 $ca }}"
        "{{ $ca.Cert }}|{{ $ca.Key }}|{{ $c.Cert }}|{{ $c.Key }}");
  std::string out = e.execute("t", Value());
  std::vector<std::string> parts;
  size_t pos = 0;
  for (size_t bar; (bar = out.find('|', pos)) != std::string::npos; pos = bar + 1) parts.push_back(out.substr(pos, bar - pos));
  parts.push_back(out.substr(pos));
  REQUIRE(parts.size() == 4);
  check_rsa_key(parts[1], 2048);
  check_rsa_key(parts[3], 2048);
  X509* ca = read_cert(parts[0]);
  X509* leaf = read_cert(parts[2]);
  REQUIRE(ca != nullptr);
  REQUIRE(leaf != nullptr);
  EVP_PKEY* ca_pub = X509_get_pubkey(ca);
  CHECK(X509_verify(leaf, ca_pub) == 1);
  CHECK(X509_verify(ca, ca_pub) == 1);
  CHECK(X509_check_host(leaf, "leaf.ns.svc", 0, 0, nullptr) == 1);
  CHECK(X509_check_ip_asc(leaf, "10.1.2.3", 0) == 1);
  CHECK(X509_check_ca(ca) >= 1);
  // the leaf chains to the CA as a TLS client would check it
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX* vctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(vctx, store, leaf, nullptr);
  X509_STORE_CTX_set_purpose(vctx, X509_PURPOSE_SSL_SERVER);
  CHECK(X509_verify_cert(vctx) == 1);
  X509_STORE_CTX_free(vctx);
  X509_STORE_free(store);
  EVP_PKEY_free(ca_pub);
  X509_free(ca);
  X509_free(leaf);
}

TEST_CASE("crypto: genPrivateKey rsa gives a valid 4096-bit key whose primes pass OpenSSL's check", "[template][crypto]") {
  Engine e;
  e.add("k", "{{ genPrivateKey \"rsa\" }}");
  check_rsa_key(e.execute("k", Value()), 4096);
}

TEST_CASE("crypto: keys made ahead of need are valid and independent", "[template][crypto]") {
  // The first request starts the next key of its size on another thread; the requests after
  // it take those keys. Every one is a full EVP_PKEY_keygen key, none handed out twice.
  std::vector<std::string> pems;
  for (int i = 0; i < 4; ++i) pems.push_back(emco::tmpl::rsa_private_key_pem(2048));
  for (const auto& pem : pems) {
    REQUIRE(pem.rfind("-----BEGIN RSA PRIVATE KEY-----", 0) == 0);
    check_rsa_key(pem, 2048);
  }
  for (size_t i = 0; i < pems.size(); ++i)
    for (size_t j = i + 1; j < pems.size(); ++j) CHECK(pems[i] != pems[j]);
  Engine e;
  e.add("two", "{{ (genCA \"a\" 1).Key }}|{{ (genSelfSignedCert \"b\" nil nil 1).Key }}");
  std::string out = e.execute("two", Value());
  auto bar = out.find('|');
  REQUIRE(bar != std::string::npos);
  CHECK(out.substr(0, bar) != out.substr(bar + 1));
}

TEST_CASE("crypto: genPrivateKey ecdsa and ed25519 keys have Sprig's curves and pass OpenSSL's check", "[template][crypto]") {
  Engine e;
  e.add("ec", "{{ genPrivateKey \"ecdsa\" }}");
  e.add("ed", "{{ genPrivateKey \"ed25519\" }}");
  std::string ec_pem = e.execute("ec", Value());
  CHECK(ec_pem.rfind("-----BEGIN EC PRIVATE KEY-----", 0) == 0);
  std::string ed_pem = e.execute("ed", Value());
  CHECK(ed_pem.rfind("-----BEGIN PRIVATE KEY-----", 0) == 0);
  for (const auto& [pem, type, bits] : {std::tuple{ec_pem, EVP_PKEY_EC, 256}, std::tuple{ed_pem, EVP_PKEY_ED25519, 256}}) {
    EVP_PKEY* key = read_key(pem);
    REQUIRE(key != nullptr);
    CHECK(EVP_PKEY_get_base_id(key) == type);
    CHECK(EVP_PKEY_get_bits(key) == bits);
    EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new(key, nullptr);
    CHECK(EVP_PKEY_check(ctx) == 1);
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(key);
  }
  char group[64] = {0};
  EVP_PKEY* ec = read_key(ec_pem);
  REQUIRE(ec != nullptr);
  CHECK(EVP_PKEY_get_utf8_string_param(ec, "group", group, sizeof group, nullptr) == 1);
  CHECK(std::string(group) == "prime256v1");
  EVP_PKEY_free(ec);
}
