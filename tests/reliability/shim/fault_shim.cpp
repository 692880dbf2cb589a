// An LD_PRELOAD library for the crash-matrix and disk-fault tests: it counts
// the *steps* a process takes that leave a trace outside it, and at a chosen
// step kills the process (SIGKILL) or makes the write fail (ENOSPC, EIO).
//
// A step is a call that changes a file or talks to a peer: write, pwrite,
// writev, pwritev, fsync, fdatasync, ftruncate on a regular file; rename and
// unlink; send, sendto, sendmsg and write on a socket (sockets only count in
// kill mode: the disk modes fail disk writes). Consecutive calls on one
// descriptor are one step (SQLite writes a transaction's pages one call at a
// time; killing between two of them is the same crash as before the first).
// Descriptors 0–2 never count: emco must be able to report a fault.
//
// Environment:
//   EMCO_FAULT_MODE   count | kill | enospc | eio | erofs (anything else: pass
//                     through). erofs is a read-only file system: from the
//                     first step on, every file write fails with EROFS, and so
//                     does opening a file outside /dev for writing.
//   EMCO_FAULT_AT     the 1-based step at which kill/enospc/eio happens
//   EMCO_FAULT_STICKY 1: every failable step from EMCO_FAULT_AT on fails too
//                     (a full disk stays full)
//   EMCO_FAULT_STEPS  a file that receives the number of steps taken, written
//                     at exit (every mode; a killed process writes nothing)
//   EMCO_FAULT_SLOW_THREAD_ATEXIT_MS
//                     when a shared library registers an exit handler
//                     (__cxa_atexit) on a thread other than the main one, as
//                     OpenSSL does at its first initialisation, that thread
//                     then pauses this long: on a slow machine the process
//                     may begin exiting in the middle of that initialisation
//   EMCO_FAULT_CHECK_EXIT_ORDER
//                     1: an exit handler a shared library registered (such as
//                     OPENSSL_cleanup) that runs while another thread of the
//                     process still runs ends the process with status 99 and
//                     a message: that library's state would be torn down
//                     under the thread
//
// Calls made through glibc's stdio (fwrite) are not seen: glibc calls its own
// write internally. emco's writes go through write(2) (libstdc++'s filebuf,
// SQLite, libgit2 and libcurl all call the interposable symbols).

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>

