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
pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)           # PkgConfig::LIBPQ (only core/store/postgresql uses it)
include(Catch)
