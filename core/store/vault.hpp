#pragma once
// Secrets at rest (issue 21 item 4): the workspace key and the sealing of
// one value with it. AES-256-GCM through OpenSSL's EVP interface; nonces and
// keys come from RAND_bytes. Nothing here is hand-rolled cryptography.
//
// A sealed value is text, so it fits every column a secret lives in (TEXT,
// BLOB, a JSON string):
//   emco-sealed:1:<key id>:<base64 of nonce (12 bytes) | ciphertext | tag (16 bytes)>
// Each value has a fresh random nonce; its identity (which row and field it
// belongs to, e.g. "credential\0<owner>\0<name>") is the associated data, so
// a sealed value copied into another row does not open there; the key id
// (the first 16 hex digits of SHA-256 over "emco-key-id\0" and the key) says
// which key sealed it, so a wrong key is named as such, and the GCM tag
// refuses any changed byte.
//
// The key is 32 random bytes, never kept in the workspace or its database:
//   EMCO_KEY_FILE  a file holding the key in base64 (one line), mode 0600 or
//                  0400 (a file others can read is refused);
//   EMCO_KEY       the key itself in base64 (CI secrets).
// EMCO_KEY_FILE wins when both are set.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace emco::store {

struct VaultKey {
  std::string bytes;  // 32 bytes
  std::string id;     // 16 hex digits
};

// The key from EMCO_KEY_FILE or EMCO_KEY, nullopt when neither is set.
// Throws Error(workspace) naming the variable for a file that cannot be
// read, is readable by others, or does not hold a 32-byte base64 key.
std::optional<VaultKey> key_from_environment();
// The key in the file `path` (the same checks as EMCO_KEY_FILE); `what`
// names it in errors ("--new-key-file").
VaultKey read_key_file(const std::filesystem::path& path, const std::string& what);
// A new random key.
VaultKey generate_key();
// Writes `key` to a new file `path`, mode 0600, in base64 with a final
// newline. Refuses (Error(conflict)) to overwrite an existing file.
void write_key_file(const std::filesystem::path& path, const VaultKey& key);

// True when an AppContext resource named `name` ("<metadata.name>+<Kind>")
// is a Kubernetes Secret, whose content is sealed at rest.
bool is_secret_object(std::string_view name);
// True when `value` is a sealed value (starts with "emco-sealed:").
bool is_sealed(std::string_view value);
// The key id a sealed value names ("" when it is not one).
std::string sealed_key_id(std::string_view value);
// `plaintext` sealed with `key` for the row and field `identity`.
std::string seal(const VaultKey& key, std::string_view plaintext, std::string_view identity);
// The plaintext of a sealed `value`, nullopt when `key` is not the one that
// sealed it or the value (or its identity) was changed.
std::optional<std::string> unseal(const VaultKey& key, std::string_view value, std::string_view identity);

}  // namespace emco::store
