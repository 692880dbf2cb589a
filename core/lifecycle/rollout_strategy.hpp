#pragma once
// A rollout strategy as core runs it (rollout.hpp); where it comes from is
// the runtime's RolloutSource (runtime.hpp).

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace emco::lifecycle::rollout {

// A number of clusters or a percentage of them ("3", "25%").
struct Amount {
  long long value = 0;
  bool percent = false;
  // Of `total` clusters: a count as it is, a percentage rounded up.
  size_t of(size_t total) const;
  std::string text() const;  // "3", "25%"
};

struct Strategy {
  std::string name;                       // the strategy resource's name
  // How the clusters are split (at most one; none: one wave of every cluster).
  size_t waves = 0;                       // this many waves of equal size
  std::optional<Amount> wave_size;        // waves of this many clusters
  std::vector<std::string> groups;        // one group per cluster label, in this order; the clusters with
                                          // none of them form a last group (OCM's mandatory decision groups first)
  std::optional<Amount> max_concurrency;  // no wave holds more clusters (OCM): a larger wave or group is split
  std::optional<Amount> max_unavailable;  // clusters that may be not ready at once (Fleet): as a wave's
                                          // clusters are not ready until its gate passes, no wave holds more
  Amount max_failures;                    // failed clusters tolerated before the rollout pauses (default 0)
  std::chrono::milliseconds min_success{0};
  std::chrono::milliseconds progress_deadline{std::chrono::minutes(10)};
  bool rollback_on_failure = false;       // abort with rollback instead of pausing
};

}  // namespace emco::lifecycle::rollout
