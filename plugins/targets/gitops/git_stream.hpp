#pragma once
// Internal to plugins/targets/gitops: the TCP stream libgit2 uses for every
// network remote (git://, http://, https:// under its TLS, ssh:// under
// libssh2), bounded in time. libgit2 1.5 has no timeout of its own: a remote
// that accepts and never answers would hold a delivery for ever.
//
// Every connect, read and write waits at most k_idle (a remote silent that
// long is treated as gone) and never past the calling thread's network
// deadline (NetworkDeadline), so a remote that trickles one byte a second
// ends at the deadline too. Either way libgit2 gets a network error whose
// message says what happened, which GitDelivery reports as unreachable
// (transient: the engine retries until its own deadline).
//
// One answer (what the remote sends between two of emco's writes on a
// connection) is read up to k_default_max_answer_mib MiB, or
// EMCO_GIT_MAX_ANSWER_MIB: libgit2 keeps a ref advertisement in memory (about
// twice its size), so a remote that never ends one would otherwise grow emco
// without bound until the deadline. A pack arrives as one answer too: a
// repository whose fetch is larger needs the variable raised. ssh:// is not
// bounded this way: libssh2 reads the socket itself.

#include <chrono>

namespace emco::gitops {

inline constexpr std::chrono::seconds k_idle{30};
inline constexpr long k_default_max_answer_mib = 256;

// Registers the stream with libgit2 (once; ensure_libgit2 calls it).
void install_bounded_stream();

// While it lives, network I/O of libgit2 on this thread ends by `deadline`.
// Nested scopes keep the earlier deadline.
// Whether this thread's network deadline has passed.
bool network_deadline_passed();

class NetworkDeadline {
public:
  explicit NetworkDeadline(std::chrono::steady_clock::time_point deadline);
  ~NetworkDeadline();
  NetworkDeadline(const NetworkDeadline&) = delete;
  NetworkDeadline& operator=(const NetworkDeadline&) = delete;

private:
  std::chrono::steady_clock::time_point m_previous;
};

}  // namespace emco::gitops
