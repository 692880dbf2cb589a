#include "sim/tls.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "core/util/error.hpp"

namespace emco::sim::detail {

namespace {

[[noreturn]] void ssl_fail(const std::string& what) {
  unsigned long code = ERR_get_error();
  char buf[256] = {0};
  if (code) ERR_error_string_n(code, buf, sizeof buf);
  fail(ErrorKind::failed, what + (code ? std::string(": ") + buf : std::string()));
}

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;
struct X509Deleter {
  void operator()(X509* x) const { X509_free(x); }
};
using X509Ptr = std::unique_ptr<X509, X509Deleter>;
struct KeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyDeleter>;

std::string bio_string(BIO* bio) {
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(len));
}

std::string cert_to_pem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  return bio_string(bio.get());
}

std::string key_to_pem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  return bio_string(bio.get());
}

KeyPtr new_key() {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) ssl_fail("cannot generate an EC key");
  return key;
}

void add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) ssl_fail("cannot build certificate extension " + value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

void set_serial(X509* cert) {
  unsigned char bytes[16];
  RAND_bytes(bytes, sizeof bytes);
  bytes[0] &= 0x7f;
  BIGNUM* bn = BN_bin2bn(bytes, sizeof bytes, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert));
  BN_free(bn);
}

X509Ptr new_cert(X509_NAME* subject, EVP_PKEY* pub, long days) {
  X509Ptr cert(X509_new());
  X509_set_version(cert.get(), 2);
  set_serial(cert.get());
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), days * 86400L);
  X509_set_subject_name(cert.get(), subject);
  X509_set_pubkey(cert.get(), pub);
  return cert;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_private(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(ErrorKind::failed, "cannot write '" + path + "'");
  out << content;
  out.close();
  ::chmod(path.c_str(), 0600);
}

std::string hex(const unsigned char* data, size_t len) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (size_t i = 0; i < len; ++i) {
    out += digits[data[i] >> 4];
    out += digits[data[i] & 15];
  }
  return out;
}

}  // namespace

struct CertAuthority::State {
  X509Ptr cert;
  KeyPtr key;
};

CertAuthority::CertAuthority(const std::string& dir) : m_state(std::make_unique<State>()) {
  std::string cert_path = dir + "/ca.crt", key_path = dir + "/ca.key";
  std::string cert_pem = read_file(cert_path), key_pem = read_file(key_path);
  if (!cert_pem.empty() && !key_pem.empty()) {
    BioPtr cb(BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())));
    BioPtr kb(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
    m_state->cert.reset(PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr));
    m_state->key.reset(PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr));
    if (!m_state->cert || !m_state->key)
      fail(ErrorKind::invalid, "cannot read the simulator CA in '" + dir + "'", "remove ca.crt and ca.key to make a new one");
    m_cert_pem = cert_pem;
    return;
  }
  m_state->key = new_key();
  X509_NAME* name = X509_NAME_new();
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("emco-sim-ca"), -1, -1,
                             0);
  m_state->cert = new_cert(name, m_state->key.get(), 3650);
  X509_set_issuer_name(m_state->cert.get(), name);
  X509_NAME_free(name);
  X509* c = m_state->cert.get();
  add_ext(c, c, NID_basic_constraints, "critical,CA:TRUE");
  add_ext(c, c, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
  add_ext(c, c, NID_subject_key_identifier, "hash");
  if (!X509_sign(c, m_state->key.get(), EVP_sha256())) ssl_fail("cannot sign the CA certificate");
  m_cert_pem = cert_to_pem(c);
  write_private(key_path, key_to_pem(m_state->key.get()));
  write_private(cert_path, m_cert_pem);
}

CertAuthority::~CertAuthority() = default;

KeyPair CertAuthority::issue_server(const std::vector<std::string>& dns_names,
                                    const std::vector<std::string>& ips) const {
  KeyPtr key = new_key();
  X509_NAME* name = X509_NAME_new();
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("emco-sim"), -1, -1, 0);
  X509Ptr cert = new_cert(name, key.get(), 825);
  X509_NAME_free(name);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(m_state->cert.get()));
  std::string san;
  for (const auto& d : dns_names) san += (san.empty() ? "" : ",") + std::string("DNS:") + d;
  for (const auto& ip : ips) san += (san.empty() ? "" : ",") + std::string("IP:") + ip;
  add_ext(cert.get(), m_state->cert.get(), NID_subject_alt_name, san);
  add_ext(cert.get(), m_state->cert.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment");
  add_ext(cert.get(), m_state->cert.get(), NID_ext_key_usage, "serverAuth");
  add_ext(cert.get(), m_state->cert.get(), NID_authority_key_identifier, "keyid");
  if (!X509_sign(cert.get(), m_state->key.get(), EVP_sha256())) ssl_fail("cannot sign the server certificate");
  return {cert_to_pem(cert.get()), key_to_pem(key.get())};
}

