// `emco sim start|stop|fault`: process-level wrappers around Simulator.

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/util/error.hpp"
#include "sim/sim.hpp"
#include "sim/versions.hpp"

namespace emco::sim {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_private(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(ErrorKind::failed, "cannot write '" + tmp + "'");
    out << content;
  }
  ::chmod(tmp.c_str(), 0600);
  fs::rename(tmp, path);
}

// Running (a zombie waiting for its parent to reap it has stopped).
bool alive(pid_t pid) {
  if (pid <= 0 || (::kill(pid, 0) != 0 && errno != EPERM)) return false;
  std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'Z';
}

pid_t read_pid(const std::string& dir) {
  std::string text = read_text(dir + "/sim.pid");
  return static_cast<pid_t>(std::atol(text.c_str()));
}

}  // namespace

int parse_kube_version(const std::string& text) {
  std::string v = text.size() > 1 && text[0] == 'v' ? text.substr(1) : text;
  std::string range = "1." + std::to_string(detail::k_oldest_minor) + " to 1." + std::to_string(detail::k_newest_minor);
  int minor = -1;
  if (v.size() > 2 && v.compare(0, 2, "1.") == 0 && v.size() <= 4 &&
      v.find_first_not_of("0123456789", 2) == std::string::npos)
    minor = std::stoi(v.substr(2));
  if (minor < detail::k_oldest_minor || minor > detail::k_newest_minor)
    fail(ErrorKind::usage, "'--kube-version' must be a Kubernetes release from " + range + ", not '" + text + "'",
         "pass MAJOR.MINOR, e.g. --kube-version 1.24");
  return minor;
}

int run_sim_start(const SimStartArgs& args) {
  if (args.options.dir.empty())
    fail(ErrorKind::usage, "emco sim start needs a directory", "pass --dir DIR");
  std::string dir = fs::absolute(args.options.dir).string();
  pid_t other = read_pid(dir);
  if (other && other != ::getpid() && alive(other))
    fail(ErrorKind::conflict, "a simulator is already running in '" + dir + "' (pid " + std::to_string(other) + ")",
         "run 'emco sim stop --dir " + dir + "' first");

  // Block the signals before the loop thread starts so that only sigwait
  // below sees them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  SimOptions options = args.options;
  options.dir = dir;
  Simulator sim(options);
  sim.start();
  json info = {{"pid", ::getpid()},
               {"port", sim.port()},
               {"clusters", sim.cluster_names().size()},
               {"kubeconfigs", dir + "/kubeconfigs"},
               {"ca", sim.ca_path()}};
  write_private(dir + "/sim.json", info.dump(2) + "\n");
  write_private(dir + "/sim.pid", std::to_string(::getpid()) + "\n");
  std::printf("%s\n", (dir + "/kubeconfigs").c_str());
  std::fflush(stdout);

  int sig = 0;
  sigwait(&set, &sig);
  sim.stop();
  std::error_code ec;
  fs::remove(dir + "/sim.pid", ec);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  return 0;
}

