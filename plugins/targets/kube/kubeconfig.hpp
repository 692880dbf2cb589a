#pragma once
// Kubeconfig files: parsing, merging (KUBECONFIG with several files), and
// resolving one context to everything a connection needs.
//
// Follows kubectl's rules: the first file that defines a cluster, user or
// context name wins; the first file that sets current-context wins; relative
// file paths (certificate-authority, client-certificate, client-key, tokenFile,
// an exec command containing '/') are relative to the directory of the file
// that names them. Errors name the cluster and the problem and never contain
// tokens, passwords or key material.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace emco::kube {

// users[].user.exec: a client-go credential plugin.
struct ExecConfig {
  std::string api_version;  // client.authentication.k8s.io/v1 or v1beta1
  std::string command;      // made absolute when it contained '/' (see above)
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string install_hint;
  bool provide_cluster_info = false;
};

struct KubeconfigCluster {
  std::string server;
  std::string certificate_authority;       // path, resolved
  std::string certificate_authority_place; // "FILE:LINE" naming it, for errors
  std::string certificate_authority_data;  // base64 as written
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  std::string proxy_url;
};

struct KubeconfigUser {
  std::string client_certificate;       // path, resolved
  std::string client_certificate_place; // "FILE:LINE" naming it, for errors
  std::string client_certificate_data;  // base64
  std::string client_key;               // path, resolved
  std::string client_key_place;         // "FILE:LINE" naming it, for errors
  std::string client_key_data;          // base64
  std::string token;
  std::string token_file;  // path, resolved
  std::string token_file_place;  // "FILE:LINE" naming it, for errors
  std::string username;
  std::string password;
  std::optional<ExecConfig> exec;
  std::string auth_provider;  // name only: unsupported, reported when used
};

struct KubeconfigContext {
  std::string cluster;
  std::string user;
  std::string ns;
};

struct Kubeconfig {
  std::map<std::string, KubeconfigCluster> clusters;
  std::map<std::string, KubeconfigUser> users;
  std::map<std::string, KubeconfigContext> contexts;
  std::string current_context;
  std::string origin;  // file name(s) or "<inline>", for messages
};

// Parses kubeconfig text (YAML or JSON). `origin` names it in errors;
// relative paths are resolved against `base_dir` (empty: left relative).
// Throws emco::Error(invalid) on malformed YAML or a wrong shape.
Kubeconfig parse_kubeconfig(std::string_view text, const std::string& origin, const std::string& base_dir);

// Reads and parses one file; Error(not_found) when it cannot be read.
Kubeconfig load_kubeconfig_file(const std::string& path);

// kubectl's merge: first definition of each name wins, first current-context wins.
Kubeconfig merge_kubeconfigs(const std::vector<Kubeconfig>& configs);

// $KUBECONFIG (':'-separated; absent files skipped, as kubectl does), else
// ~/.kube/config. Error(not_found) when no file exists at all.
Kubeconfig load_default_kubeconfig();

// Everything one connection needs, files read and base64 decoded.
struct ClusterAccess {
  std::string label;  // how errors name the cluster (emco's name or the kubeconfig's)
  std::string context;
  std::string cluster;
  std::string user;
  std::string server;  // https://host:port[/path], no trailing '/'
  std::string ns;      // context namespace, may be empty
  std::string ca_pem;  // empty: the system trust store
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  std::string proxy_url;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string token;
  std::string username;
  std::string password;
  std::optional<ExecConfig> exec;
};

// Resolves `context` (empty: current-context) of `config`. `label` names the
// cluster in errors (empty: the kubeconfig's cluster name). Reads every file
// the context names. Throws Error(invalid) with a precise message for an
// unknown context, a context naming a missing cluster or user, no server,
// unreadable or undecodable files, an unsupported auth-provider.
ClusterAccess resolve_access(const Kubeconfig& config, const std::string& context = {},
                             const std::string& label = {});

// A self-contained kubeconfig holding only `context` (empty: current-context),
// its cluster and its user, with certificate and key files inlined as -data
// fields (base64), a tokenFile's content inlined as token, and current-context
// set: what `kubectl config view --minify --flatten` prints (keys sorted), so a
// registered cluster's kubeconfig keeps working wherever emco runs. An exec
// command stays a path (it is a program, not data). Throws like resolve_access.
std::string flatten_kubeconfig(const Kubeconfig& config, const std::string& context = {});

// The kubeconfig cluster registration stores. `text` was read from `path`
// (empty: given inline), whose directory relative file references resolve
// against. Checks it as validate_kubeconfig does (current-context); when that
// context names certificate, key or token files, they are read now and the
// result is flatten_kubeconfig's, so the workspace does not depend on them;
// otherwise `text` is returned unchanged. A file that cannot be read is
// Error(invalid) "cluster 'LABEL': FILE:LINE: cannot read client-key 'PATH': REASON"
// (FILE:LINE is the kubeconfig field naming it); contents are never printed.
std::string prepare_kubeconfig(const std::string& text, const std::string& path, const std::string& label);

// What cluster registration learns from a kubeconfig without contacting it.
struct KubeconfigSummary {
  std::string context;
  std::string cluster;
  std::string server;
  std::string user;
  std::string auth;  // "client-certificate", "token", "basic", "exec", "none"
  std::optional<std::chrono::system_clock::time_point> client_cert_not_after;
  std::optional<std::chrono::system_clock::time_point> ca_not_after;
  std::vector<std::string> warnings;  // e.g. "TLS verification is disabled"
};

// Checks a kubeconfig for cluster registration: it parses, `context` (empty:
// current-context) exists and names a cluster with an http(s) server and a
// user, its certificates and keys decode and the client certificate matches
// its key and has not expired, an exec plugin names a command. Never contacts
// the server or runs an exec plugin. `text_or_path`: text when it contains a
// newline, else a file path. Throws Error(invalid|not_found) naming the problem.
KubeconfigSummary validate_kubeconfig(const std::string& text_or_path, const std::string& context = {},
                                      const std::string& label = {});

// Same checks on already resolved access.
KubeconfigSummary validate_access(const ClusterAccess& access);

}  // namespace emco::kube
