// prefer_huge_pages_for_heap: the heap range later blocks come from, from the first on, carries
// the kernel's huge-page advice ("hg" in /proc/self/smaps' VmFlags), and calling it again
// changes nothing.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "core/util/allocator.hpp"

namespace {

// The VmFlags of the mapping that holds `address`, from /proc/self/smaps ("" if none).
std::string vm_flags_at(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t from = 0, to = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> from >> dash >> to && dash == '-' && line.find(' ') > line.find('-')) {
      inside = from <= at && at < to;
      continue;
    }
    if (inside && line.starts_with("VmFlags:")) return line;
  }
  return "";
}

[[maybe_unused]] bool kernel_has_thp() { return std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good(); }

}  // namespace

TEST_CASE("heap blocks made after prefer_huge_pages_for_heap lie in huge-page-advised memory", "[allocator]") {
  emco::tune_allocator();
  emco::prefer_huge_pages_for_heap();
  emco::prefer_huge_pages_for_heap();  // once per process: a second call reserves nothing more
  // The first block after it, from the heap's top (below the mmap threshold, larger than any
  // free block): at the start of the advised range, not in the small-page head before it.
  void* first = std::malloc(256u << 10);
  // A block well inside the advised range.
  void* block = std::malloc(8u << 20);
  REQUIRE(first != nullptr);
  REQUIRE(block != nullptr);
  const void* middle = static_cast<char*>(block) + (4u << 20);
  const std::string flags = vm_flags_at(middle);
  const std::string first_flags = vm_flags_at(first);
  std::free(block);
  std::free(first);
  REQUIRE_FALSE(flags.empty());
  REQUIRE_FALSE(first_flags.empty());
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's allocator replaces glibc's heap: the advice lands on glibc's unused heap.
  CHECK(flags.starts_with("VmFlags:"));
#else
  // madvise(MADV_HUGEPAGE) sets the flag whatever transparent_hugepage/enabled says; a kernel
  // built without THP refuses it.
  CHECK((flags.find(" hg") != std::string::npos) == kernel_has_thp());
  CHECK((first_flags.find(" hg") != std::string::npos) == kernel_has_thp());
#endif
}
