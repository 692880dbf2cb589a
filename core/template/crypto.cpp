// Sprig's hashing, password, certificate, AES and random functions on OpenSSL (bcrypt through
// libxcrypt's crypt_r).
#include <arpa/inet.h>
#include <crypt.h>
#include <netdb.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/template/funcs.hpp"
#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "core/util/openssl_init.hpp"
#include "core/util/sha256.hpp"
#include "core/util/utf8.hpp"

namespace emco::tmpl {

namespace {

using Args = std::vector<Value>;

std::string hex(const unsigned char* d, size_t n) {
  static const char* h = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(h[d[i] >> 4]);
    out.push_back(h[d[i] & 15]);
  }
  return out;
}

std::string digest(const EVP_MD* md, const std::string& in) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(in.data(), in.size(), out, &n, md, nullptr);
  return hex(out, n);
}

std::string random_from(Context& c, std::int64_t count, std::string_view chars) {
  if (count < 0) func_fail("Requested random count " + std::to_string(count) + " is less than 0.");
  if (count > (1 << 20)) func_fail("requested random count is too large");
  std::string out;
  out.reserve(static_cast<size_t>(count));
  // rejection sampling for an unbiased pick
  size_t n = chars.size();
  unsigned limit = 256 - (256 % static_cast<unsigned>(n));
  while (out.size() < static_cast<size_t>(count)) {
    unsigned char buf[64];
    c.random_bytes(buf, sizeof buf);
    for (unsigned char b : buf) {
      if (b >= limit) continue;
      out.push_back(chars[b % n]);
      if (out.size() == static_cast<size_t>(count)) break;
    }
  }
  return out;
}

constexpr std::string_view k_alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
constexpr std::string_view k_alpha = k_alnum.substr(0, 52);
constexpr std::string_view k_digits = k_alnum.substr(52);

std::uint64_t random_u64(Context& c) {
  unsigned char b[8];
  c.random_bytes(b, 8);
  std::uint64_t v = 0;
  for (unsigned char x : b) v = (v << 8) | x;
  return v;
}

// ---- PEM / X.509 ----
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;

std::string bio_string(BIO* b) {
  char* data = nullptr;
  long n = BIO_get_mem_data(b, &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string key_pem(EVP_PKEY* k, bool traditional) {
  BioPtr b(BIO_new(BIO_s_mem()));
  int ok = traditional ? PEM_write_bio_PrivateKey_traditional(b.get(), k, nullptr, nullptr, 0, nullptr, nullptr)
                       : PEM_write_bio_PrivateKey(b.get(), k, nullptr, nullptr, 0, nullptr, nullptr);
  if (!ok) func_fail("error encoding private key");
  return bio_string(b.get());
}

std::string cert_pem(X509* x) {
  BioPtr b(BIO_new(BIO_s_mem()));
  if (!PEM_write_bio_X509(b.get(), x)) func_fail("error encoding certificate");
  return bio_string(b.get());
}

// ---- RSA key generation ----
// Keys come from OpenSSL's own generator (EVP_PKEY_keygen: FIPS 186-4 primes, a few hundred
// milliseconds of CPU for 2048 bits, seconds for 4096) and charts call genCA/genSignedCert
// several times per render, so keys are made ahead of need: the second request for a size
// starts generating on as many other threads as the machine has spare cores, and every
// request takes the oldest key under way (or made) and starts the next. Consecutive requests
// then overlap with each other and with the rest of the render; on an idle machine the wait
// for a key shrinks by the number of cores. Every key is its own EVP_PKEY_keygen call on
// OpenSSL's RNG, independent of all others, and is handed out once. Keys still being made
// when the process exits are abandoned through OpenSSL's progress callback.
[[noreturn]] void keygen_fail() { func_fail("error generating RSA key"); }

class RsaKeyPool {
public:
  static RsaKeyPool& instance() {
    // OpenSSL's cleanup then runs after this pool's destructor: a key still being made never
    // finds OpenSSL gone.
    initialise_openssl();
    static RsaKeyPool pool;
    return pool;
  }

  ~RsaKeyPool() { m_closing = true; }  // then m_ahead's futures wait for the abandoned keys

  PkeyPtr take(unsigned bits) {
    std::future<PkeyPtr> mine;
    {
      std::lock_guard lock(m_mutex);
      auto& ahead = m_ahead[bits];
      if (!ahead.empty()) {
        mine = std::move(ahead.front());
        ahead.pop_front();
      }
      // The first request for a size starts nothing ahead: a render that needs one key
      // (genPrivateKey, one genCA) would otherwise pay the CPU of a second one it throws away.
      const size_t spare = std::max(1u, std::thread::hardware_concurrency()) - 1;
      const bool again = m_requests[bits]++ > 0;
      while (again && ahead.size() < std::max<size_t>(1, spare))
        ahead.push_back(std::async(std::launch::async, [this, bits] { return generate(bits, this); }));
    }
    return mine.valid() ? mine.get() : generate(bits, nullptr);
  }

private:
  RsaKeyPool() = default;

  // A key from EVP_PKEY_keygen; a pool's background generation stops when the pool closes.
  static PkeyPtr generate(unsigned bits, RsaKeyPool* pool) {
    if (pool && pool->m_closing) keygen_fail();
    EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr);
    EVP_PKEY* key = nullptr;
    bool ok = ctx && EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, static_cast<int>(bits)) == 1;
    if (ok && pool) {
      EVP_PKEY_CTX_set_app_data(ctx, pool);
      EVP_PKEY_CTX_set_cb(ctx, [](EVP_PKEY_CTX* c) {
        return static_cast<RsaKeyPool*>(EVP_PKEY_CTX_get_app_data(c))->m_closing.load() ? 0 : 1;
      });
    }
    ok = ok && EVP_PKEY_keygen(ctx, &key) == 1;
    EVP_PKEY_CTX_free(ctx);
    if (!ok) keygen_fail();
    return PkeyPtr(key);
  }

  std::atomic<bool> m_closing{false};
  std::mutex m_mutex;
  std::map<unsigned, std::deque<std::future<PkeyPtr>>> m_ahead;  // keys under way or made, per size
  std::map<unsigned, unsigned long> m_requests;                   // keys taken so far, per size
};

