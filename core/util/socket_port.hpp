#pragma once
// The local port a socket is bound to.

namespace emco {

// The port of the local address of socket `fd` (IPv4 or IPv6, as bound or
// picked by the kernel for port 0); 0 when it has none or is no socket.
int bound_port(int fd);

}  // namespace emco
