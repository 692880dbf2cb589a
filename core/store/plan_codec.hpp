#pragma once
// The stored form of one app's plan in an AppContext (core/appcontext): its
// clusters in order, each with its resources in order (main list first, then
// the hook groups), every resource as (hook group, name, content hash). One
// row per app in the workspace, addressed by the SHA-256 of this encoding, so
// contexts that plan an app identically share the row (an update stores only
// the apps that changed) and equal digests mean equal plans.
//
// Encoding: "EPL1", then items: 'C' i32 group, str name | 'R' str hook,
// str name, str hash; then 'E'; str = u32 length + bytes; integers
// little-endian. The end mark makes any truncation detectable.

#include <cstdint>
#include <string>
#include <string_view>

namespace emco::store {

class PlanWriter {
public:
  PlanWriter();
  // Starts a cluster; the resources that follow belong to it.
  void cluster(std::string_view name, int group);
  // hook: "" for the main list, else the hook group ("pre-install", ...).
  void resource(std::string_view hook, std::string_view name, std::string_view hash);
  // The encoding (the writer is left empty).
  std::string finish();

private:
  void put_u32(uint32_t v);
  void put_str(std::string_view s);
  std::string m_out;
};

// Reads an encoding item by item (a resource before any cluster is malformed); views point into the data, which must
// outlive the reader. Throws Error(internal) naming `what` on a malformed or
// truncated encoding.
class PlanReader {
public:
  enum class Item { cluster, resource, end };
  PlanReader(std::string_view data, std::string_view what);
  Item next();
  // Valid after next() returned cluster:
  std::string_view cluster_name() const { return m_name; }
  int cluster_group() const { return m_group; }
  // Valid after next() returned resource:
  std::string_view hook() const { return m_hook; }
  std::string_view resource_name() const { return m_name; }
  std::string_view hash() const { return m_hash; }

private:
  uint32_t get_u32();
  std::string_view get_str();
  [[noreturn]] void malformed() const;
  std::string_view m_data;
  size_t m_pos = 0;
  std::string m_what;
  std::string_view m_name, m_hook, m_hash;
  int m_group = 0;
  bool m_in_cluster = false;
};

}  // namespace emco::store
