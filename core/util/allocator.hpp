#pragma once
// Process-wide malloc settings for emco's workloads, called first thing in main() (and by the
// benchmarks, so they measure what users run).

namespace emco {

// glibc returns freed memory at the top of the heap to the kernel once 128 KiB are free and
// serves blocks above 128 KiB (growing with use) with fresh mmap()s. Rendering a chart
// allocates and frees tens of megabytes in short-lived blocks, so it kept giving pages back
// and faulting them in again (9% of a render). This keeps up to 64 MiB of free heap, grows
// the heap 16 MiB at a time and maps only blocks of 32 MiB and more. Memory is still returned
// when more than 64 MiB are free at the top.
void tune_allocator();

}  // namespace emco
