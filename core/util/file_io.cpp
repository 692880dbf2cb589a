#include "core/util/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace emco {

int read_whole_file(const std::string& path, std::string& out, std::size_t max_bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
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
    out.resize(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    while (true) {
      if (done == out.size()) {
        if (out.size() >= max_bytes) {
          char probe = 0;
          ssize_t more = ::read(fd, &probe, 1);
          if (more > 0) err = EFBIG;
          else if (more < 0) err = errno;
          break;
        }
        out.resize(max_bytes - out.size() < 65536 ? max_bytes : out.size() + 65536);
      }
      ssize_t n = ::read(fd, out.data() + done, out.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        err = errno;
        break;
      }
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    out.resize(done);
  }
  ::close(fd);
  return err;
}

}  // namespace emco
