#include "core/util/allocator.hpp"

#include <malloc.h>

namespace emco {

void tune_allocator() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  mallopt(M_TOP_PAD, 16 << 20);
}

}  // namespace emco
