#include "plugins/targets/gitops/git_stream.hpp"

#include <git2.h>
#include <git2/sys/stream.h>

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace emco::gitops {

using namespace std::chrono;

namespace {

thread_local steady_clock::time_point t_deadline = steady_clock::time_point::max();

// Shuts a socket down when its deadline passes, for I/O that does not go
// through the stream's own read and write: libssh2 reads and writes the
// descriptor itself (and waits without limit when the server is silent).
class Watchdog {
public:
  static Watchdog& instance() {
    static Watchdog* w = new Watchdog();  // never destroyed: its thread runs for the process
    return *w;
  }
  void watch(int fd, steady_clock::time_point deadline) {
    std::lock_guard lock(m_mutex);
    m_fds[fd] = deadline;
    m_changed.notify_one();
  }
  void forget(int fd) {
    std::lock_guard lock(m_mutex);
    m_fds.erase(fd);
  }

private:
  Watchdog() {
    std::thread([this] { run(); }).detach();
  }
  void run() {
    std::unique_lock lock(m_mutex);
    for (;;) {
      auto next = steady_clock::time_point::max();
      const auto now = steady_clock::now();
      for (auto it = m_fds.begin(); it != m_fds.end();) {
        if (it->second <= now) {
          ::shutdown(it->first, SHUT_RDWR);  // what waits on it returns at once
          it = m_fds.erase(it);
        } else {
          next = std::min(next, it->second);
          ++it;
        }
      }
      if (next == steady_clock::time_point::max()) m_changed.wait(lock);
      else m_changed.wait_until(lock, next);
    }
  }
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::map<int, steady_clock::time_point> m_fds;
};

// The first members are laid out as libgit2 1.5's git_socket_stream (parent,
// host, port, socket): its ssh transport takes the descriptor from there.
struct BoundedStream {
  git_stream parent;
  char* host;
  char* port;
  int s;
  steady_clock::time_point deadline;  // the creating thread's network deadline
  size_t answer_bytes;                 // read since emco last wrote
  size_t max_answer_bytes;
};

int fail_net(const std::string& message) {
  git_error_set_str(GIT_ERROR_NET, message.c_str());
  return -1;
}

BoundedStream* self(git_stream* s) { return reinterpret_cast<BoundedStream*>(s); }

// How long the next wait may last: k_idle, and never past the deadline.
int wait_ms(const BoundedStream& st) {
  const auto now = steady_clock::now();
  auto until = now + k_idle;
  if (st.deadline < until) until = st.deadline;
  return until <= now ? 0 : static_cast<int>(duration_cast<milliseconds>(until - now).count()) + 1;
}

std::string where(const BoundedStream& st) { return std::string(st.host) + ":" + st.port; }

// Waits for `events` on the socket; -1 (with libgit2's error set) when it
// did not come in time.
int await(BoundedStream& st, short events, const char* doing) {
  for (;;) {
    const bool deadline_first = st.deadline < steady_clock::now() + k_idle;
    const int ms = wait_ms(st);
    pollfd p{st.s, events, 0};
    const int n = ms > 0 ? ::poll(&p, 1, ms) : 0;
    if (n > 0) return 0;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail_net(std::string(doing) + " " + where(st) + ": " + std::strerror(errno));
    return fail_net("the git remote " + where(st) + (deadline_first ? " did not finish before the deadline while "
                                                                    : " was silent for " + std::to_string(k_idle.count()) + " s while ") +
                    doing);
  }
}

// The bound on one answer: EMCO_GIT_MAX_ANSWER_MIB when set, else the
// default; 0 when the variable is not a positive number of MiB (the
// connection then fails saying so).
size_t max_answer_bytes() {
  const char* env = std::getenv("EMCO_GIT_MAX_ANSWER_MIB");
  if (!env || !*env) return static_cast<size_t>(k_default_max_answer_mib) << 20;
  char* end = nullptr;
  errno = 0;
  const long mib = std::strtol(env, &end, 10);
  if (errno != 0 || *end != '\0' || mib <= 0 || mib >= (1L << 30)) return 0;
  return static_cast<size_t>(mib) << 20;
}

int bounded_connect(git_stream* stream) {
  BoundedStream& st = *self(stream);
  if (st.max_answer_bytes == 0)
    return fail_net(std::string("EMCO_GIT_MAX_ANSWER_MIB='") + std::getenv("EMCO_GIT_MAX_ANSWER_MIB") +
                    "' is not a positive number of MiB");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(st.host, st.port, &hints, &found); rc != 0)
    return fail_net(std::string("cannot resolve git remote host '") + st.host + "': " + gai_strerror(rc));
  std::string last = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    st.s = fd;
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      if (await(st, POLLOUT, "connecting to") == 0) {
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        rc = err == 0 ? 0 : -1;
        errno = err;
      } else {
        last = git_error_last() && git_error_last()->message ? git_error_last()->message : "timed out";
        ::close(fd);
        st.s = -1;
        continue;
      }
    }
    if (rc == 0) {
      // Blocking from now on (libssh2 expects it); every wait of ours polls first.
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      freeaddrinfo(found);
      if (st.deadline != steady_clock::time_point::max()) Watchdog::instance().watch(fd, st.deadline);
      return 0;
    }
    last = std::strerror(errno);
    ::close(fd);
    st.s = -1;
  }
  freeaddrinfo(found);
  return fail_net("cannot connect to git remote " + where(st) + ": " + last);
}

