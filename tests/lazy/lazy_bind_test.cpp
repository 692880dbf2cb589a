// The binder of the lazily loaded libraries (cmake/lazy/lazy_bind.h), driven
// through descriptors laid out as the generated stubs lay them out: a
// library that loads fills the entries called; a missing library, or a missing
// function, ends the process with emco's error and a hint. The failing
// cases run in a child process, since the binder ends the process.

#include <catch2/catch.hpp>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "lazy_bind.h"

namespace {

// A descriptor over `functions` of `soname`, as stubs.S.in lays one out.
struct Library {
  std::string names;
  std::vector<int32_t> offsets;
  std::vector<void*> table;
  emco_lazy_library desc{};

  Library(const char* soname, const std::vector<std::string>& functions) : table(functions.size(), nullptr) {
    for (const auto& f : functions) {
      offsets.push_back(static_cast<int32_t>(names.size()));
      names += f;
      names += '\0';
    }
    desc = {soname, names.data(), offsets.data(), table.data(), table.size(), nullptr};
  }
};

struct Exit {
  int code = -1;
  std::string err;
};

// Binds `slot` of `lib` in a child process; its exit code and stderr.
Exit bind_in_child(Library& lib, size_t slot) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    emco_lazy_bind(&lib.desc, &lib.table[slot]);
    ::_exit(0);
  }
  ::close(fds[1]);
  Exit e;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) e.err.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  e.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return e;
}

TEST_CASE("the first call loads the library and binds the entry called, others on their own first call", "[lazy]") {
  Library z("libz.so.1", {"zlibVersion", "crc32"});
  emco_lazy_bind(&z.desc, &z.table[1]);
  REQUIRE(z.desc.handle != nullptr);
  REQUIRE(z.table[1] != nullptr);
  CHECK(z.table[0] == nullptr);  // not called yet: no dlsym() for it
  CHECK(z.table[1] == ::dlsym(z.desc.handle, "crc32"));
  void* handle = z.desc.handle;
  emco_lazy_bind(&z.desc, &z.table[0]);
  CHECK(z.desc.handle == handle);  // loaded once
  REQUIRE(z.table[0] != nullptr);
  auto version = reinterpret_cast<const char* (*)()>(z.table[0]);
  CHECK(std::strlen(version()) > 0);
  // The functions the library itself answers for those names.
  CHECK(z.table[0] == ::dlsym(z.desc.handle, "zlibVersion"));
  // Binding again (a thread that raced the first) leaves the table as it is.
  emco_lazy_bind(&z.desc, &z.table[0]);
  CHECK(z.table[0] == ::dlsym(z.desc.handle, "zlibVersion"));
}

TEST_CASE("a library that cannot be loaded ends emco with an error and a hint", "[lazy]") {
  Library missing("libemco-no-such-library.so.7", {"f"});
  Exit e = bind_in_child(missing, 0);
  CHECK(e.code == 1);
  CHECK(e.err.find("emco: error: cannot load libemco-no-such-library.so.7: ") == 0);
  CHECK(e.err.find("\nhint: emco loads libemco-no-such-library.so.7 when a command first needs it; install") !=
        std::string::npos);
}

TEST_CASE("a function the installed library lacks ends emco naming the function", "[lazy]") {
  Library z("libz.so.1", {"zlibVersion", "emco_no_such_function"});
  Exit e = bind_in_child(z, 1);
  CHECK(e.code == 1);
  CHECK(e.err.find("emco: error: cannot use libz.so.1: it has no function emco_no_such_function") == 0);
  // The other functions bind all the same.
  Exit ok = bind_in_child(z, 0);
  CHECK(ok.code == 0);
  CHECK(ok.err.empty());
}

}  // namespace
