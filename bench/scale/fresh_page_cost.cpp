// What this machine charges for memory a process touches for the first time,
// by the amount touched: the scale bench prints it beside its figures, since
// a step's kernel time follows it (on a virtual machine whose host backs
// guest memory lazily, pages beyond what the host keeps warm cost several
// times the first ones, which makes any large step look superlinear).
//
//   fresh_page_cost MIB...
//       for each size: maps that many MiB of anonymous memory, writes one
//       byte per 4 KiB page, unmaps it; prints "<MiB> MiB: <µs> us/page"
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fresh_page_cost MIB...\n");
    return 2;
  }
  constexpr size_t page = 4096;
  for (int i = 1; i < argc; ++i) {
    const size_t mib = std::stoul(argv[i]);
    const size_t bytes = mib << 20;
    void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
      std::perror("fresh_page_cost: mmap");
      return 1;
    }
    auto* p = static_cast<volatile char*>(map);
    auto start = std::chrono::steady_clock::now();
    for (size_t at = 0; at < bytes; at += page) p[at] = 1;
    std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    munmap(map, bytes);
    std::printf("%zu MiB: %.2f us/page\n", mib, took.count() / double(bytes / page));
  }
  return 0;
}
