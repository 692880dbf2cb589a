#pragma once
// OpenSSL's process-wide initialisation, for code that starts threads.

namespace emco {

// Initialises OpenSSL once per process, on the calling thread. Call it before
// starting a thread that uses OpenSSL (directly or through a library) and
// may still run when the process exits: OpenSSL registers its exit-time
// cleanup at its first initialisation and exit handlers run in reverse order
// of registration, so the thread's join, registered after this, runs before
// OpenSSL is torn down. Failure is OpenSSL's to report at the first use.
void initialise_openssl();

}  // namespace emco
