#pragma once
// A workflow client of the tests' own: a real HTTP server on loopback
// (tests/kube's TestServer) that records every request and answers as told
// per path — 204 (started) by default, a failure with a body, or slowly.

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tests/kube/test_server.hpp"

namespace emco::test {

struct WorkflowClient {
  std::mutex m;
  std::vector<kube::test::TestRequest> seen;
  std::map<std::string, kube::test::TestResponse> answers;  // by path; absent: 204
  kube::test::TestServer server{[this](const kube::test::TestRequest& r) {
    std::lock_guard<std::mutex> l(m);
    seen.push_back(r);
    auto it = answers.find(r.target);
    if (it != answers.end()) return it->second;
    kube::test::TestResponse started;
    started.status = 204;
    return started;
  }};

  // "METHOD PATH" of every request so far.
  std::vector<std::string> paths() {
    std::lock_guard<std::mutex> l(m);
    std::vector<std::string> v;
    for (const auto& r : seen) v.push_back(r.method + " " + r.target);
    return v;
  }
  size_t count(const std::string& path) {
    std::lock_guard<std::mutex> l(m);
    size_t n = 0;
    for (const auto& r : seen) n += r.target == path;
    return n;
  }
  void clear() {
    std::lock_guard<std::mutex> l(m);
    seen.clear();
  }
};

}  // namespace emco::test
