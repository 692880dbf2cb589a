#include "plugins/targets/kube/kubeconfig.hpp"

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/template/value.hpp"
#include "core/util/base64.hpp"
#include "core/util/error.hpp"
#include "core/util/file_io.hpp"
#include "core/util/strings.hpp"
#include "core/yaml/yaml.hpp"
#include "plugins/targets/kube/pem.hpp"

namespace emco::kube {
namespace {

namespace fs = std::filesystem;

std::string resolve_path(const std::string& path, const std::string& base_dir) {
  if (path.empty() || base_dir.empty()) return path;
  if (starts_with(path, "~/")) {
    const char* home = std::getenv("HOME");
    return home ? (fs::path(home) / path.substr(2)).string() : path;
  }
  fs::path p(path);
  if (p.is_absolute()) return path;
  return (fs::path(base_dir) / p).lexically_normal().string();
}

// Read access to a parsed kubeconfig with kubectl's leniency: an absent key
// and a null value are the same, and scalars are taken as written.
class Tree {
public:
  using NodeId = yaml::NodeId;
  static constexpr NodeId k_none = yaml::Document::k_none;

  explicit Tree(const yaml::Document& doc) : m_doc(doc) {}
  const yaml::Document& doc() const { return m_doc; }

  NodeId root() const { return m_doc.target(m_doc.root()); }
  // The value under `key` of a mapping, aliases followed; k_none when absent or null.
  NodeId get(NodeId map, std::string_view key) const {
    if (map == k_none || !is(map, yaml::NodeType::mapping)) return k_none;
    NodeId v = m_doc.find(map, key);
    if (v == k_none) return k_none;
    v = m_doc.target(v);
    return is_null(v) ? k_none : v;
  }
  bool is(NodeId id, yaml::NodeType type) const { return m_doc.node(id).type == type; }
  bool is_null(NodeId id) const {
    if (!m_doc.is_plain(id)) return false;
    std::string_view t = m_doc.scalar(id);
    return t.empty() || t == "~" || t == "null" || t == "Null" || t == "NULL";
  }
  std::uint32_t line(NodeId id) const { return m_doc.node(id).line; }

