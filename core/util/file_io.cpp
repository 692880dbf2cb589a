#include "core/util/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace emco {

int read_whole_file(const std::string& path, std::string& out, std::size_t max_bytes) {
  return read_whole_file_at(AT_FDCWD, path, out, max_bytes);
}

namespace {

// Opens `path` (relative to `dir_fd`) for reading as read_whole_file_at does and checks it is a
// regular file of at most `max_bytes`: 0 with `fd` open and `st` filled, or the errno value
// read_whole_file_at returns (`fd` left open unless -1).
int open_regular_at(int dir_fd, const std::string& path, std::size_t max_bytes, int& fd, struct stat& st) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (a hostile chart may contain one);
  // it changes nothing for regular files.
  fd = ::openat(dir_fd, path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return errno;
  if (::fstat(fd, &st) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return EISDIR;
  if (!S_ISREG(st.st_mode)) return EINVAL;
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) return EFBIG;
  return 0;
}

}  // namespace

int check_whole_file_at(int dir_fd, const std::string& path, std::size_t& size, std::size_t max_bytes) {
  int fd = -1;
  struct stat st {};
  const int err = open_regular_at(dir_fd, path, max_bytes, fd, st);
  if (fd >= 0) ::close(fd);
  if (err == 0) size = static_cast<std::size_t>(st.st_size);
  return err;
}

int read_whole_file_at(int dir_fd, const std::string& path, std::string& out, std::size_t max_bytes) {
  int fd = -1;
  struct stat st {};
  int err = open_regular_at(dir_fd, path, max_bytes, fd, st);
  if (fd < 0) return err;
  if (err == 0) {
    // The size is a hint: a file that grows or shrinks while being read is read to its end.
    // Each read asks for the rest of the expected size plus a small probe buffer, so one
    // readv(2) both reads a file whose size held and sees its end (a short read), and the
    // string's capacity stays the file's size.
    out.resize(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    char probe[4096];
    while (true) {
      iovec parts[2] = {{out.data() + done, out.size() - done}, {probe, sizeof probe}};
      const std::size_t asked = parts[0].iov_len + parts[1].iov_len;
      ssize_t n = ::readv(fd, parts, 2);
      if (n < 0) {
        if (errno == EINTR) continue;
        err = errno;
        break;
      }
      const auto got = static_cast<std::size_t>(n);
      const std::size_t into_out = std::min(got, parts[0].iov_len);
      done += into_out;
      if (got > into_out) {
        const std::size_t extra = got - into_out;
        if (max_bytes - out.size() < extra) {
          err = EFBIG;
          break;
        }
        out.append(probe, extra);
        done += extra;
      }
      if (got < asked) break;  // a short read from a regular file: its end
    }
    out.resize(done);
  }
  ::close(fd);
  return err;
}

namespace {

// What a non-regular file is, for the message.
std::string file_type_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "not a regular file";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  return "not a regular file";
}

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

std::string read_input_file(const std::string& path, const InputFile& how) {
  std::string out;
  const std::string named = how.what + " '" + (how.shown.empty() ? path : how.shown) + "'";
  switch (int err = read_whole_file(path, out, how.max_bytes)) {
    case 0:
      break;
    case ENOENT:
      fail(how.missing, "cannot read " + named + ": " + std::strerror(err), how.missing_hint);
    case ELOOP:
      fail(ErrorKind::invalid, "cannot read " + named + ": too many levels of symbolic links (a symlink loop?)");
    case EISDIR:
    case EINVAL:
    case ENXIO:  // a FIFO without a writer opened O_NONBLOCK for writing; a socket
      fail(ErrorKind::invalid, "cannot read " + named + ": it is " + file_type_of(path) + ", not a regular file",
           "name the file itself");
    case EFBIG:
      fail(ErrorKind::invalid, "cannot read " + named + ": it is larger than the " + mib(how.max_bytes) + " limit",
           how.too_big_hint);
    default:
      fail(ErrorKind::invalid, "cannot read " + named + ": " + std::strerror(err));
  }
  if (out.empty() && !how.allow_empty) fail(ErrorKind::invalid, named + " is empty", how.empty_hint);
  return out;
}

}  // namespace emco