KeyPair CertAuthority::issue_client(const std::string& user, const std::vector<std::string>& groups) const {
  KeyPtr key = new_key();
  X509_NAME* name = X509_NAME_new();
  for (const auto& g : groups)
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(g.c_str()), -1, -1,
                               0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(user.c_str()), -1, -1,
                             0);
  X509Ptr cert = new_cert(name, key.get(), 365);
  X509_NAME_free(name);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(m_state->cert.get()));
  add_ext(cert.get(), m_state->cert.get(), NID_key_usage, "critical,digitalSignature");
  add_ext(cert.get(), m_state->cert.get(), NID_ext_key_usage, "clientAuth");
  if (!X509_sign(cert.get(), m_state->key.get(), EVP_sha256())) ssl_fail("cannot sign a client certificate");
  return {cert_to_pem(cert.get()), key_to_pem(key.get())};
}

std::string CertAuthority::sign_request(const std::string& csr_pem, int days, std::string& error) const {
  BioPtr bio(BIO_new_mem_buf(csr_pem.data(), static_cast<int>(csr_pem.size())));
  X509_REQ* req = PEM_read_bio_X509_REQ(bio.get(), nullptr, nullptr, nullptr);
  if (!req) {
    ERR_clear_error();
    error = "PEM block type must be CERTIFICATE REQUEST";
    return {};
  }
  std::unique_ptr<X509_REQ, void (*)(X509_REQ*)> guard(req, X509_REQ_free);
  KeyPtr pub(X509_REQ_get_pubkey(req));
  if (!pub || X509_REQ_verify(req, pub.get()) != 1) {
    ERR_clear_error();
    error = "the certificate request signature is invalid";
    return {};
  }
  X509Ptr cert = new_cert(X509_REQ_get_subject_name(req), pub.get(), days);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(m_state->cert.get()));
  add_ext(cert.get(), m_state->cert.get(), NID_key_usage, "critical,digitalSignature");
  add_ext(cert.get(), m_state->cert.get(), NID_ext_key_usage, "clientAuth");
  add_ext(cert.get(), m_state->cert.get(), NID_basic_constraints, "critical,CA:FALSE");
  if (!X509_sign(cert.get(), m_state->key.get(), EVP_sha256())) {
    ERR_clear_error();
    error = "signing failed";
    return {};
  }
  return cert_to_pem(cert.get());
}

