#pragma once
// The simulator's certificate authority (internal to sim).
// EC P-256 keys, SHA-256 signatures, PEM in and out.

#include <memory>
#include <string>
#include <vector>

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace emco::sim::detail {

struct KeyPair {
  std::string cert_pem;
  std::string key_pem;
};

struct CertIdentity {
  std::string common_name;           // the user
  std::vector<std::string> orgs;     // the groups
  std::string fingerprint;           // SHA-256 of the DER, hex
};

class CertAuthority {
public:
  // Loads dir/ca.crt and dir/ca.key, or generates and writes them (0600).
  explicit CertAuthority(const std::string& dir);
  ~CertAuthority();
  CertAuthority(const CertAuthority&) = delete;
  CertAuthority& operator=(const CertAuthority&) = delete;

  const std::string& cert_pem() const { return m_cert_pem; }
  KeyPair issue_server(const std::vector<std::string>& dns_names, const std::vector<std::string>& ips) const;
  KeyPair issue_client(const std::string& user, const std::vector<std::string>& groups) const;
  // Signs a PEM certificate request (as a kubernetes.io/kube-apiserver-client
  // signer does: client auth, the request's subject). Returns the PEM
  // certificate, or "" with `error` set when the request does not parse or
  // its signature is wrong.
  std::string sign_request(const std::string& csr_pem, int days, std::string& error) const;

  // A server SSL_CTX with this key pair that asks for (but does not require)
  // client certificates and verifies them against this CA. Caller frees.
  SSL_CTX* server_context(const KeyPair& server) const;

  struct State;

private:
  std::unique_ptr<State> m_state;
  std::string m_cert_pem;
};

// Signs a PEM certificate request as cert-manager's CA issuer does with the
// CA in `ca_cert_pem`/`ca_key_pem` (any key type): the request's subject and
// SANs, valid for `seconds`, a CA certificate (basicConstraints CA:TRUE,
// keyCertSign) when `is_ca`, else a leaf for digital signatures and key
// encipherment; signed with SHA-256. Returns the PEM certificate, or "" with
// `error` set when the request or the CA does not parse or verify.
std::string sign_with_ca(const std::string& csr_pem, const std::string& ca_cert_pem, const std::string& ca_key_pem,
                         bool is_ca, long seconds, std::string& error);

// The identity in a certificate; empty common_name when there is none.
CertIdentity identity_of_pem(const std::string& cert_pem);
// The identity in the (already verified) peer certificate of a connection.
CertIdentity peer_identity(SSL* ssl);

// HMAC-SHA256(secret, message) as lowercase hex.
std::string hmac_hex(const std::string& secret, const std::string& message);
std::string random_hex(size_t bytes);

}  // namespace emco::sim::detail
