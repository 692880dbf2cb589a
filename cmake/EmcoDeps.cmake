# Every third-party dependency, all from Debian packages
# (scripts/install-deps installs them).
find_package(CLI11 CONFIG REQUIRED)              # CLI11::CLI11 (only cli/ uses it)
find_package(nlohmann_json 3.11 CONFIG REQUIRED) # nlohmann_json::nlohmann_json
find_package(SQLiteCpp CONFIG REQUIRED)          # SQLiteCpp (static; only core/store/sqlite uses it)
find_package(SQLite3 REQUIRED)                   # SQLite::SQLite3 (the C API calls SQLiteCpp does not wrap)
find_package(fmt CONFIG REQUIRED)                # fmt::fmt
find_package(CURL REQUIRED)                      # CURL::libcurl
find_package(OpenSSL REQUIRED)                   # OpenSSL::SSL OpenSSL::Crypto
find_package(ZLIB REQUIRED)
find_package(LibArchive REQUIRED)                # LibArchive::LibArchive
find_package(Catch2 2 CONFIG REQUIRED)           # Catch2 v2
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBGIT2 REQUIRED IMPORTED_TARGET libgit2)      # PkgConfig::LIBGIT2
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)              # PkgConfig::RE2
pkg_check_modules(LIBEVENT REQUIRED IMPORTED_TARGET libevent libevent_openssl libevent_pthreads) # PkgConfig::LIBEVENT
pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)           # PkgConfig::LIBPQ (only core/store/postgresql uses it, as Lazy::pq)
include(Catch)

# The libraries only delivery, GitOps, PostgreSQL workspaces, chart packages,
# the simulator and secrets need, loaded on their first call
# (cmake/EmcoLazy.cmake): emco's modules link Lazy::NAME, never the imported
# target.
include(EmcoLazy)
emco_lazy_library(curl CURL::libcurl)
emco_lazy_library(git2 PkgConfig::LIBGIT2)
emco_lazy_library(pq PkgConfig::LIBPQ)
emco_lazy_library(archive LibArchive::LibArchive)
emco_lazy_library(event PkgConfig::LIBEVENT)
emco_lazy_library(ssl OpenSSL::SSL)
emco_lazy_library(crypto OpenSSL::Crypto)
