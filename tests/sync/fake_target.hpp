#pragma once
// Fake clusters for the sync tests: a Target that records what it was sent.

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/sync/target.hpp"

namespace emco::sync::testing {

using namespace std::chrono_literals;

// A cluster that records what it was sent. Manifests are plain names in
// these tests ("cm-a"); "fail:" makes a permanent failure, and the cluster
// can be unreachable for the first N probes/calls.
struct FakeCluster {
  std::mutex m;
  std::vector<std::string> log;  // "apply x", "create x", "remove x"
  std::set<std::string> objects;
  int unreachable_calls = 0;     // calls that throw unreachable before it answers
  bool always_unreachable = false;
  std::map<std::string, int> not_ready_reads;  // object -> reads reporting not ready
  std::atomic<int> active{0};
  std::atomic<int>* global_active = nullptr;
  std::atomic<int>* global_peak = nullptr;
};

class FakeTarget : public Target {
public:
  explicit FakeTarget(FakeCluster& c) : m_c(c) {}
  void probe() override { gate(); }
  void apply(std::string_view manifest, bool create_only) override {
    Busy b(m_c);
    gate();
    std::string name(manifest);
    if (name.rfind("fail:", 0) == 0) throw TargetError(false, false, "admission webhook denied '" + name + "'");
    std::lock_guard lock(m_c.m);
    m_c.log.push_back(std::string(create_only ? "create " : "apply ") + name);
    m_c.objects.insert(name);
  }
  bool remove(std::string_view manifest) override {
    gate();
    std::string name(manifest);
    if (name.rfind("fail:", 0) == 0) throw TargetError(false, false, "forbidden");
    std::lock_guard lock(m_c.m);
    m_c.log.push_back("remove " + name);
    return m_c.objects.erase(name) > 0;
  }
  ObjectState state(std::string_view manifest) override {
    gate();
    std::lock_guard lock(m_c.m);
    std::string name(manifest);
    ObjectState s;
    s.present = m_c.objects.count(name) > 0;
    auto& n = m_c.not_ready_reads[name];
    s.ready = s.present && n <= 0;
    if (n > 0) --n;
    return s;
  }
  std::string read(std::string_view) override { return {}; }

private:
  struct Busy {
    FakeCluster& c;
    explicit Busy(FakeCluster& cl) : c(cl) {
      if (c.global_active) {
        int now = ++*c.global_active;
        int peak = c.global_peak->load();
        while (now > peak && !c.global_peak->compare_exchange_weak(peak, now)) {
        }
        std::this_thread::sleep_for(2ms);
      }
    }
    ~Busy() {
      if (c.global_active) --*c.global_active;
    }
  };
  void gate() {
    std::lock_guard lock(m_c.m);
    if (m_c.always_unreachable) throw TargetError(true, true, "connection refused");
    if (m_c.unreachable_calls > 0) {
      --m_c.unreachable_calls;
      throw TargetError(true, true, "connection refused");
    }
  }
  FakeCluster& m_c;
};

struct Fleet {
  std::map<std::string, FakeCluster> clusters;
  TargetFactory factory() {
    return [this](const std::string& cluster, const std::string&) -> std::shared_ptr<Target> {
      return std::make_shared<FakeTarget>(clusters[cluster]);
    };
  }
};

}  // namespace emco::sync::testing
