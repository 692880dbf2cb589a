#pragma once
// Function registry shared by the engine and the function libraries (internal to core/template).

#include <string>
#include <unordered_map>

#include "core/template/engine.hpp"
#include "core/util/string_hash.hpp"

namespace emco::tmpl {

// A registered function: `sig` lists the Go parameter types, one letter each:
//   a interface{}  s string  i int  I int64  f float64  b bool  m map[string]interface {}
//   l []interface {}  S []string
// A trailing '*' makes the last parameter variadic (Go's ...T). Arguments are checked and
// reported as Go's text/template does ("wrong number of args for X: want N got M",
// "wrong type for value; expected string; got int").
struct FuncDef {
  Function fn;
  std::string sig = "a*";
};

using FuncMap = StringMap<FuncDef>;  // looked up with the parsed identifier's view

void register_go_builtins(FuncMap& m);
void register_sprig(FuncMap& m);
void register_sprig_crypto(FuncMap& m);
void register_sprig_time(FuncMap& m);
void register_helm(FuncMap& m);

// Helpers for function implementations (Sprig's conversions).
[[noreturn]] void func_fail(const std::string& message);  // emco::Error(failed)
std::string to_str(const Value& v);          // Sprig's strval: strings as is, nil "<nil>", else %v
std::int64_t to_int64(const Value& v);       // spf13/cast ToInt64 (errors -> 0)
double to_float64(const Value& v);           // spf13/cast ToFloat64
bool to_bool(const Value& v);                // spf13/cast ToBool
// A Value as a list: lists as is; objects through data(); null -> empty; others -> error message.
const List* as_list_like(const Value& v, Value& holder);
std::string type_string(char sig);           // Go type name of a signature letter

// A new RSA key of `bits` bits as PKCS#1 PEM (genPrivateKey "rsa"; genCA & co use the same
// generator): OpenSSL's EVP_PKEY_keygen, made one key ahead of need per size on a background
// thread (crypto.cpp says why).
std::string rsa_private_key_pem(unsigned bits);

}  // namespace emco::tmpl