int run_sim_stop(const std::string& dir_in, int timeout_s) {
  std::string dir = fs::absolute(dir_in).string();
  pid_t pid = read_pid(dir);
  if (!pid || !alive(pid))
    fail(ErrorKind::not_found, "no simulator is running in '" + dir + "'", "start one with 'emco sim start'");
  if (::kill(pid, SIGTERM) != 0)
    fail(ErrorKind::failed, "cannot signal the simulator (pid " + std::to_string(pid) + ")");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (alive(pid)) {
    if (std::chrono::steady_clock::now() > deadline)
      fail(ErrorKind::pending, "the simulator (pid " + std::to_string(pid) + ") did not stop within " +
                                   std::to_string(timeout_s) + "s");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

namespace {

// Rewrites dir/<name>.json under dir/<name>.lock: `change` edits its
// "clusters" object.
void edit_control_file(const std::string& dir_in, const std::string& name,
                       const std::function<void(json& clusters)>& change) {
  std::string dir = fs::absolute(dir_in).string();
  if (!fs::is_directory(dir)) fail(ErrorKind::not_found, "simulator directory '" + dir + "' not found");
  std::string lock_path = dir + "/" + name + ".lock";
  int fd = ::open(lock_path.c_str(), O_CREAT | O_RDWR, 0600);
  if (fd < 0) fail(ErrorKind::failed, "cannot open '" + lock_path + "'");
  ::flock(fd, LOCK_EX);
  try {
    json doc = json::parse(read_text(dir + "/" + name + ".json"), nullptr, false);
    if (!doc.is_object()) doc = json::object();
    if (!doc.contains("clusters") || !doc["clusters"].is_object()) doc["clusters"] = json::object();
    change(doc["clusters"]);
    write_private(dir + "/" + name + ".json", doc.dump(2) + "\n");
  } catch (...) {
    ::flock(fd, LOCK_UN);
    ::close(fd);
    throw;
  }
  ::flock(fd, LOCK_UN);
  ::close(fd);
}

}  // namespace

int run_sim_fault(const SimFaultArgs& args) {
  if (args.clusters.empty()) fail(ErrorKind::usage, "name at least one cluster (or '*')");
  edit_control_file(args.dir, "faults", [&](json& clusters) {
    for (const auto& c : args.clusters) {
      if (args.clear) {
        if (c == "*")
          clusters = json::object();
        else
          clusters.erase(c);
      } else {
        clusters[c] = fault_to_json(args.fault);
      }
    }
  });
  return 0;
}

int run_sim_node(const SimNodeArgs& args) {
  if (args.action != "add" && args.action != "label" && args.action != "set")
    fail(ErrorKind::usage, "unknown node action '" + args.action + "'", "use add, label or set");
  if (args.cluster.empty() || args.node.empty()) fail(ErrorKind::usage, "name a cluster (or '*') and a node");
  json labels = json::object(), resources = json::object(), capacity = json::object(), allocatable = json::object();
  for (const auto& s : args.settings) {
    auto eq = s.find('=');
    if (args.action == "label" && eq == std::string::npos && s.size() > 1 && s.back() == '-') {
      labels[s.substr(0, s.size() - 1)] = nullptr;
    } else if (args.action == "label" && eq != std::string::npos && eq > 0) {
      labels[s.substr(0, eq)] = s.substr(eq + 1);
    } else if (args.action == "set" && eq != std::string::npos && eq > 0) {
      // capacity:NAME / allocatable:NAME set one of the two (resource names have no ':').
      std::string name = s.substr(0, eq), value = s.substr(eq + 1);
      json* into = &resources;
      for (auto [prefix, target] : {std::pair<std::string, json*>{"capacity:", &capacity}, {"allocatable:", &allocatable}})
        if (name.rfind(prefix, 0) == 0) {
          name = name.substr(prefix.size());
          into = target;
        }
      if (name.empty()) fail(ErrorKind::usage, "invalid setting '" + s + "' for 'emco sim node set'", "name a resource");
      (*into)[name] = value;
    } else {
      fail(ErrorKind::usage, "invalid setting '" + s + "' for 'emco sim node " + args.action + "'",
           args.action == "add" ? "add takes no settings: label or set the node afterwards"
           : args.action == "label" ? "give KEY=VALUE to set a label, KEY- to remove it"
                                    : "give RESOURCE=QUANTITY (capacity and allocatable), capacity:RESOURCE=QUANTITY or "
                                      "allocatable:RESOURCE=QUANTITY, e.g. cpu=8 allocatable:cpu=7500m memory=32Gi");
    }
  }
  edit_control_file(args.dir, "nodes", [&](json& clusters) {
    json& node = clusters[args.cluster][args.node];
    if (!node.is_object()) node = json::object();
    for (const auto& [k, v] : labels.items()) node["labels"][k] = v;
    for (const auto& [k, v] : resources.items()) {
      node["resources"][k] = v;
      if (node.contains("capacity")) node["capacity"].erase(k);
      if (node.contains("allocatable")) node["allocatable"].erase(k);
    }
    for (const auto& [k, v] : capacity.items()) node["capacity"][k] = v;
    for (const auto& [k, v] : allocatable.items()) node["allocatable"][k] = v;
  });
  return 0;
}

}  // namespace emco::sim