PkeyPtr rsa_key(unsigned bits) { return RsaKeyPool::instance().take(bits); }

PkeyPtr parse_key(const std::string& pem) {
  BioPtr b(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  PkeyPtr k(PEM_read_bio_PrivateKey(b.get(), nullptr, nullptr, nullptr));
  if (!k) func_fail("error decoding private key: no PEM data found");
  return k;
}

X509Ptr parse_cert(const std::string& pem) {
  BioPtr b(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509Ptr x(PEM_read_bio_X509(b.get(), nullptr, nullptr, nullptr));
  if (!x) func_fail("error parsing certificate: no PEM data found");
  return x;
}

void add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) func_fail("error adding certificate extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

std::string san_list(const Value& ips, const Value& dns) {
  std::string out;
  auto add = [&](const std::string& s) {
    if (!out.empty()) out += ",";
    out += s;
  };
  Value h1, h2;
  if (const List* l = as_list_like(ips, h1)) {
    for (const auto& v : *l) {
      if (!v.is_string()) func_fail("error processing IPs: expected string, got " + v.go_type());
      unsigned char buf[16];
      if (inet_pton(AF_INET, v.as_string().c_str(), buf) != 1 && inet_pton(AF_INET6, v.as_string().c_str(), buf) != 1)
        func_fail("error parsing ip: " + v.as_string());
      add("IP:" + v.as_string());
    }
  } else if (!ips.is_null()) {
    func_fail("error processing IPs: expected a list");
  }
  if (const List* l = as_list_like(dns, h2)) {
    for (const auto& v : *l) {
      if (!v.is_string()) func_fail("error processing alternate dns name: expected string, got " + v.go_type());
      add("DNS:" + v.as_string());
    }
  } else if (!dns.is_null()) {
    func_fail("error processing alternate dns names: expected a list");
  }
  return out;
}

// Sprig's certificate: {Cert, Key} as PEM strings
Value make_cert(Context& c, const std::string& cn, const Value& ips, const Value& dns, std::int64_t days, bool is_ca,
                EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key) {
  X509Ptr x(X509_new());
  X509_set_version(x.get(), 2);
  unsigned char serial[16];
  c.random_bytes(serial, sizeof serial);
  serial[0] &= 0x7F;
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x.get()));
  BN_free(bn);
  X509_NAME* name = X509_get_subject_name(x.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(x.get(), issuer ? X509_get_subject_name(issuer) : name);
  X509_gmtime_adj(X509_getm_notBefore(x.get()), 0);
  X509_gmtime_adj(X509_getm_notAfter(x.get()), static_cast<long>(days) * 24 * 3600);
  X509_set_pubkey(x.get(), key);
  X509* iss = issuer ? issuer : x.get();
  if (is_ca) {
    add_ext(x.get(), iss, NID_key_usage, "critical,digitalSignature,keyEncipherment,keyCertSign");
  } else {
    add_ext(x.get(), iss, NID_key_usage, "critical,digitalSignature,keyEncipherment");
  }
  add_ext(x.get(), iss, NID_ext_key_usage, "serverAuth,clientAuth");
  add_ext(x.get(), iss, NID_basic_constraints, is_ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
  if (is_ca) add_ext(x.get(), iss, NID_subject_key_identifier, "hash");
  if (issuer) add_ext(x.get(), iss, NID_authority_key_identifier, "keyid:always");
  std::string sans = san_list(ips, dns);
  if (!sans.empty()) add_ext(x.get(), iss, NID_subject_alt_name, sans);
  if (!X509_sign(x.get(), issuer_key ? issuer_key : key, EVP_sha256())) func_fail("error signing certificate");
  Map out;
  out["Cert"] = Value(cert_pem(x.get()));
  out["Key"] = Value(key_pem(key, true));
  return Value(std::move(out));
}

std::string field_of(const Value& v, const char* name) {
  const Value* f = v.find(name);
  if (!f || !f->is_string()) func_fail(std::string("certificate is missing its ") + name);
  return f->as_string();
}

std::string aes_key(const std::string& password) {
  std::string key(32, '\0');
  std::memcpy(key.data(), password.data(), std::min<size_t>(32, password.size()));
  return key;
}

}  // namespace

std::string rsa_private_key_pem(unsigned bits) { return key_pem(rsa_key(bits).get(), true); }

void register_sprig_crypto(FuncMap& m) {
  m["sha1sum"] = {[](Context&, Args& a) { return Value(digest(EVP_sha1(), a[0].as_string())); }, "s"};
  m["sha256sum"] = {[](Context&, Args& a) { return Value(sha256_hex(a[0].as_string())); }, "s"};
  m["sha512sum"] = {[](Context&, Args& a) { return Value(digest(EVP_sha512(), a[0].as_string())); }, "s"};
  m["adler32sum"] = {[](Context&, Args& a) {
                       const std::string& s = a[0].as_string();
                       uLong v = adler32(1L, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size()));
                       return Value(std::to_string(v));
                     },
                     "s"};
  m["htpasswd"] = {[](Context& c, Args& a) -> Value {
                     const std::string& user = a[0].as_string();
                     if (user.find(':') != std::string::npos) return Value("invalid username: " + user);
                     unsigned char rnd[16];
                     c.random_bytes(rnd, sizeof rnd);
                     char setting[CRYPT_GENSALT_OUTPUT_SIZE];
                     if (!crypt_gensalt_rn("$2a$", 10, reinterpret_cast<const char*>(rnd), sizeof rnd, setting, sizeof setting))
                       func_fail("bcrypt: cannot generate salt");
                     crypt_data data;
                     std::memset(&data, 0, sizeof data);
                     const char* hash = crypt_r(a[1].as_string().c_str(), setting, &data);
                     if (!hash || hash[0] == '*') func_fail("bcrypt: hashing failed");
                     return Value(user + ":" + hash);
                   },
                   "ss"};
  m["derivePassword"] = {[](Context&, Args& a) -> Value {
                           static const std::map<std::string, std::vector<std::string>> templates = {
                               {"maximum", {"anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"}},
                               {"long", {"CvcvnoCvcvCvcv", "CvcvCvcvnoCvcv", "CvcvCvcvCvcvno", "CvccnoCvcvCvcv", "CvccCvcvnoCvcv",
                                         "CvccCvcvCvcvno", "CvcvnoCvccCvcv", "CvcvCvccnoCvcv", "CvcvCvccCvcvno", "CvcvnoCvcvCvcc",
                                         "CvcvCvcvnoCvcc", "CvcvCvcvCvccno", "CvccnoCvccCvcv", "CvccCvccnoCvcv", "CvccCvccCvcvno",
                                         "CvcvnoCvccCvcc", "CvcvCvccnoCvcc", "CvcvCvccCvccno", "CvccnoCvcvCvcc", "CvccCvcvnoCvcc",
                                         "CvccCvcvCvccno"}},
                               {"medium", {"CvcnoCvc", "CvcCvcno"}},
                               {"short", {"Cvcn"}},
                               {"basic", {"aaanaaan", "aannaaan", "aaannaaa"}},
                               {"pin", {"nnnn"}}};
                           static const std::map<char, std::string> chars = {
                               {'V', "AEIOU"},
                               {'C', "BCDFGHJKLMNPQRSTVWXYZ"},
                               {'v', "aeiou"},
                               {'c', "bcdfghjklmnpqrstvwxyz"},
                               {'A', "AEIOUBCDFGHJKLMNPQRSTVWXYZ"},
                               {'a', "AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz"},
                               {'n', "0123456789"},
                               {'o', "@&%?,=[]_:-+*$#!'^~;()/."},
                               {'x', "AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()"}};
                           std::uint32_t counter = static_cast<std::uint32_t>(a[0].as_int());
                           const std::string& type = a[1].as_string();
                           auto t = templates.find(type);
                           if (t == templates.end()) return Value("cannot find password template " + type);
                           const std::string& password = a[2].as_string();
                           const std::string& user = a[3].as_string();
                           const std::string& site = a[4].as_string();
                           auto be32 = [](std::string& s, std::uint32_t v) {
                             for (int k = 3; k >= 0; --k) s.push_back(static_cast<char>((v >> (k * 8)) & 0xFF));
                           };
                           std::string seed = "com.lyndir.masterpassword";
                           std::string salt = seed;
                           be32(salt, static_cast<std::uint32_t>(user.size()));
                           salt += user;
                           unsigned char key[64];
                           if (!EVP_PBE_scrypt(password.data(), password.size(), reinterpret_cast<const unsigned char*>(salt.data()),
                                               salt.size(), 32768, 8, 2, 64ull << 20, key, sizeof key))
                             return Value("failed to derive password: scrypt failed");
                           std::string msg = seed;
                           be32(msg, static_cast<std::uint32_t>(site.size()));
                           msg += site;
                           be32(msg, counter);
                           unsigned char mac[32];
                           unsigned int maclen = 0;
                           HMAC(EVP_sha256(), key, sizeof key, reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), mac, &maclen);
                           const std::string& tmpl = t->second[mac[0] % t->second.size()];
                           std::string out;
                           for (size_t i = 0; i < tmpl.size(); ++i) {
                             const std::string& pc = chars.at(tmpl[i]);
                             out.push_back(pc[mac[i + 1] % pc.size()]);
                           }
                           return Value(out);
                         },
                         "issss"};
  m["genPrivateKey"] = {[](Context&, Args& a) -> Value {
                          const std::string& t = a[0].as_string();
                          if (t == "" || t == "rsa") return Value(rsa_private_key_pem(4096));
                          if (t == "ecdsa") {
                            PkeyPtr k(EVP_EC_gen("P-256"));
                            if (!k) func_fail("error generating ecdsa key");
                            return Value(key_pem(k.get(), true));
                          }
                          if (t == "ed25519") {
                            PkeyPtr k(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
                            if (!k) func_fail("error generating ed25519 key");
                            return Value(key_pem(k.get(), false));
                          }
                          if (t == "dsa") {
                            PkeyPtr params(EVP_PKEY_Q_keygen(nullptr, nullptr, "DSA", static_cast<size_t>(2048)));
                            if (!params) func_fail("error generating dsa key");
                            return Value(key_pem(params.get(), true));
                          }
                          return Value("Unknown type " + t);
                        },
                        "s"};
  m["genCA"] = {[](Context& c, Args& a) {
                  auto key = rsa_key(2048);
                  return make_cert(c, a[0].as_string(), Value(), Value(), a[1].as_int(), true, key.get(), nullptr, nullptr);
                },
                "si"};
  m["genCAWithKey"] = {[](Context& c, Args& a) {
                         auto key = parse_key(a[2].as_string());
                         return make_cert(c, a[0].as_string(), Value(), Value(), a[1].as_int(), true, key.get(), nullptr, nullptr);
                       },
                       "sis"};
  m["genSelfSignedCert"] = {[](Context& c, Args& a) {
                              auto key = rsa_key(2048);
                              return make_cert(c, a[0].as_string(), a[1], a[2], a[3].as_int(), false, key.get(), nullptr, nullptr);
                            },
                            "slli"};
  m["genSelfSignedCertWithKey"] = {[](Context& c, Args& a) {
                                     auto key = parse_key(a[4].as_string());
                                     return make_cert(c, a[0].as_string(), a[1], a[2], a[3].as_int(), false, key.get(), nullptr, nullptr);
                                   },
                                   "sllis"};
  m["genSignedCert"] = {[](Context& c, Args& a) {
                          auto ca_cert = parse_cert(field_of(a[4], "Cert"));
                          auto ca_key = parse_key(field_of(a[4], "Key"));
                          auto key = rsa_key(2048);
                          return make_cert(c, a[0].as_string(), a[1], a[2], a[3].as_int(), false, key.get(), ca_cert.get(),
                                           ca_key.get());
                        },
                        "sllia"};
  m["genSignedCertWithKey"] = {[](Context& c, Args& a) {
                                 auto ca_cert = parse_cert(field_of(a[4], "Cert"));
                                 auto ca_key = parse_key(field_of(a[4], "Key"));
                                 auto key = parse_key(a[5].as_string());
                                 return make_cert(c, a[0].as_string(), a[1], a[2], a[3].as_int(), false, key.get(), ca_cert.get(),
                                                  ca_key.get());
                               },
                               "sllias"};
  m["buildCustomCert"] = {[](Context&, Args& a) -> Value {
                            auto cert = base64_decode(a[0].as_string());
                            if (!cert) func_fail("unable to decode base64 certificate");
                            auto key = base64_decode(a[1].as_string());
                            if (!key) func_fail("unable to decode base64 private key");
                            parse_cert(*cert);
                            parse_key(*key);
                            Map out;
                            out["Cert"] = Value(*cert);
                            out["Key"] = Value(*key);
                            return Value(std::move(out));
                          },
                          "ss"};
  m["encryptAES"] = {[](Context& c, Args& a) -> Value {
                       const std::string& plain = a[1].as_string();
                       if (plain.empty()) return Value("");
                       std::string key = aes_key(a[0].as_string());
                       unsigned char iv[16];
                       c.random_bytes(iv, sizeof iv);
                       size_t pad = 16 - plain.size() % 16;
                       std::string content = plain + std::string(pad, static_cast<char>(pad));
                       std::string out(reinterpret_cast<char*>(iv), 16);
                       out.resize(16 + content.size());
                       EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
                       EVP_EncryptInit_ex(ctx, EVP_aes_256_cbc(), nullptr, reinterpret_cast<const unsigned char*>(key.data()), iv);
                       EVP_CIPHER_CTX_set_padding(ctx, 0);
                       int n = 0;
                       EVP_EncryptUpdate(ctx, reinterpret_cast<unsigned char*>(out.data()) + 16, &n,
                                         reinterpret_cast<const unsigned char*>(content.data()), static_cast<int>(content.size()));
                       EVP_CIPHER_CTX_free(ctx);
                       return Value(base64_encode(out));
                     },
                     "ss"};
  m["decryptAES"] = {[](Context&, Args& a) -> Value {
                       auto decoded = base64_decode(a[1].as_string());
                       if (!decoded) func_fail("illegal base64 data");
                       const std::string& data = *decoded;
                       if (data.size() < 16) func_fail("ciphertext too short");
                       if ((data.size() - 16) % 16 != 0) func_fail("crypto/cipher: input not full blocks");
                       std::string key = aes_key(a[0].as_string());
                       std::string out(data.size() - 16, '\0');
                       EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
                       EVP_DecryptInit_ex(ctx, EVP_aes_256_cbc(), nullptr, reinterpret_cast<const unsigned char*>(key.data()),
                                          reinterpret_cast<const unsigned char*>(data.data()));
                       EVP_CIPHER_CTX_set_padding(ctx, 0);
                       int n = 0;
                       EVP_DecryptUpdate(ctx, reinterpret_cast<unsigned char*>(out.data()), &n,
                                         reinterpret_cast<const unsigned char*>(data.data()) + 16, static_cast<int>(out.size()));
                       EVP_CIPHER_CTX_free(ctx);
                       if (out.empty()) return Value("");
                       size_t pad = static_cast<unsigned char>(out.back());
                       if (pad > out.size()) func_fail("runtime error: slice bounds out of range");
                       out.resize(out.size() - pad);
                       return Value(out);
                     },
                     "ss"};
  m["randAlphaNum"] = {[](Context& c, Args& a) { return Value(random_from(c, a[0].as_int(), k_alnum)); }, "i"};
  m["randAlpha"] = {[](Context& c, Args& a) { return Value(random_from(c, a[0].as_int(), k_alpha)); }, "i"};
  m["randNumeric"] = {[](Context& c, Args& a) { return Value(random_from(c, a[0].as_int(), k_digits)); }, "i"};
  m["randAscii"] = {[](Context& c, Args& a) {
                      std::string printable;
                      for (char ch = 32; ch < 127; ++ch) printable.push_back(ch);
                      return Value(random_from(c, a[0].as_int(), printable));
                    },
                    "i"};
  m["randBytes"] = {[](Context& c, Args& a) -> Value {
                      std::int64_t n = a[0].as_int();
                      if (n < 0 || n > (1 << 20)) func_fail("randBytes: invalid count");
                      std::string buf(static_cast<size_t>(n), '\0');
                      c.random_bytes(reinterpret_cast<unsigned char*>(buf.data()), buf.size());
                      return Value(base64_encode(buf));
                    },
                    "i"};
  m["randInt"] = {[](Context& c, Args& a) -> Value {
                    std::int64_t lo = a[0].as_int(), hi = a[1].as_int();
                    if (hi - lo <= 0) func_fail("invalid argument to Intn");
                    return Value::integer(lo + static_cast<std::int64_t>(random_u64(c) % static_cast<std::uint64_t>(hi - lo)),
                                          IntType::int_);
                  },
                  "ii"};
  m["uuidv4"] = {[](Context& c, Args&) {
                   unsigned char u[16];
                   c.random_bytes(u, sizeof u);
                   u[6] = static_cast<unsigned char>((u[6] & 0x0F) | 0x40);
                   u[8] = static_cast<unsigned char>((u[8] & 0x3F) | 0x80);
                   std::string h = hex(u, 16);
                   return Value(h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" +
                                h.substr(20));
                 },
                 ""};
  m["shuffle"] = {[](Context& c, Args& a) {
                    const std::string& s = a[0].as_string();
                    std::vector<char32_t> runes;  // Go's []rune(s)
                    for (size_t i = 0; i < s.size();) {
                      char32_t r;
                      i += utf8::decode(s, i, r);
                      runes.push_back(r);
                    }
                    for (size_t i = runes.size(); i > 1; --i) std::swap(runes[i - 1], runes[random_u64(c) % i]);
                    std::string out;
                    for (char32_t r : runes) utf8::append(out, r);
                    return Value(out);
                  },
                  "s"};
  m["getHostByName"] = {[](Context&, Args& a) -> Value {
                          addrinfo hints{};
                          hints.ai_family = AF_UNSPEC;
                          hints.ai_socktype = SOCK_STREAM;
                          addrinfo* res = nullptr;
                          if (getaddrinfo(a[0].as_string().c_str(), nullptr, &hints, &res) != 0 || !res)
                            func_fail("lookup " + a[0].as_string() + ": no such host");
                          char buf[INET6_ADDRSTRLEN] = {0};
                          if (res->ai_family == AF_INET)
                            inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr, buf, sizeof buf);
                          else
                            inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(res->ai_addr)->sin6_addr, buf, sizeof buf);
                          freeaddrinfo(res);
                          return Value(std::string(buf));
                        },
                        "s"};
}

}  // namespace emco::tmpl
