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

// For a process about to build large short-lived structures (rendering charts): asks the
// kernel for transparent huge pages in the next 30 MiB of the heap, once per process. A render
// of a big chart touches tens of megabytes of fresh heap, and faulting it in 4 KiB at a time was
// half of `emco template`'s time as a process (10,700 faults for kube-prometheus-stack). Blocks
// made later start at the first whole huge page (up to 2 MiB of heap before it are left
// untouched). Only memory not yet touched is affected; where the kernel has no huge page at hand it falls back
// to small pages (transparent_hugepage "never" makes this a no-op). Not called by short
// commands: a huge page costs ~0.2 ms to clear, and they touch well under 2 MiB.
void prefer_huge_pages_for_heap();

}  // namespace emco
