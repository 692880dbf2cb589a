/* The binder of the lazily loaded libraries (lazy_bind.h). It runs inside
   a stub, below whatever emco function called the library: it cannot throw,
   so a library that will not load ends the process with a message. */

#include "lazy_bind.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* One lock for every library: loading happens a few times per process. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void fatal(const char* what, const char* soname, const char* detail) {
  fflush(NULL);
  fprintf(stderr, "emco: error: %s %s: %s\n", what, soname, detail ? detail : "unknown reason");
  fprintf(stderr, "hint: emco loads %s when a command first needs it; install (or reinstall) the package that provides it\n",
          soname);
  fflush(stderr);
  _exit(1);
}

__attribute__((visibility("hidden"))) void emco_lazy_bind(struct emco_lazy_library* lib, void** slot) {
  pthread_mutex_lock(&lock);
  if (!lib->handle) {
    /* RTLD_LAZY: the library's own calls bind as they are made, as at start-up. */
    void* h = dlopen(lib->soname, RTLD_LAZY | RTLD_LOCAL);
    if (!h) fatal("cannot load", lib->soname, dlerror());
    lib->handle = h;
  }
  /* Only the function called: binding all of a library's at once (5,363 dlsym() calls for
     libcrypto) was a third of a small chart's `emco template` that needed one digest. A
     thread that waited on the lock may find its entry bound already. */
  if (!__atomic_load_n(slot, __ATOMIC_ACQUIRE)) {
    size_t index = (size_t)(slot - lib->table);
    const char* name = lib->names + lib->offsets[index];
    void* f = dlsym(lib->handle, name);
    /* Unbound: the installed library lacks the function the build's had (another version
       under the same SONAME). */
    if (!f) {
      char detail[256];
      snprintf(detail, sizeof detail, "it has no function %s (a different version than emco was built with?)", name);
      fatal("cannot use", lib->soname, detail);
    }
    /* A stub racing this store goes either to the binder (and waits on the lock) or to the
       function: both are right. */
    __atomic_store_n(slot, f, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&lock);
}
