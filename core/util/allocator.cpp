#include "core/util/allocator.hpp"

#include <malloc.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>

namespace emco {

void tune_allocator() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  mallopt(M_TOP_PAD, 16 << 20);
}

void prefer_huge_pages_for_heap() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Below M_MMAP_THRESHOLD, so the block is carved from the top of the brk heap; freed, it
    // returns to the top chunk (M_TRIM_THRESHOLD keeps it mapped), and later blocks are carved
    // from the advised range. malloc writes only the block's header, which lies before the
    // first whole huge page advised.
    constexpr std::size_t k_reserve = 30u << 20, k_huge = 2u << 20;
    void* block = std::malloc(k_reserve);
    if (!block) return;
    const auto start = reinterpret_cast<std::uintptr_t>(block);
    const std::uintptr_t first = (start + k_huge - 1) & ~(k_huge - 1);
    const std::uintptr_t last = (start + k_reserve) & ~(k_huge - 1);
    if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // advice: failure is harmless
    std::free(block);
  });
}

}  // namespace emco
