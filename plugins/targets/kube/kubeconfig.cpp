#include "plugins/targets/kube/kubeconfig.hpp"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/util/error.hpp"
#include "core/util/strings.hpp"
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

std::string scalar(const YAML::Node& node, const char* key) {
  YAML::Node v = node[key];
  if (!v || v.IsNull()) return {};
  if (!v.IsScalar()) fail(ErrorKind::invalid, std::string("field '") + key + "' must be a string");
  return v.Scalar();
}

bool boolean(const YAML::Node& node, const char* key) {
  YAML::Node v = node[key];
  if (!v || v.IsNull()) return false;
  std::string s = to_lower(v.Scalar());
  if (s == "true") return true;
  if (s == "false") return false;
  fail(ErrorKind::invalid, std::string("field '") + key + "' must be true or false");
}

// Iterates a `clusters:`/`users:`/`contexts:` list of {name, <inner>} items.
template <typename Fn>
void each_named(const YAML::Node& root, const char* list, const char* inner, Fn&& fn) {
  YAML::Node items = root[list];
  if (!items || items.IsNull()) return;
  if (!items.IsSequence()) fail(ErrorKind::invalid, std::string("'") + list + "' must be a list");
  for (size_t i = 0; i < items.size(); ++i) {
    YAML::Node item = items[i];
    std::string where = std::string(list) + "[" + std::to_string(i) + "]";
    if (!item.IsMap()) fail(ErrorKind::invalid, "'" + where + "' must be a mapping");
    std::string name = scalar(item, "name");
    if (name.empty()) fail(ErrorKind::invalid, "'" + where + "' has no name");
    YAML::Node body = item[inner];
    if (body && !body.IsNull() && !body.IsMap())
      fail(ErrorKind::invalid, "'" + where + "." + inner + "' must be a mapping");
    try {
      fn(name, body ? body : YAML::Node(YAML::NodeType::Map));
    } catch (const Error& e) {
      throw e.with_context(std::string(list).substr(0, std::strlen(list) - 1) + " '" + name + "'");
    }
  }
}

ExecConfig parse_exec(const YAML::Node& node, const std::string& base_dir) {
  if (!node.IsMap()) fail(ErrorKind::invalid, "'exec' must be a mapping");
  ExecConfig exec;
  exec.api_version = scalar(node, "apiVersion");
  exec.command = scalar(node, "command");
  // client-go resolves a command with a path separator against the file's dir.
  if (exec.command.find('/') != std::string::npos) exec.command = resolve_path(exec.command, base_dir);
  if (YAML::Node args = node["args"]; args && !args.IsNull()) {
    if (!args.IsSequence()) fail(ErrorKind::invalid, "'exec.args' must be a list");
    for (const auto& a : args) exec.args.push_back(a.Scalar());
  }
  if (YAML::Node env = node["env"]; env && !env.IsNull()) {
    if (!env.IsSequence()) fail(ErrorKind::invalid, "'exec.env' must be a list of {name, value}");
    for (const auto& e : env) {
      if (!e.IsMap()) fail(ErrorKind::invalid, "'exec.env' must be a list of {name, value}");
      exec.env.emplace_back(scalar(e, "name"), scalar(e, "value"));
    }
  }
  exec.install_hint = scalar(node, "installHint");
  exec.provide_cluster_info = boolean(node, "provideClusterInfo");
  return exec;
}

std::string read_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorKind::invalid, "cannot read " + what + " '" + path + "': " + std::strerror(errno));
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string decode_data(const std::string& data, const std::string& what) {
  auto decoded = base64_decode(data);
  if (!decoded) fail(ErrorKind::invalid, what + " is not valid base64");
  return *decoded;
}

std::string strip_trailing_slashes(std::string s) {
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

}  // namespace