namespace {

enum class Mode { off, count, kill, enospc, eio, erofs };

struct Config {
  Mode mode = Mode::off;
  long at = 0;
  bool sticky = false;
  const char* steps_file = nullptr;
};

const Config& config() {
  static const Config c = [] {
    Config out;
    const char* m = getenv("EMCO_FAULT_MODE");
    if (!m) return out;
    if (!strcmp(m, "count")) out.mode = Mode::count;
    else if (!strcmp(m, "kill")) out.mode = Mode::kill;
    else if (!strcmp(m, "enospc")) out.mode = Mode::enospc;
    else if (!strcmp(m, "eio")) out.mode = Mode::eio;
    else if (!strcmp(m, "erofs")) out.mode = Mode::erofs;
    if (const char* a = getenv("EMCO_FAULT_AT")) out.at = atol(a);
    if (const char* s = getenv("EMCO_FAULT_STICKY")) out.sticky = !strcmp(s, "1");
    if (out.mode == Mode::erofs) {
      out.at = 1;
      out.sticky = true;
    }
    out.steps_file = getenv("EMCO_FAULT_STEPS");
    return out;
  }();
  return c;
}

std::atomic<long> g_steps{0};
std::atomic<int> g_last_fd{-1};

template <class F>
F real(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

enum class Target { none, file, socket };

Target target_of(int fd) {
  if (fd <= 2) return Target::none;
  struct stat st;
  if (fstat(fd, &st) != 0) return Target::none;
  if (S_ISREG(st.st_mode)) return Target::file;
  if (S_ISSOCK(st.st_mode)) return Target::socket;
  return Target::none;
}

// What happens to this call: 0 go ahead, else the errno to fail it with
// (kill mode does not return). `frees` marks a call that gives space back
// (unlink): a full disk does not refuse it.
int step(int fd, Target t, bool frees = false) {
  const Config& c = config();
  if (c.mode == Mode::off || t == Target::none) return 0;
  if (t == Target::socket && c.mode != Mode::kill && c.mode != Mode::count) return 0;
  long n;
  if (fd >= 0 && g_last_fd.exchange(fd) == fd) {
    n = g_steps.load();
  } else {
    if (fd < 0) g_last_fd.store(-1);
    n = ++g_steps;
  }
  if (c.at <= 0) return 0;
  bool hit = c.sticky ? n >= c.at : n == c.at;
  if (!hit) return 0;
  if (frees && c.mode == Mode::enospc) return 0;
  switch (c.mode) {
    case Mode::kill:
      if (n == c.at) kill(getpid(), SIGKILL);
      return 0;
    case Mode::enospc: return ENOSPC;
    case Mode::eio: return EIO;
    case Mode::erofs: return EROFS;
    default: return 0;
  }
}

int fd_step(int fd) { return step(fd, target_of(fd)); }

// erofs: opening for writing fails (as on a read-only mount), except devices.
int open_check(const char* path, int flags) {
  if (config().mode != Mode::erofs) return 0;
  if (!(flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC))) return 0;
  if (path && !strncmp(path, "/dev/", 5)) return 0;
  return EROFS;
}

// A path operation (rename, unlink) is a step of its own.
int path_step(bool frees = false) { return step(-1, Target::file, frees); }

__attribute__((destructor)) void report_steps() {
  const Config& c = config();
  if (!c.steps_file) return;
  using open_fn = int (*)(const char*, int, ...);
  int fd = real<open_fn>("open")(c.steps_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return;
  char buf[32];
  int len = snprintf(buf, sizeof buf, "%ld\n", g_steps.load());
  using write_fn = ssize_t (*)(int, const void*, size_t);
  (void)!real<write_fn>("write")(fd, buf, static_cast<size_t>(len));
  close(fd);
}

// Whether `fn` lives in a shared library rather than the program itself.
bool registered_by_library(void (*fn)(void*)) {
  static char exe[4096];
  static const bool have_exe = [] {
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return false;
    exe[n] = 0;
    return true;
  }();
  Dl_info info;
  if (!have_exe || !dladdr(reinterpret_cast<void*>(fn), &info) || !info.dli_fname) return false;
  return strcmp(info.dli_fname, exe) != 0;
}

// EMCO_FAULT_CHECK_EXIT_ORDER: a library's exit handler, wrapped.
struct LibraryExitHandler {
  void (*fn)(void*);
  void* arg;
};

size_t threads_running() {
  size_t n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  return n;
}

void run_library_exit_handler(void* p) {
  auto* h = static_cast<LibraryExitHandler*>(p);
  if (size_t n = threads_running(); n > 1) {
    Dl_info info;
    const bool named = dladdr(reinterpret_cast<void*>(h->fn), &info) && info.dli_fname;
    fprintf(stderr, "fault shim: %s's exit handler %s ran while %zu threads still ran\n",
            named ? info.dli_fname : "a library", named && info.dli_sname ? info.dli_sname : "", n);
    _exit(99);
  }
  h->fn(h->arg);
  free(h);
}

}  // namespace

#define EMCO_FAIL_OR(call)        \
  if (int err = (call)) {         \
    errno = err;                  \
    return -1;                    \
  }

extern "C" {

int open(const char* path, int flags, ...) {
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = static_cast<mode_t>(va_arg(ap, int));
    va_end(ap);
  }
  EMCO_FAIL_OR(open_check(path, flags));
  static auto f = real<int (*)(const char*, int, ...)>("open");
  return f(path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = static_cast<mode_t>(va_arg(ap, int));
    va_end(ap);
  }
  EMCO_FAIL_OR(open_check(path, flags));
  static auto f = real<int (*)(const char*, int, ...)>("open64");
  return f(path, flags, mode);
}

int openat(int dir, const char* path, int flags, ...) {
  mode_t mode = 0;
  if (flags & (O_CREAT | O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = static_cast<mode_t>(va_arg(ap, int));
    va_end(ap);
  }
  EMCO_FAIL_OR(open_check(path, flags));
  static auto f = real<int (*)(int, const char*, int, ...)>("openat");
  return f(dir, path, flags, mode);
}

ssize_t write(int fd, const void* buf, size_t n) {
  EMCO_FAIL_OR(fd_step(fd));
  static auto f = real<ssize_t (*)(int, const void*, size_t)>("write");
  return f(fd, buf, n);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  EMCO_FAIL_OR(fd_step(fd));
  static auto f = real<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
  return f(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t off) {
  EMCO_FAIL_OR(fd_step(fd));
  static auto f = real<ssize_t (*)(int, const void*, size_t, off64_t)>("pwrite64");
  return f(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec* iov, int cnt) {
  EMCO_FAIL_OR(fd_step(fd));
  static auto f = real<ssize_t (*)(int, const struct iovec*, int)>("writev");
  return f(fd, iov, cnt);
}

ssize_t pwritev(int fd, const struct iovec* iov, int cnt, off_t off) {
  EMCO_FAIL_OR(fd_step(fd));
  static auto f = real<ssize_t (*)(int, const struct iovec*, int, off_t)>("pwritev");
  return f(fd, iov, cnt, off);
}

int fsync(int fd) {
  EMCO_FAIL_OR(fd_step(fd));
  static auto f = real<int (*)(int)>("fsync");
  return f(fd);
}

int fdatasync(int fd) {
  EMCO_FAIL_OR(fd_step(fd));
  static auto f = real<int (*)(int)>("fdatasync");
  return f(fd);
}

int ftruncate(int fd, off_t len) {
  EMCO_FAIL_OR(fd_step(fd));
  static auto f = real<int (*)(int, off_t)>("ftruncate");
  return f(fd, len);
}

int ftruncate64(int fd, off64_t len) {
  EMCO_FAIL_OR(fd_step(fd));
  static auto f = real<int (*)(int, off64_t)>("ftruncate64");
  return f(fd, len);
}

int __cxa_atexit(void (*fn)(void*), void* arg, void* dso) {
  static auto f = real<int (*)(void (*)(void*), void*, void*)>("__cxa_atexit");
  static const long slow_ms = [] {
    const char* ms = getenv("EMCO_FAULT_SLOW_THREAD_ATEXIT_MS");
    return ms ? atol(ms) : 0L;
  }();
  static const bool check_order = [] {
    const char* c = getenv("EMCO_FAULT_CHECK_EXIT_ORDER");
    return c && !strcmp(c, "1");
  }();
  const bool library = (slow_ms > 0 || check_order) && registered_by_library(fn);
  int r;
  if (library && check_order) {
    auto* h = static_cast<LibraryExitHandler*>(malloc(sizeof(LibraryExitHandler)));
    if (!h) return -1;
    *h = {fn, arg};
    r = f(run_library_exit_handler, h, dso);
  } else {
    r = f(fn, arg, dso);
  }
  if (library && slow_ms > 0 && gettid() != getpid()) usleep(static_cast<useconds_t>(slow_ms) * 1000);
  return r;
}

int rename(const char* from, const char* to) {
  EMCO_FAIL_OR(path_step());
  static auto f = real<int (*)(const char*, const char*)>("rename");
  return f(from, to);
}

int renameat(int dfrom, const char* from, int dto, const char* to) {
  EMCO_FAIL_OR(path_step());
  static auto f = real<int (*)(int, const char*, int, const char*)>("renameat");
  return f(dfrom, from, dto, to);
}

int unlink(const char* path) {
  EMCO_FAIL_OR(path_step(true));
  static auto f = real<int (*)(const char*)>("unlink");
  return f(path);
}

ssize_t send(int fd, const void* buf, size_t n, int flags) {
  EMCO_FAIL_OR(fd_step(fd));
  static auto f = real<ssize_t (*)(int, const void*, size_t, int)>("send");
  return f(fd, buf, n, flags);
}

ssize_t sendto(int fd, const void* buf, size_t n, int flags, const struct sockaddr* to, socklen_t tolen) {
  EMCO_FAIL_OR(fd_step(fd));
  static auto f = real<ssize_t (*)(int, const void*, size_t, int, const struct sockaddr*, socklen_t)>("sendto");
  return f(fd, buf, n, flags, to, tolen);
}

ssize_t sendmsg(int fd, const struct msghdr* msg, int flags) {
  EMCO_FAIL_OR(fd_step(fd));
  static auto f = real<ssize_t (*)(int, const struct msghdr*, int)>("sendmsg");
  return f(fd, msg, flags);
}

}  // extern "C"