  // A string field; "" when absent.
  std::string scalar(NodeId map, const char* key) const {
    NodeId v = get(map, key);
    if (v == k_none) return {};
    if (!is(v, yaml::NodeType::scalar)) fail(ErrorKind::invalid, std::string("field '") + key + "' must be a string");
    return std::string(m_doc.scalar(v));
  }
  // The line of a field (0 when absent): errors about the file a field names point at it.
  std::uint32_t line_of(NodeId map, const char* key) const {
    NodeId v = get(map, key);
    return v == k_none ? 0 : line(v);
  }
  bool boolean(NodeId map, const char* key) const {
    NodeId v = get(map, key);
    if (v == k_none) return false;
    std::string s = is(v, yaml::NodeType::scalar) ? to_lower(std::string(m_doc.scalar(v))) : std::string();
    if (s == "true") return true;
    if (s == "false") return false;
    fail(ErrorKind::invalid, std::string("field '") + key + "' must be true or false");
  }
  std::size_t size(NodeId id) const { return m_doc.size(id); }
  NodeId item(NodeId seq, std::size_t i) const { return m_doc.target(m_doc.item(seq, i)); }

private:
  const yaml::Document& m_doc;
};

// Iterates a `clusters:`/`users:`/`contexts:` list of {name, <inner>} items;
// `fn` gets the inner mapping (k_none when absent).
template <typename Fn>
void each_named(const Tree& t, const char* list, const char* inner, Fn&& fn) {
  Tree::NodeId items = t.get(t.root(), list);
  if (items == Tree::k_none) return;
  if (!t.is(items, yaml::NodeType::sequence)) fail(ErrorKind::invalid, std::string("'") + list + "' must be a list");
  for (size_t i = 0; i < t.size(items); ++i) {
    Tree::NodeId item = t.item(items, i);
    std::string where = std::string(list) + "[" + std::to_string(i) + "]";
    if (!t.is(item, yaml::NodeType::mapping)) fail(ErrorKind::invalid, "'" + where + "' must be a mapping");
    std::string name = t.scalar(item, "name");
    if (name.empty()) fail(ErrorKind::invalid, "'" + where + "' has no name");
    Tree::NodeId body = t.get(item, inner);
    if (body != Tree::k_none && !t.is(body, yaml::NodeType::mapping))
      fail(ErrorKind::invalid, "'" + where + "." + inner + "' must be a mapping");
    try {
      fn(name, body);
    } catch (const Error& e) {
      throw e.with_context(std::string(list).substr(0, std::strlen(list) - 1) + " '" + name + "'");
    }
  }
}

ExecConfig parse_exec(const Tree& t, Tree::NodeId node, const std::string& base_dir) {
  if (!t.is(node, yaml::NodeType::mapping)) fail(ErrorKind::invalid, "'exec' must be a mapping");
  ExecConfig exec;
  exec.api_version = t.scalar(node, "apiVersion");
  exec.command = t.scalar(node, "command");
  // client-go resolves a command with a path separator against the file's dir.
  if (exec.command.find('/') != std::string::npos) exec.command = resolve_path(exec.command, base_dir);
  if (Tree::NodeId args = t.get(node, "args"); args != Tree::k_none) {
    if (!t.is(args, yaml::NodeType::sequence)) fail(ErrorKind::invalid, "'exec.args' must be a list");
    for (size_t i = 0; i < t.size(args); ++i) {
      Tree::NodeId a = t.item(args, i);
      if (!t.is(a, yaml::NodeType::scalar)) fail(ErrorKind::invalid, "'exec.args' must be a list of strings");
      exec.args.emplace_back(t.is_null(a) ? std::string_view() : t.doc().scalar(a));
    }
  }
  if (Tree::NodeId env = t.get(node, "env"); env != Tree::k_none) {
    if (!t.is(env, yaml::NodeType::sequence)) fail(ErrorKind::invalid, "'exec.env' must be a list of {name, value}");
    for (size_t i = 0; i < t.size(env); ++i) {
      Tree::NodeId e = t.item(env, i);
      if (!t.is(e, yaml::NodeType::mapping)) fail(ErrorKind::invalid, "'exec.env' must be a list of {name, value}");
      exec.env.emplace_back(t.scalar(e, "name"), t.scalar(e, "value"));
    }
  }
  exec.install_hint = t.scalar(node, "installHint");
  exec.provide_cluster_info = t.boolean(node, "provideClusterInfo");
  return exec;
}

// "ORIGIN:LINE" of a field that names a file, or just ORIGIN.
std::string field_place(const std::string& origin, std::uint32_t line) {
  return line ? origin + ":" + std::to_string(line) : origin;
}

// Reads a file a kubeconfig field names; `place` is the field's "FILE:LINE".
// The error names the place and the path, never the content.
std::string read_file(const std::string& path, const std::string& what, const std::string& place) {
  try {
    return read_input_file(path, {.what = what, .max_bytes = std::size_t{1} << 20});
  } catch (const Error& e) {
    throw e.with_context(place);
  }
}

std::string decode_data(const std::string& data, const std::string& what) {
  // kubeconfigs are written by hand and by tools: white space and missing padding are fine
  auto decoded = base64_decode(data, {.lenient = true});
  if (!decoded) fail(ErrorKind::invalid, what + " is not valid base64");
  return *decoded;
}

std::string strip_trailing_slashes(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

Kubeconfig parse_kubeconfig(std::string_view text, const std::string& origin, const std::string& base_dir) {
  std::vector<yaml::Document> docs;
  try {
    docs = yaml::parse(text, {.max_documents = 1});
  } catch (const yaml::ParseError& e) {
    // The problem describes the syntax; the mark gives the place. Neither
    // echoes the document's content.
    fail(ErrorKind::invalid, "cannot parse kubeconfig '" + origin + "': line " + std::to_string(e.line()) +
                                 ", column " + std::to_string(e.column()) + ": " + e.problem());
  }
  Kubeconfig config;
  config.origin = origin;
  if (docs.empty()) return config;  // an empty file is an empty config, as for kubectl
  const Tree t(docs[0]);
  if (t.is_null(t.root())) return config;
  try {
    if (!t.is(t.root(), yaml::NodeType::mapping))
      fail(ErrorKind::invalid, "not a kubeconfig (expected a mapping at the top)");
    std::string kind = t.scalar(t.root(), "kind");
    if (!kind.empty() && kind != "Config") fail(ErrorKind::invalid, "kind is '" + kind + "', expected 'Config'");
    config.current_context = t.scalar(t.root(), "current-context");
    each_named(t, "clusters", "cluster", [&](const std::string& name, Tree::NodeId c) {
      KubeconfigCluster cluster;
      cluster.server = t.scalar(c, "server");
      cluster.certificate_authority = resolve_path(t.scalar(c, "certificate-authority"), base_dir);
      cluster.certificate_authority_place = field_place(origin, t.line_of(c, "certificate-authority"));
      cluster.certificate_authority_data = t.scalar(c, "certificate-authority-data");
      cluster.insecure_skip_tls_verify = t.boolean(c, "insecure-skip-tls-verify");
      cluster.tls_server_name = t.scalar(c, "tls-server-name");
      cluster.proxy_url = t.scalar(c, "proxy-url");
      config.clusters.emplace(name, std::move(cluster));  // first definition wins
    });
    each_named(t, "users", "user", [&](const std::string& name, Tree::NodeId u) {
      KubeconfigUser user;
      user.client_certificate = resolve_path(t.scalar(u, "client-certificate"), base_dir);
      user.client_certificate_place = field_place(origin, t.line_of(u, "client-certificate"));
      user.client_certificate_data = t.scalar(u, "client-certificate-data");
      user.client_key = resolve_path(t.scalar(u, "client-key"), base_dir);
      user.client_key_place = field_place(origin, t.line_of(u, "client-key"));
      user.client_key_data = t.scalar(u, "client-key-data");
      user.token = t.scalar(u, "token");
      user.token_file = resolve_path(t.scalar(u, "tokenFile"), base_dir);
      user.token_file_place = field_place(origin, t.line_of(u, "tokenFile"));
      user.username = t.scalar(u, "username");
      user.password = t.scalar(u, "password");
      if (Tree::NodeId exec = t.get(u, "exec"); exec != Tree::k_none) user.exec = parse_exec(t, exec, base_dir);
      if (Tree::NodeId ap = t.get(u, "auth-provider"); ap != Tree::k_none && t.is(ap, yaml::NodeType::mapping)) {
        user.auth_provider = t.scalar(ap, "name");
        if (user.auth_provider.empty()) user.auth_provider = "unnamed";
      }
      config.users.emplace(name, std::move(user));
    });
    each_named(t, "contexts", "context", [&](const std::string& name, Tree::NodeId c) {
      KubeconfigContext context;
      context.cluster = t.scalar(c, "cluster");
      context.user = t.scalar(c, "user");
      context.ns = t.scalar(c, "namespace");
      config.contexts.emplace(name, std::move(context));
    });
  } catch (const Error& e) {
    throw e.with_context("invalid kubeconfig '" + origin + "'");
  }
  return config;
}

Kubeconfig load_kubeconfig_file(const std::string& path) {
  std::string text = read_input_file(path, {.what = "kubeconfig",
                                            .max_bytes = std::size_t{16} << 20,
                                            .allow_empty = false,
                                            .empty_hint = "a kubeconfig is YAML with clusters, users and contexts",
                                            .missing = ErrorKind::not_found});
  std::string dir = fs::absolute(fs::path(path)).parent_path().string();
  return parse_kubeconfig(text, path, dir);
}

Kubeconfig merge_kubeconfigs(const std::vector<Kubeconfig>& configs) {
  Kubeconfig merged;
  std::vector<std::string> origins;
  for (const auto& c : configs) {
    if (merged.current_context.empty()) merged.current_context = c.current_context;
    for (const auto& [k, v] : c.clusters) merged.clusters.emplace(k, v);
    for (const auto& [k, v] : c.users) merged.users.emplace(k, v);
    for (const auto& [k, v] : c.contexts) merged.contexts.emplace(k, v);
    origins.push_back(c.origin);
  }
  merged.origin = join(origins, ":");
  return merged;
}

Kubeconfig load_default_kubeconfig() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    for (auto& p : split(env, ':'))
      if (!p.empty()) paths.push_back(p);
  } else if (const char* home = std::getenv("HOME")) {
    paths.push_back((fs::path(home) / ".kube" / "config").string());
  }
  std::vector<Kubeconfig> configs;
  for (const auto& p : paths) {
    std::error_code ec;
    if (!fs::exists(p, ec)) continue;
    configs.push_back(load_kubeconfig_file(p));
  }
  if (configs.empty()) {
    fail(ErrorKind::not_found, "no kubeconfig found",
         "set KUBECONFIG or pass the kubeconfig file explicitly");
  }
  return merge_kubeconfigs(configs);
}

ClusterAccess resolve_access(const Kubeconfig& config, const std::string& context, const std::string& label) {
  std::string ctx_name = context.empty() ? config.current_context : context;
  if (ctx_name.empty()) {
    fail(ErrorKind::invalid,
         (label.empty() ? std::string() : "cluster '" + label + "': ") + "kubeconfig '" + config.origin +
             "' sets no current-context",
         "name a context, or set current-context in the kubeconfig");
  }
  auto ctx = config.contexts.find(ctx_name);
  if (ctx == config.contexts.end()) {
    std::vector<std::string> names;
    for (const auto& [k, v] : config.contexts) names.push_back(k);
    std::string hint = names.empty() ? "the kubeconfig defines no contexts"
                                     : "contexts in the kubeconfig: " + join(names, ", ");
    if (auto near = closest_match(ctx_name, names); !near.empty()) hint = "did you mean '" + near + "'?";
    fail(ErrorKind::invalid,
         (label.empty() ? std::string() : "cluster '" + label + "': ") + "context '" + ctx_name +
             "' not found in kubeconfig '" + config.origin + "'",
         hint);
  }
  ClusterAccess a;
  a.context = ctx_name;
  a.cluster = ctx->second.cluster;
  a.user = ctx->second.user;
  a.ns = ctx->second.ns;
  a.label = label.empty() ? a.cluster : label;
  const std::string who = "cluster '" + a.label + "'";
  auto problem = [&](const std::string& msg, const std::string& hint = {}) {
    fail(ErrorKind::invalid, who + ": " + msg, hint);
  };
  if (a.cluster.empty()) problem("context '" + ctx_name + "' names no cluster");
  auto cl = config.clusters.find(a.cluster);
  if (cl == config.clusters.end())
    problem("context '" + ctx_name + "' names cluster '" + a.cluster + "', which the kubeconfig does not define");
  const KubeconfigCluster& c = cl->second;
  a.server = strip_trailing_slashes(trim(c.server));
  if (a.server.empty()) problem("kubeconfig cluster '" + a.cluster + "' has no server");
  if (!starts_with(to_lower(a.server), "https://") && !starts_with(to_lower(a.server), "http://"))
    problem("server '" + a.server + "' is not an http(s) URL");
  a.insecure_skip_tls_verify = c.insecure_skip_tls_verify;
  a.tls_server_name = c.tls_server_name;
  a.proxy_url = c.proxy_url;
  try {
    if (!c.certificate_authority_data.empty())
      a.ca_pem = decode_data(c.certificate_authority_data, "certificate-authority-data");
    else if (!c.certificate_authority.empty())
      a.ca_pem = read_file(c.certificate_authority, "certificate-authority",
                           c.certificate_authority_place);
    if (!a.user.empty()) {
      auto us = config.users.find(a.user);
      if (us == config.users.end())
        fail(ErrorKind::invalid,
             "context '" + ctx_name + "' names user '" + a.user + "', which the kubeconfig does not define");
      const KubeconfigUser& u = us->second;
      if (!u.auth_provider.empty())
        fail(ErrorKind::invalid, "auth-provider '" + u.auth_provider + "' is not supported",
             "use an exec credential plugin instead (kubectl deprecated auth-provider)");
      if (!u.client_certificate_data.empty())
        a.client_cert_pem = decode_data(u.client_certificate_data, "client-certificate-data");
      else if (!u.client_certificate.empty())
        a.client_cert_pem = read_file(u.client_certificate, "client-certificate",
                                      u.client_certificate_place);
      if (!u.client_key_data.empty())
        a.client_key_pem = decode_data(u.client_key_data, "client-key-data");
      else if (!u.client_key.empty())
        a.client_key_pem = read_file(u.client_key, "client-key", u.client_key_place);
      if (a.client_cert_pem.empty() != a.client_key_pem.empty())
        fail(ErrorKind::invalid, a.client_cert_pem.empty() ? "client-key given without client-certificate"
                                                           : "client-certificate given without client-key");
      a.token = u.token;
      if (a.token.empty() && !u.token_file.empty())
        a.token = trim(read_file(u.token_file, "tokenFile", u.token_file_place));
      a.username = u.username;
      a.password = u.password;
      a.exec = u.exec;
    }
  } catch (const Error& e) {
    throw e.with_context(who);
  }
  return a;
}

namespace {

// `kubectl config view --minify --flatten` of the context `a` was resolved from.
std::string flatten_access(const Kubeconfig& config, const ClusterAccess& a) {
  const KubeconfigCluster& c = config.clusters.at(a.cluster);
  using nlohmann::json;
  json cluster = {{"server", c.server}};
  if (!a.ca_pem.empty()) cluster["certificate-authority-data"] = base64_encode(a.ca_pem);
  if (c.insecure_skip_tls_verify) cluster["insecure-skip-tls-verify"] = true;
  if (!c.tls_server_name.empty()) cluster["tls-server-name"] = c.tls_server_name;
  if (!c.proxy_url.empty()) cluster["proxy-url"] = c.proxy_url;
  json context_body = {{"cluster", a.cluster}};
  if (!a.user.empty()) context_body["user"] = a.user;
  if (!a.ns.empty()) context_body["namespace"] = a.ns;
  json out = {{"apiVersion", "v1"},
              {"kind", "Config"},
              {"clusters", json::array({{{"name", a.cluster}, {"cluster", cluster}}})},
              {"contexts", json::array({{{"name", a.context}, {"context", context_body}}})},
              {"current-context", a.context},
              {"users", json::array()}};
  if (!a.user.empty()) {
    json user = json::object();
    if (!a.client_cert_pem.empty()) {
      user["client-certificate-data"] = base64_encode(a.client_cert_pem);
      user["client-key-data"] = base64_encode(a.client_key_pem);
    }
    if (!a.token.empty()) user["token"] = a.token;  // a tokenFile's content, read above
    if (!a.username.empty()) user["username"] = a.username;
    if (!a.password.empty()) user["password"] = a.password;
    if (a.exec) {
      const ExecConfig& e = *a.exec;
      json exec = {{"command", e.command}};
      if (!e.api_version.empty()) exec["apiVersion"] = e.api_version;
      if (!e.args.empty()) exec["args"] = e.args;
      if (!e.env.empty()) {
        exec["env"] = json::array();
        for (const auto& [k, v] : e.env) exec["env"].push_back({{"name", k}, {"value", v}});
      }
      if (!e.install_hint.empty()) exec["installHint"] = e.install_hint;
      if (e.provide_cluster_info) exec["provideClusterInfo"] = true;
      user["exec"] = std::move(exec);
    }
    out["users"].push_back({{"name", a.user}, {"user", std::move(user)}});
  }
  // The emitter of `kubectl config view` (goyaml.v2 through sigs.k8s.io/yaml): keys sorted.
  return tmpl::to_yaml(tmpl::Value::from_json(out));
}

}  // namespace

std::string flatten_kubeconfig(const Kubeconfig& config, const std::string& context) {
  return flatten_access(config, resolve_access(config, context));  // reads the files, checks the references
}

std::string prepare_kubeconfig(const std::string& text, const std::string& path, const std::string& label) {
  std::string dir = path.empty() ? std::string() : fs::absolute(fs::path(path)).parent_path().string();
  Kubeconfig config = parse_kubeconfig(text, path.empty() ? "<inline>" : path, dir);
  if (config.contexts.empty())
    fail(ErrorKind::invalid,
         (label.empty() ? std::string() : "cluster '" + label + "': ") + "kubeconfig '" + config.origin +
             "' defines no contexts");
  ClusterAccess access = resolve_access(config, {}, label);  // reads every file the context names
  validate_access(access);
  const KubeconfigCluster& c = config.clusters.at(access.cluster);
  bool names_files = c.certificate_authority_data.empty() && !c.certificate_authority.empty();
  if (!access.user.empty()) {
    const KubeconfigUser& u = config.users.at(access.user);
    names_files = names_files || (u.client_certificate_data.empty() && !u.client_certificate.empty()) ||
                  (u.client_key_data.empty() && !u.client_key.empty()) || (u.token.empty() && !u.token_file.empty());
  }
  return names_files ? flatten_access(config, access) : text;
}

KubeconfigSummary validate_access(const ClusterAccess& a) {
  const std::string who = "cluster '" + a.label + "'";
  KubeconfigSummary s;
  s.context = a.context;
  s.cluster = a.cluster;
  s.server = a.server;
  s.user = a.user;
  try {
    auto now = std::chrono::system_clock::now();
    if (!a.ca_pem.empty()) s.ca_not_after = inspect_certificates(a.ca_pem, "certificate authority").not_after;
    if (!a.client_cert_pem.empty()) {
      CertInfo info = inspect_certificates(a.client_cert_pem, "client certificate");
      check_private_key(a.client_key_pem, "client key");
      check_key_matches(a.client_cert_pem, a.client_key_pem, "client certificate");
      s.client_cert_not_after = info.not_after;
      if (info.not_after < now)
        fail(ErrorKind::invalid, "client certificate expired on " + format_rfc3339(info.not_after),
             "get a new certificate for user '" + a.user + "'");
      if (info.not_before > now)
        s.warnings.push_back("client certificate is not valid before " + format_rfc3339(info.not_before));
    }
    if (s.ca_not_after && *s.ca_not_after < now)
      s.warnings.push_back("a certificate authority expired on " + format_rfc3339(*s.ca_not_after));
    if (a.exec && a.exec->command.empty()) fail(ErrorKind::invalid, "exec credential plugin names no command");
    if (a.exec && !a.exec->api_version.empty() && a.exec->api_version != "client.authentication.k8s.io/v1" &&
        a.exec->api_version != "client.authentication.k8s.io/v1beta1")
      fail(ErrorKind::invalid, "exec plugin apiVersion '" + a.exec->api_version + "' is not supported",
           "use client.authentication.k8s.io/v1 or v1beta1");
  } catch (const Error& e) {
    throw e.with_context(who);
  }
  if (a.exec) s.auth = "exec";
  else if (!a.client_cert_pem.empty()) s.auth = "client-certificate";
  else if (!a.token.empty()) s.auth = "token";
  else if (!a.username.empty()) s.auth = "basic";
  else s.auth = "none";
  if (a.insecure_skip_tls_verify) s.warnings.push_back("TLS verification is disabled (insecure-skip-tls-verify)");
  if (starts_with(to_lower(a.server), "http://") && s.auth != "none")
    s.warnings.push_back("credentials would be sent over plain http");
  return s;
}

KubeconfigSummary validate_kubeconfig(const std::string& text_or_path, const std::string& context,
                                      const std::string& label) {
  Kubeconfig config = text_or_path.find('\n') != std::string::npos
                          ? parse_kubeconfig(text_or_path, "<inline>", {})
                          : load_kubeconfig_file(text_or_path);
  if (config.contexts.empty())
    fail(ErrorKind::invalid,
         (label.empty() ? std::string() : "cluster '" + label + "': ") + "kubeconfig '" + config.origin +
             "' defines no contexts");
  return validate_access(resolve_access(config, context, label));
}

}  // namespace emco::kube