std::string sign_with_ca(const std::string& csr_pem, const std::string& ca_cert_pem, const std::string& ca_key_pem,
                         bool is_ca, long seconds, std::string& error) {
  BioPtr cb(BIO_new_mem_buf(ca_cert_pem.data(), static_cast<int>(ca_cert_pem.size())));
  BioPtr kb(BIO_new_mem_buf(ca_key_pem.data(), static_cast<int>(ca_key_pem.size())));
  X509Ptr ca(PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr));
  KeyPtr ca_key(PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr));
  if (!ca || !ca_key || X509_check_private_key(ca.get(), ca_key.get()) != 1) {
    ERR_clear_error();
    error = "error decoding CA secret: the certificate and key do not parse or do not match";
    return {};
  }
  BioPtr rb(BIO_new_mem_buf(csr_pem.data(), static_cast<int>(csr_pem.size())));
  std::unique_ptr<X509_REQ, void (*)(X509_REQ*)> req(PEM_read_bio_X509_REQ(rb.get(), nullptr, nullptr, nullptr),
                                                     X509_REQ_free);
  if (!req) {
    ERR_clear_error();
    error = "failed to decode CSR in spec.request";
    return {};
  }
  KeyPtr pub(X509_REQ_get_pubkey(req.get()));
  if (!pub || X509_REQ_verify(req.get(), pub.get()) != 1) {
    ERR_clear_error();
    error = "the certificate request signature is invalid";
    return {};
  }
  X509Ptr cert(X509_new());
  X509_set_version(cert.get(), 2);
  set_serial(cert.get());
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), seconds);
  X509_set_subject_name(cert.get(), X509_REQ_get_subject_name(req.get()));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca.get()));
  X509_set_pubkey(cert.get(), pub.get());
  // The request's extensions (subject alternative names) carry over.
  if (STACK_OF(X509_EXTENSION)* exts = X509_REQ_get_extensions(req.get())) {
    for (int i = 0; i < sk_X509_EXTENSION_num(exts); ++i)
      if (OBJ_obj2nid(X509_EXTENSION_get_object(sk_X509_EXTENSION_value(exts, i))) == NID_subject_alt_name)
        X509_add_ext(cert.get(), sk_X509_EXTENSION_value(exts, i), -1);
    sk_X509_EXTENSION_pop_free(exts, X509_EXTENSION_free);
  }
  if (is_ca) {
    add_ext(cert.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE");
    add_ext(cert.get(), ca.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment,keyCertSign");
  } else {
    add_ext(cert.get(), ca.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment");
  }
  add_ext(cert.get(), ca.get(), NID_subject_key_identifier, "hash");
  add_ext(cert.get(), ca.get(), NID_authority_key_identifier, "keyid");
  if (!X509_sign(cert.get(), ca_key.get(), EVP_sha256())) {
    ERR_clear_error();
    error = "signing failed";
    return {};
  }
  return cert_to_pem(cert.get());
}

SSL_CTX* CertAuthority::server_context(const KeyPair& server) const {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) ssl_fail("cannot create a TLS context");
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  BioPtr cb(BIO_new_mem_buf(server.cert_pem.data(), static_cast<int>(server.cert_pem.size())));
  BioPtr kb(BIO_new_mem_buf(server.key_pem.data(), static_cast<int>(server.key_pem.size())));
  X509Ptr cert(PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr));
  KeyPtr key(PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr));
  if (!cert || !key || SSL_CTX_use_certificate(ctx, cert.get()) != 1 || SSL_CTX_use_PrivateKey(ctx, key.get()) != 1) {
    SSL_CTX_free(ctx);
    ssl_fail("cannot load the server certificate");
  }
  SSL_CTX_add_extra_chain_cert(ctx, X509_dup(m_state->cert.get()));
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  X509_STORE_add_cert(store, m_state->cert.get());
  STACK_OF(X509_NAME)* cas = sk_X509_NAME_new_null();
  sk_X509_NAME_push(cas, X509_NAME_dup(X509_get_subject_name(m_state->cert.get())));
  SSL_CTX_set_client_CA_list(ctx, cas);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  static const unsigned char sid[] = "emco-sim";
  SSL_CTX_set_session_id_context(ctx, sid, sizeof sid - 1);
  return ctx;
}

namespace {

CertIdentity identity_of(X509* cert) {
  CertIdentity id;
  X509_NAME* name = X509_get_subject_name(cert);
  for (int i = 0; i < X509_NAME_entry_count(name); ++i) {
    X509_NAME_ENTRY* e = X509_NAME_get_entry(name, i);
    int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(e));
    unsigned char* utf8 = nullptr;
    int len = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(e));
    if (len < 0) continue;
    std::string value(reinterpret_cast<char*>(utf8), static_cast<size_t>(len));
    OPENSSL_free(utf8);
    if (nid == NID_commonName) id.common_name = value;
    if (nid == NID_organizationName) id.orgs.push_back(value);
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  X509_digest(cert, EVP_sha256(), md, &md_len);
  id.fingerprint = hex(md, md_len);
  return id;
}

}  // namespace

CertIdentity identity_of_pem(const std::string& cert_pem) {
  BioPtr bio(BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())));
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return {};
  return identity_of(cert.get());
}

CertIdentity peer_identity(SSL* ssl) {
  X509* cert = ssl ? SSL_get0_peer_certificate(ssl) : nullptr;
  if (!cert || SSL_get_verify_result(ssl) != X509_V_OK) return {};
  return identity_of(cert);
}

std::string hmac_hex(const std::string& secret, const std::string& message) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), md, &len);
  return hex(md, len);
}

std::string random_hex(size_t bytes) {
  std::vector<unsigned char> buf(bytes);
  RAND_bytes(buf.data(), static_cast<int>(bytes));
  return hex(buf.data(), bytes);
}

}  // namespace emco::sim::detail