Kubeconfig parse_kubeconfig(std::string_view text, const std::string& origin, const std::string& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    // e.msg describes the syntax problem; the mark gives the place. Neither
    // echoes the document's content.
    fail(ErrorKind::invalid,
         "cannot parse kubeconfig '" + origin + "': line " + std::to_string(e.mark.line + 1) + ", column " +
             std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  Kubeconfig config;
  config.origin = origin;
  if (!root || root.IsNull()) return config;  // an empty file is an empty config, as for kubectl
  try {
    if (!root.IsMap()) fail(ErrorKind::invalid, "not a kubeconfig (expected a mapping at the top)");
    std::string kind = scalar(root, "kind");
    if (!kind.empty() && kind != "Config") fail(ErrorKind::invalid, "kind is '" + kind + "', expected 'Config'");
    config.current_context = scalar(root, "current-context");
    each_named(root, "clusters", "cluster", [&](const std::string& name, const YAML::Node& c) {
      KubeconfigCluster cluster;
      cluster.server = scalar(c, "server");
      cluster.certificate_authority = resolve_path(scalar(c, "certificate-authority"), base_dir);
      cluster.certificate_authority_data = scalar(c, "certificate-authority-data");
      cluster.insecure_skip_tls_verify = boolean(c, "insecure-skip-tls-verify");
      cluster.tls_server_name = scalar(c, "tls-server-name");
      cluster.proxy_url = scalar(c, "proxy-url");
      config.clusters.emplace(name, std::move(cluster));  // first definition wins
    });
    each_named(root, "users", "user", [&](const std::string& name, const YAML::Node& u) {
      KubeconfigUser user;
      user.client_certificate = resolve_path(scalar(u, "client-certificate"), base_dir);
      user.client_certificate_data = scalar(u, "client-certificate-data");
      user.client_key = resolve_path(scalar(u, "client-key"), base_dir);
      user.client_key_data = scalar(u, "client-key-data");
      user.token = scalar(u, "token");
      user.token_file = resolve_path(scalar(u, "tokenFile"), base_dir);
      user.username = scalar(u, "username");
      user.password = scalar(u, "password");
      if (YAML::Node exec = u["exec"]; exec && !exec.IsNull()) user.exec = parse_exec(exec, base_dir);
      if (YAML::Node ap = u["auth-provider"]; ap && ap.IsMap()) {
        user.auth_provider = scalar(ap, "name");
        if (user.auth_provider.empty()) user.auth_provider = "unnamed";
      }
      config.users.emplace(name, std::move(user));
    });
    each_named(root, "contexts", "context", [&](const std::string& name, const YAML::Node& c) {
      KubeconfigContext context;
      context.cluster = scalar(c, "cluster");
      context.user = scalar(c, "user");
      context.ns = scalar(c, "namespace");
      config.contexts.emplace(name, std::move(context));
    });
  } catch (const Error& e) {
    throw e.with_context("invalid kubeconfig '" + origin + "'");
  } catch (const YAML::Exception& e) {
    fail(ErrorKind::invalid, "invalid kubeconfig '" + origin + "': " + e.msg);
  }
  return config;
}

Kubeconfig load_kubeconfig_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorKind::not_found, "cannot read kubeconfig '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  std::string dir = fs::absolute(fs::path(path)).parent_path().string();
  return parse_kubeconfig(text.str(), path, dir);
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
      a.ca_pem = read_file(c.certificate_authority, "certificate-authority");
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
        a.client_cert_pem = read_file(u.client_certificate, "client-certificate");
      if (!u.client_key_data.empty())
        a.client_key_pem = decode_data(u.client_key_data, "client-key-data");
      else if (!u.client_key.empty())
        a.client_key_pem = read_file(u.client_key, "client-key");
      if (a.client_cert_pem.empty() != a.client_key_pem.empty())
        fail(ErrorKind::invalid, a.client_cert_pem.empty() ? "client-key given without client-certificate"
                                                           : "client-certificate given without client-key");
      a.token = u.token;
      if (a.token.empty() && !u.token_file.empty()) a.token = trim(read_file(u.token_file, "tokenFile"));
      a.username = u.username;
      a.password = u.password;
      a.exec = u.exec;
    }
  } catch (const Error& e) {
    throw e.with_context(who);
  }
  return a;
}

std::string flatten_kubeconfig(const Kubeconfig& config, const std::string& context) {
  ClusterAccess a = resolve_access(config, context);  // reads the files, checks the references
  const KubeconfigCluster& c = config.clusters.at(a.cluster);
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "apiVersion" << YAML::Value << "v1" << YAML::Key << "kind" << YAML::Value
      << "Config";
  out << YAML::Key << "clusters" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "name"
      << YAML::Value << a.cluster << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "server" << YAML::Value << c.server;
  if (!a.ca_pem.empty()) out << YAML::Key << "certificate-authority-data" << YAML::Value << base64_encode(a.ca_pem);
  if (c.insecure_skip_tls_verify) out << YAML::Key << "insecure-skip-tls-verify" << YAML::Value << true;
  if (!c.tls_server_name.empty()) out << YAML::Key << "tls-server-name" << YAML::Value << c.tls_server_name;
  if (!c.proxy_url.empty()) out << YAML::Key << "proxy-url" << YAML::Value << c.proxy_url;
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "users" << YAML::Value << YAML::BeginSeq;
  if (!a.user.empty()) {
    const KubeconfigUser& u = config.users.at(a.user);
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << a.user << YAML::Key << "user" << YAML::Value
        << YAML::BeginMap;
    if (!a.client_cert_pem.empty()) {
      out << YAML::Key << "client-certificate-data" << YAML::Value << base64_encode(a.client_cert_pem);
      out << YAML::Key << "client-key-data" << YAML::Value << base64_encode(a.client_key_pem);
    }
    if (!u.token.empty()) out << YAML::Key << "token" << YAML::Value << u.token;
    if (!u.token_file.empty()) out << YAML::Key << "tokenFile" << YAML::Value << u.token_file;
    if (!u.username.empty()) out << YAML::Key << "username" << YAML::Value << u.username;
    if (!u.password.empty()) out << YAML::Key << "password" << YAML::Value << u.password;
    if (u.exec) {
      const ExecConfig& e = *u.exec;
      out << YAML::Key << "exec" << YAML::Value << YAML::BeginMap;
      if (!e.api_version.empty()) out << YAML::Key << "apiVersion" << YAML::Value << e.api_version;
      out << YAML::Key << "command" << YAML::Value << e.command;
      if (!e.args.empty()) out << YAML::Key << "args" << YAML::Value << e.args;
      if (!e.env.empty()) {
        out << YAML::Key << "env" << YAML::Value << YAML::BeginSeq;
        for (const auto& [k, v] : e.env)
          out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << k << YAML::Key << "value" << YAML::Value << v
              << YAML::EndMap;
        out << YAML::EndSeq;
      }
      if (!e.install_hint.empty()) out << YAML::Key << "installHint" << YAML::Value << e.install_hint;
      if (e.provide_cluster_info) out << YAML::Key << "provideClusterInfo" << YAML::Value << true;
      out << YAML::EndMap;
    }
    out << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq << YAML::BeginMap << YAML::Key << "name"
      << YAML::Value << a.context << YAML::Key << "context" << YAML::Value << YAML::BeginMap << YAML::Key << "cluster"
      << YAML::Value << a.cluster;
  if (!a.user.empty()) out << YAML::Key << "user" << YAML::Value << a.user;
  if (!a.ns.empty()) out << YAML::Key << "namespace" << YAML::Value << a.ns;
  out << YAML::EndMap << YAML::EndMap << YAML::EndSeq;
  out << YAML::Key << "current-context" << YAML::Value << a.context << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
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
