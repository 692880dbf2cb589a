#pragma once
// Test PKI: CAs and certificates made with OpenSSL, validity relative to now.

#include <string>
#include <vector>

namespace emco::kube::test {

struct KeyPair {
  std::string cert_pem;
  std::string key_pem;
};

// A self-signed CA valid from now+not_before_s to now+not_after_s.
KeyPair make_ca(const std::string& cn, long not_before_s = -3600, long not_after_s = 86400);

// A certificate signed by `ca`; SANs from `dns` and `ips` (server certificates).
KeyPair make_cert(const KeyPair& ca, const std::string& cn, const std::vector<std::string>& dns = {},
                  const std::vector<std::string>& ips = {}, long not_before_s = -3600, long not_after_s = 86400);

// A PKCS#10 request for `cn` (cert_pem holds the request) and its key.
KeyPair make_csr(const std::string& cn);

// `key_pem` encrypted under `passphrase` (PKCS#8, AES-256).
std::string encrypted_key(const std::string& key_pem, const std::string& passphrase);

}  // namespace emco::kube::test
