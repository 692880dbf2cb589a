// Sprig's hashing, password, certificate, AES and random functions on OpenSSL (bcrypt through
// libxcrypt's crypt_r).
#include <arpa/inet.h>
#include <crypt.h>
#include <netdb.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <future>
#include <memory>
#include <vector>

#include "core/template/funcs.hpp"
#include "core/util/error.hpp"

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

std::string b64(const std::string& in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

bool unb64(const std::string& in, std::string& out) {
  std::string clean;
  for (char c : in)
    if (c != '\n' && c != '\r') clean.push_back(c);
  if (clean.size() % 4 != 0) return false;
  out.assign(clean.size() / 4 * 3 + 1, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), reinterpret_cast<const unsigned char*>(clean.data()),
                          static_cast<int>(clean.size()));
  if (n < 0) return false;
  size_t pad = 0;
  if (!clean.empty() && clean.back() == '=') ++pad;
  if (clean.size() > 1 && clean[clean.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return true;
}

std::string random_from(Context& c, std::int64_t count, const std::string& chars) {
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

const std::string k_alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const std::string k_digits = "0123456789";

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
// OpenSSL 3's FIPS 186-4 generator runs 64 Miller-Rabin rounds per prime and costs ~150 ms for
// a 2048-bit key; charts call genCA/genSignedCert several times per render. Like Go's
// crypto/rsa, each prime comes from an incremental search: a random odd start, a window of
// candidates sieved against the odd primes below 2^16, and Miller-Rabin on random bases
// (OpenSSL's RNG throughout) for the survivors. Composites almost always fail the first round,
// so the cost is one modular exponentiation per sieve survivor plus the rounds of FIPS 186-5
// Table B.1 on the prime found (5 for 1024-bit primes, error probability 2^-112; 4 above).
// Exponentiations run two at a time where the CPU makes that cheaper (see pairs_pay), and the
// two primes of a key are searched on two threads: the wait for a key is half as long.
struct BnFree {
  void operator()(BIGNUM* b) const { BN_clear_free(b); }
};
struct CtxFree {
  void operator()(BN_CTX* c) const { BN_CTX_free(c); }
};
struct MontFree {
  void operator()(BN_MONT_CTX* m) const { BN_MONT_CTX_free(m); }
};
using BnPtr = std::unique_ptr<BIGNUM, BnFree>;
using CtxPtr = std::unique_ptr<BN_CTX, CtxFree>;
using MontPtr = std::unique_ptr<BN_MONT_CTX, MontFree>;

// The odd primes below 2^16, grouped so that each group's product fits in 32 bits: one
// BN_mod_word per group (its fast path takes a divisor up to 2^32) gives the residues of the
// whole group.
struct SievePrimes {
  std::vector<std::uint32_t> primes;
  std::vector<std::uint32_t> group_product;  // product of primes[group_start[g] .. group_start[g+1])
  std::vector<std::size_t> group_start;      // one more entry than group_product
};

const SievePrimes& sieve_primes() {
  static const SievePrimes table = [] {
    SievePrimes t;
    const std::uint32_t limit = 1u << 16;
    std::vector<bool> composite(limit, false);
    for (std::uint32_t i = 3; i < limit; i += 2) {
      if (composite[i]) continue;
      t.primes.push_back(i);
      for (std::uint64_t j = std::uint64_t{i} * i; j < limit; j += 2 * i) composite[j] = true;
    }
    std::uint64_t product = 1;
    t.group_start.push_back(0);
    for (std::size_t i = 0; i < t.primes.size(); ++i) {
      if (product * t.primes[i] > 0xffffffffULL) {
        t.group_product.push_back(static_cast<std::uint32_t>(product));
        t.group_start.push_back(i);
        product = 1;
      }
      product *= t.primes[i];
    }
    t.group_product.push_back(static_cast<std::uint32_t>(product));
    t.group_start.push_back(t.primes.size());
    return t;
  }();
  return table;
}

int miller_rabin_rounds(int bits) {
  if (bits <= 512) return 8;
  return bits <= 1024 ? 5 : 4;
}

[[noreturn]] void keygen_fail() { func_fail("error generating RSA key"); }

// One Miller-Rabin candidate w (odd, > 3): w - 1 = 2^s * d with d odd.
class MrCandidate {
public:
  MrCandidate(const BIGNUM* w, BN_CTX* ctx)
      : m_w(BN_dup(w)), m_w1(BN_dup(w)), m_d(BN_new()), m_range(BN_dup(w)), m_mont(BN_MONT_CTX_new()) {
    if (!m_w || !m_w1 || !m_d || !m_range || !m_mont || !BN_MONT_CTX_set(m_mont.get(), w, ctx)) keygen_fail();
    BN_sub_word(m_w1.get(), 1);
    while (!BN_is_bit_set(m_w1.get(), m_s)) ++m_s;
    BN_rshift(m_d.get(), m_w1.get(), m_s);
    BN_sub_word(m_range.get(), 3);
  }
  const BIGNUM* w() const { return m_w.get(); }
  const BIGNUM* d() const { return m_d.get(); }
  BN_MONT_CTX* mont() const { return m_mont.get(); }
  // A random base b in [2, w-2].
  void random_base(BIGNUM* b) const {
    if (!BN_priv_rand_range(b, m_range.get()) || !BN_add_word(b, 2)) keygen_fail();
  }
  // Ends a round from z = b^d mod w: false when b witnesses that w is composite.
  bool round_passes(BIGNUM* z, BN_CTX* ctx) const {
    if (BN_is_one(z) || BN_cmp(z, m_w1.get()) == 0) return true;
    for (int j = 1; j < m_s; ++j) {
      if (!BN_mod_sqr(z, z, m_w.get(), ctx)) keygen_fail();
      if (BN_cmp(z, m_w1.get()) == 0) return true;
      if (BN_is_one(z)) return false;
    }
    return false;
  }

private:
  BnPtr m_w, m_w1, m_d, m_range;
  MontPtr m_mont;
  int m_s = 0;
};

// OpenSSL computes two 1024-bit exponentiations at once with AVX-512 IFMA about 2.3 times
// faster than one after the other (BN_mod_exp_mont_consttime_x2, which RSA-2048 signing
// uses). Without IFMA that function falls back to two constant-time exponentiations, slower
// than plain BN_mod_exp_mont, so pairing is only used where it pays.
bool pairs_pay(int bits) {
  static const bool ifma = __builtin_cpu_supports("avx512ifma") && __builtin_cpu_supports("avx512vl") &&
                           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
  return ifma && bits == 1024;
}

// z1 = b1^d(c1) mod w(c1) and z2 = b2^d(c2) mod w(c2).
void mod_exp_pair(BIGNUM* z1, const BIGNUM* b1, const MrCandidate& c1, BIGNUM* z2, const BIGNUM* b2,
                  const MrCandidate& c2, BN_CTX* ctx) {
  if (!BN_mod_exp_mont_consttime_x2(z1, b1, c1.d(), c1.w(), c1.mont(), z2, b2, c2.d(), c2.w(), c2.mont(), ctx))
    keygen_fail();
}

// The rounds after the first on a candidate that passed it; true if it passes them all.
bool remaining_rounds_pass(const MrCandidate& c, int rounds, bool paired, BN_CTX* ctx) {
  BnPtr b1(BN_new()), b2(BN_new()), z1(BN_new()), z2(BN_new());
  if (!b1 || !b2 || !z1 || !z2) keygen_fail();
  int left = rounds - 1;
  while (left > 0) {
    c.random_base(b1.get());
    if (paired && left >= 2) {
      c.random_base(b2.get());
      mod_exp_pair(z1.get(), b1.get(), c, z2.get(), b2.get(), c, ctx);
      if (!c.round_passes(z1.get(), ctx) || !c.round_passes(z2.get(), ctx)) return false;
      left -= 2;
      continue;
    }
    if (!BN_mod_exp_mont(z1.get(), b1.get(), c.d(), c.w(), ctx, c.mont())) keygen_fail();
    if (!c.round_passes(z1.get(), ctx)) return false;
    --left;
  }
  return true;
}

// The sieve survivors of random windows, in order: base + 2k for k < k_window, where base is
// a random odd number of `bits` bits with the top two bits set (so p*q has all its bits), no
// odd prime below 2^16 divides base + 2k, and base + 2k - 1 is coprime to e = 65537.
class PrimeCandidates {
public:
  explicit PrimeCandidates(int bits) : m_bits(bits), m_base(BN_new()), m_sieve(k_window) {
    if (!m_base) keygen_fail();
  }

  // Sets `out` to the next survivor (a new window when this one is used up).
  void next(BIGNUM* out) {
    while (true) {
      if (m_k >= k_window) new_window();
      for (; m_k < k_window; ++m_k) {
        const std::uint32_t k = m_k;
        if (m_sieve[k] || (m_residue_e + 2 * std::uint64_t{k}) % k_e == 1) continue;
        if (!BN_copy(out, m_base.get()) || !BN_add_word(out, static_cast<BN_ULONG>(2) * k)) keygen_fail();
        if (BN_num_bits(out) != m_bits) break;  // ran past 2^bits: start afresh
        ++m_k;
        return;
      }
      m_k = k_window;
    }
  }

private:
  static constexpr std::uint32_t k_window = 1u << 13;
  static constexpr std::uint32_t k_e = 65537;

  void new_window() {
    const SievePrimes& sp = sieve_primes();
    if (!BN_priv_rand(m_base.get(), m_bits, BN_RAND_TOP_TWO, BN_RAND_BOTTOM_ODD)) keygen_fail();
    std::fill(m_sieve.begin(), m_sieve.end(), 0);
    for (std::size_t g = 0; g < sp.group_product.size(); ++g) {
      BN_ULONG group_residue = BN_mod_word(m_base.get(), sp.group_product[g]);
      for (std::size_t i = sp.group_start[g]; i < sp.group_start[g + 1]; ++i) {
        const std::uint64_t p = sp.primes[i];
        // base + 2k = 0 (mod p)  <=>  k = -residue * 2^-1 (mod p), with 2^-1 = (p+1)/2
        std::uint64_t residue = group_residue % p;
        std::uint64_t k = (p - residue) % p * ((p + 1) / 2) % p;
        for (; k < k_window; k += p) m_sieve[k] = 1;
      }
    }
    m_residue_e = BN_mod_word(m_base.get(), k_e);
    m_k = 0;
  }

  int m_bits;
  BnPtr m_base;
  std::vector<std::uint8_t> m_sieve;
  std::uint64_t m_residue_e = 0;
  std::uint32_t m_k = k_window;
};

// The first survivor that passes Miller-Rabin: a random prime of exactly `bits` bits with the
// top two bits set and p-1 coprime to 65537. With pairing, survivors are tested two at a time
// (the first round of both at once, then the later rounds two bases at a time); the earlier
// of the two wins, so the result is the same as testing one after the other.
BnPtr random_prime(int bits, bool pair_exponentiations) {
  const int rounds = miller_rabin_rounds(bits);
  const bool paired = pair_exponentiations && pairs_pay(bits);
  CtxPtr ctx(BN_CTX_new());
  BnPtr w1(BN_new()), w2(BN_new()), b1(BN_new()), b2(BN_new()), z1(BN_new()), z2(BN_new());
  if (!ctx || !w1 || !w2 || !b1 || !b2 || !z1 || !z2) keygen_fail();
  PrimeCandidates candidates(bits);
  while (true) {
    candidates.next(w1.get());
    MrCandidate c1(w1.get(), ctx.get());
    c1.random_base(b1.get());
    if (!paired) {
      if (!BN_mod_exp_mont(z1.get(), b1.get(), c1.d(), c1.w(), ctx.get(), c1.mont())) keygen_fail();
      if (c1.round_passes(z1.get(), ctx.get()) && remaining_rounds_pass(c1, rounds, false, ctx.get()))
        return BnPtr(BN_dup(c1.w()));
      continue;
    }
    candidates.next(w2.get());
    MrCandidate c2(w2.get(), ctx.get());
    c2.random_base(b2.get());
    mod_exp_pair(z1.get(), b1.get(), c1, z2.get(), b2.get(), c2, ctx.get());
    if (c1.round_passes(z1.get(), ctx.get()) && remaining_rounds_pass(c1, rounds, true, ctx.get()))
      return BnPtr(BN_dup(c1.w()));
    if (c2.round_passes(z2.get(), ctx.get()) && remaining_rounds_pass(c2, rounds, true, ctx.get()))
      return BnPtr(BN_dup(c2.w()));
  }
}

PkeyPtr rsa_key(unsigned bits, bool pair_exponentiations = true) {
  CtxPtr ctx(BN_CTX_new());
  BnPtr e(BN_new());
  BN_set_word(e.get(), 65537);
  const int p_bits = static_cast<int>(bits - bits / 2), q_bits = static_cast<int>(bits / 2);
  while (true) {
    auto q_search = std::async(std::launch::async, random_prime, q_bits, pair_exponentiations);
    BnPtr p = random_prime(p_bits, pair_exponentiations);
    BnPtr q = q_search.get();
    if (BN_cmp(p.get(), q.get()) < 0) std::swap(p, q);
    // FIPS 186-5 A.1.3: |p - q| > 2^(nlen/2 - 100), which also rules out p == q.
    BnPtr gap(BN_new());
    BN_sub(gap.get(), p.get(), q.get());
    if (BN_num_bits(gap.get()) <= static_cast<int>(bits / 2) - 100) continue;
    BnPtr n(BN_new()), p1(BN_dup(p.get())), q1(BN_dup(q.get())), phi(BN_new()), d(BN_new()), dmp1(BN_new()),
        dmq1(BN_new()), iqmp(BN_new());
    BN_mul(n.get(), p.get(), q.get(), ctx.get());
    if (BN_num_bits(n.get()) != static_cast<int>(bits)) continue;
    BN_sub_word(p1.get(), 1);
    BN_sub_word(q1.get(), 1);
    BN_mul(phi.get(), p1.get(), q1.get(), ctx.get());
    if (!BN_mod_inverse(d.get(), e.get(), phi.get(), ctx.get())) continue;
    BN_mod(dmp1.get(), d.get(), p1.get(), ctx.get());
    BN_mod(dmq1.get(), d.get(), q1.get(), ctx.get());
    if (!BN_mod_inverse(iqmp.get(), q.get(), p.get(), ctx.get())) continue;
    OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n.get());
    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e.get());
    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_D, d.get());
    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_FACTOR1, p.get());
    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_FACTOR2, q.get());
    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_EXPONENT1, dmp1.get());
    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_EXPONENT2, dmq1.get());
    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_COEFFICIENT1, iqmp.get());
    OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(bld);
    EVP_PKEY_CTX* pctx = EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr);
    EVP_PKEY* key = nullptr;
    bool ok = pctx && EVP_PKEY_fromdata_init(pctx) == 1 && EVP_PKEY_fromdata(pctx, &key, EVP_PKEY_KEYPAIR, params) == 1;
    EVP_PKEY_CTX_free(pctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    if (!ok) func_fail("error generating RSA key");
    return PkeyPtr(key);
  }
}

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

