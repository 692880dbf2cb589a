#pragma once
/* The binder behind the stubs cmake/EmcoLazy.cmake generates for a shared
   library loaded on first use (stubs.S.in lays out the descriptor). */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct emco_lazy_library {
  const char* soname;      /* what dlopen() is given: "libcurl.so.4" */
  const char* names;       /* the functions' names, each ended by NUL ... */
  const int32_t* offsets;  /* ... function i's at names + offsets[i] */
  void** table;            /* function i's address once bound, else 0 */
  size_t count;
  void* handle;            /* dlopen()'s answer once loaded, else NULL */
};

/* Called by the stubs on the first call of a function through `slot` (an
   entry of lib->table): loads the library once for all threads and points
   `slot` at its function (each other entry is bound on its own first call),
   so the caller can jump through `slot`.
   A library that cannot be loaded, or lacks that function, ends the
   process: "emco: error: ..." and a hint on stderr, exit code 1 (stdio's
   buffers are flushed first). */
void emco_lazy_bind(struct emco_lazy_library* lib, void** slot);

#ifdef __cplusplus
}
#endif
