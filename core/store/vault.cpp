#include "core/store/vault.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "core/util/file_io.hpp"
#include "core/util/sha256.hpp"

namespace emco::store {

namespace {

constexpr std::string_view k_prefix = "emco-sealed:1:";
constexpr size_t k_key_size = 32, k_nonce_size = 12, k_tag_size = 16;

const char* k_key_hint =
    "create a key with 'emco workspace key generate FILE' and point EMCO_KEY_FILE at it, or set EMCO_KEY";

VaultKey key_of(std::string bytes) {
  VaultKey k;
  k.id = sha256_hex(std::string("emco-key-id\0", 12) + bytes).substr(0, 16);
  k.bytes = std::move(bytes);
  return k;
}

VaultKey parse_key(std::string_view text, const std::string& what) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  auto bytes = base64_decode(text);
  if (!bytes || bytes->size() != k_key_size)
    fail(ErrorKind::workspace, what + " does not hold a workspace key (32 bytes in base64)", k_key_hint);
  return key_of(std::move(*bytes));
}

struct CipherCtx {
  EVP_CIPHER_CTX* p = EVP_CIPHER_CTX_new();
  ~CipherCtx() { EVP_CIPHER_CTX_free(p); }
};

[[noreturn]] void crypto_failure(const char* what) { fail(ErrorKind::internal, std::string("OpenSSL: ") + what + " failed"); }

}  // namespace

VaultKey read_key_file(const std::filesystem::path& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    fail(ErrorKind::workspace, "cannot read " + what + " '" + path.string() + "': " + std::strerror(errno), k_key_hint);
  if (st.st_mode & 077)
    fail(ErrorKind::workspace, what + " '" + path.string() + "' can be read by other users",
         "chmod 600 '" + path.string() + "'");
  std::string text;
  if (int err = read_whole_file(path.string(), text, 4096); err != 0)
    fail(ErrorKind::workspace, "cannot read " + what + " '" + path.string() + "': " + std::strerror(err), k_key_hint);
  return parse_key(text, what + " '" + path.string() + "'");
}

std::optional<VaultKey> key_from_environment() {
  if (const char* f = std::getenv("EMCO_KEY_FILE"); f && *f) return read_key_file(f, "EMCO_KEY_FILE");
  if (const char* k = std::getenv("EMCO_KEY"); k && *k) return parse_key(k, "EMCO_KEY");
  return std::nullopt;
}

VaultKey generate_key() {
  std::string bytes(k_key_size, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(bytes.size())) != 1)
    crypto_failure("RAND_bytes");
  return key_of(std::move(bytes));
}

void write_key_file(const std::filesystem::path& path, const VaultKey& key) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST)
      fail(ErrorKind::conflict, "'" + path.string() + "' exists already",
           "a key file is never overwritten (the values it sealed would be lost): choose another name");
    fail(ErrorKind::failed, "cannot create '" + path.string() + "': " + std::strerror(errno));
  }
  const std::string text = base64_encode(key.bytes) + "\n";
  const bool ok = ::fchmod(fd, 0600) == 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) fail(ErrorKind::failed, "cannot write '" + path.string() + "'");
}

bool is_secret_object(std::string_view name) {
  constexpr std::string_view suffix = "+Secret";
  return name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
}

bool is_sealed(std::string_view value) { return value.substr(0, k_prefix.size()) == k_prefix; }

std::string sealed_key_id(std::string_view value) {
  if (!is_sealed(value)) return {};
  value.remove_prefix(k_prefix.size());
  return std::string(value.substr(0, value.find(':')));
}

std::string seal(const VaultKey& key, std::string_view plaintext, std::string_view identity) {
  std::string out(k_nonce_size + plaintext.size() + k_tag_size, '\0');
  auto* nonce = reinterpret_cast<unsigned char*>(out.data());
  if (RAND_bytes(nonce, static_cast<int>(k_nonce_size)) != 1) crypto_failure("RAND_bytes");
  CipherCtx c;
  int n = 0;
  if (!c.p || EVP_EncryptInit_ex(c.p, EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
      EVP_CIPHER_CTX_ctrl(c.p, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(k_nonce_size), nullptr) != 1 ||
      EVP_EncryptInit_ex(c.p, nullptr, nullptr, reinterpret_cast<const unsigned char*>(key.bytes.data()), nonce) != 1 ||
      EVP_EncryptUpdate(c.p, nullptr, &n, reinterpret_cast<const unsigned char*>(identity.data()),
                        static_cast<int>(identity.size())) != 1)
    crypto_failure("AES-256-GCM setup");
  auto* ct = nonce + k_nonce_size;
  if (EVP_EncryptUpdate(c.p, ct, &n, reinterpret_cast<const unsigned char*>(plaintext.data()),
                        static_cast<int>(plaintext.size())) != 1)
    crypto_failure("AES-256-GCM encryption");
  int tail = 0;
  if (EVP_EncryptFinal_ex(c.p, ct + n, &tail) != 1 ||
      EVP_CIPHER_CTX_ctrl(c.p, EVP_CTRL_GCM_GET_TAG, static_cast<int>(k_tag_size), ct + plaintext.size()) != 1)
    crypto_failure("AES-256-GCM tag");
  return std::string(k_prefix) + key.id + ":" + base64_encode(out);
}

std::optional<std::string> unseal(const VaultKey& key, std::string_view value, std::string_view identity) {
  if (!is_sealed(value) || sealed_key_id(value) != key.id) return std::nullopt;
  value.remove_prefix(k_prefix.size() + key.id.size() + 1);
  auto raw = base64_decode(value);
  if (!raw || raw->size() < k_nonce_size + k_tag_size) return std::nullopt;
  const auto* nonce = reinterpret_cast<const unsigned char*>(raw->data());
  const size_t size = raw->size() - k_nonce_size - k_tag_size;
  const unsigned char* ct = nonce + k_nonce_size;
  std::string plain(size, '\0');
  CipherCtx c;
  int n = 0;
  if (!c.p || EVP_DecryptInit_ex(c.p, EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1 ||
      EVP_CIPHER_CTX_ctrl(c.p, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(k_nonce_size), nullptr) != 1 ||
      EVP_DecryptInit_ex(c.p, nullptr, nullptr, reinterpret_cast<const unsigned char*>(key.bytes.data()), nonce) != 1 ||
      EVP_DecryptUpdate(c.p, nullptr, &n, reinterpret_cast<const unsigned char*>(identity.data()),
                        static_cast<int>(identity.size())) != 1)
    crypto_failure("AES-256-GCM setup");
  if (EVP_DecryptUpdate(c.p, reinterpret_cast<unsigned char*>(plain.data()), &n, ct, static_cast<int>(size)) != 1)
    return std::nullopt;
  // The expected tag: EVP's interface takes it as non-const.
  std::string tag(reinterpret_cast<const char*>(ct + size), k_tag_size);
  int tail = 0;
  if (EVP_CIPHER_CTX_ctrl(c.p, EVP_CTRL_GCM_SET_TAG, static_cast<int>(k_tag_size), tag.data()) != 1 ||
      EVP_DecryptFinal_ex(c.p, reinterpret_cast<unsigned char*>(plain.data()) + n, &tail) != 1)
    return std::nullopt;
  return plain;
}

}  // namespace emco::store
