#pragma once
// Runs independent pieces of work on a bounded number of threads.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace emco {

// Calls fn(i) once for every i in [0, n), on the calling thread and at most
// `parallel` - 1 others (each takes the next index until none is left), and
// returns when every call has returned. fn must not throw.
template <class F>
void parallel_for(size_t n, size_t parallel, F&& fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
  };
  const size_t threads = std::max<size_t>(1, std::min(parallel, n));
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

}  // namespace emco