ssize_t bounded_read(git_stream* stream, void* data, size_t len) {
  BoundedStream& st = *self(stream);
  if (await(st, POLLIN, "waiting for its answer") < 0) return -1;
  for (;;) {
    const ssize_t n = ::recv(st.s, data, len, 0);
    if (n == 0 && steady_clock::now() >= st.deadline)  // the watchdog shut it
      return fail_net("the git remote " + where(st) + " did not finish before the deadline");
    if (n > 0) {
      st.answer_bytes += static_cast<size_t>(n);
      if (st.answer_bytes > st.max_answer_bytes)
        return fail_net("the git remote " + where(st) + " sent more than " + std::to_string(st.max_answer_bytes >> 20) +
                        " MiB in one answer; emco stops reading there (EMCO_GIT_MAX_ANSWER_MIB raises the bound)");
    }
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    return fail_net("reading from git remote " + where(st) + ": " + std::strerror(errno));
  }
}

ssize_t bounded_write(git_stream* stream, const char* data, size_t len, int) {
  BoundedStream& st = *self(stream);
  st.answer_bytes = 0;
  size_t off = 0;
  while (off < len) {
    if (await(st, POLLOUT, "sending to it") < 0) return -1;
    const ssize_t n = ::send(st.s, data + off, len - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail_net("writing to git remote " + where(st) + ": " + std::strerror(errno));
    off += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(len);
}

int bounded_close(git_stream* stream) {
  BoundedStream& st = *self(stream);
  if (st.s >= 0) {
    Watchdog::instance().forget(st.s);
    ::close(st.s);
  }
  st.s = -1;
  return 0;
}

void bounded_free(git_stream* stream) {
  BoundedStream* st = self(stream);
  bounded_close(stream);
  std::free(st->host);
  std::free(st->port);
  delete st;
}

int bounded_new(git_stream** out, const char* host, const char* port) {
  auto* st = new BoundedStream{};
  st->parent.version = GIT_STREAM_VERSION;
  st->parent.connect = bounded_connect;
  st->parent.read = bounded_read;
  st->parent.write = bounded_write;
  st->parent.close = bounded_close;
  st->parent.free = bounded_free;
  st->host = ::strdup(host);
  st->port = ::strdup(port);
  st->s = -1;
  st->deadline = t_deadline;
  st->max_answer_bytes = max_answer_bytes();
  *out = &st->parent;
  return 0;
}

}  // namespace

void install_bounded_stream() {
  static git_stream_registration registration = {GIT_STREAM_VERSION, bounded_new, nullptr};
  git_stream_register(GIT_STREAM_STANDARD, &registration);
}

bool network_deadline_passed() { return steady_clock::now() >= t_deadline; }

NetworkDeadline::NetworkDeadline(steady_clock::time_point deadline) : m_previous(t_deadline) {
  if (deadline < t_deadline) t_deadline = deadline;
}

NetworkDeadline::~NetworkDeadline() { t_deadline = m_previous; }

}  // namespace emco::gitops