std::string rsa_private_key_pem(unsigned bits, bool pair_exponentiations) {
  return key_pem(rsa_key(bits, pair_exponentiations).get(), true);
}

void register_sprig_crypto(FuncMap& m) {
  m["sha1sum"] = {[](Context&, Args& a) { return Value(digest(EVP_sha1(), a[0].as_string())); }, "s"};
  m["sha256sum"] = {[](Context&, Args& a) { return Value(digest(EVP_sha256(), a[0].as_string())); }, "s"};
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
                            std::string cert, key;
                            if (!unb64(a[0].as_string(), cert)) func_fail("unable to decode base64 certificate");
                            if (!unb64(a[1].as_string(), key)) func_fail("unable to decode base64 private key");
                            parse_cert(cert);
                            parse_key(key);
                            Map out;
                            out["Cert"] = Value(cert);
                            out["Key"] = Value(key);
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
                       return Value(b64(out));
                     },
                     "ss"};
  m["decryptAES"] = {[](Context&, Args& a) -> Value {
                       std::string data;
                       if (!unb64(a[1].as_string(), data)) func_fail("illegal base64 data");
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
  m["randAlphaNum"] = {[](Context& c, Args& a) { return Value(random_from(c, a[0].as_int(), k_alpha + k_digits)); }, "i"};
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
                      return Value(b64(buf));
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
                    std::vector<std::string> runes;
                    for (size_t i = 0; i < s.size();) {
                      unsigned char ch = static_cast<unsigned char>(s[i]);
                      size_t w = ch < 0x80 ? 1 : ch < 0xE0 ? 2 : ch < 0xF0 ? 3 : 4;
                      runes.push_back(s.substr(i, w));
                      i += w;
                    }
                    for (size_t i = runes.size(); i > 1; --i) std::swap(runes[i - 1], runes[random_u64(c) % i]);
                    std::string out;
                    for (auto& r : runes) out += r;
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
