#include "core/util/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace emco {

int read_whole_file(const std::string& path, std::string& out, std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (a hostile chart may contain one);
  // it changes nothing for regular files.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return errno;
  struct stat st {};
  int err = 0;
  if (::fstat(fd, &st) != 0) {
    err = errno;
  } else if (S_ISDIR(st.st_mode)) {
    err = EISDIR;
  } else if (!S_ISREG(st.st_mode)) {
    err = EINVAL;
  } else if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    err = EFBIG;
  } else {
    // The size is a hint: a file that grows or shrinks while being read is read to its end.
    // Reading stops at the size first and probes with a small buffer, so the string's
    // capacity is the file's size in the usual case.
    out.resize(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    char probe[4096];
    while (true) {
      bool probing = done == out.size();
      char* dst = probing ? probe : out.data() + done;
      std::size_t room = probing ? sizeof probe : out.size() - done;
      ssize_t n = ::read(fd, dst, room);
      if (n < 0) {
        if (errno == EINTR) continue;
        err = errno;
        break;
      }
      if (n == 0) break;
      if (probing) {
        if (max_bytes - out.size() < static_cast<std::size_t>(n)) {
          err = EFBIG;
          break;
        }
        out.append(probe, static_cast<std::size_t>(n));
      }
      done += static_cast<std::size_t>(n);
    }
    out.resize(done);
  }
  ::close(fd);
  return err;
}

}  // namespace emco
