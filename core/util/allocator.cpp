#include "core/util/allocator.hpp"

#include <malloc.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>

namespace emco {
namespace {

// prefer_huge_pages_for_heap's block over the heap's small-page head. Volatile: a block nothing
// reads is one the compiler may leave unallocated. Held here, leak checkers see it reachable.
void* volatile g_heap_head = nullptr;

}  // namespace

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
    // The head of the block, before the first whole huge page, stays in small pages, and later
    // blocks would be carved from it first: a small chart's render fitted there almost whole
    // and faulted it in 4 KiB at a time (330 of bitnami-mariadb's 500 faults). A block over
    // the head, kept for the process's life, makes them start in the advised range; the head
    // itself is never touched beyond the block's header.
    if (last > first) g_heap_head = std::malloc(first - start);
  });
}

}  // namespace emco
