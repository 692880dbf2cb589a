# Every third-party dependency, all from Debian packages
# (scripts/install-deps installs them).
find_package(CLI11 CONFIG REQUIRED)              # CLI11::CLI11 (only cli/ uses it)
find_package(nlohmann_json 3.11 CONFIG REQUIRED) # nlohmann_json::nlohmann_json
find_package(SQLiteCpp CONFIG REQUIRED)          # SQLiteCpp (static; only core/store/sqlite uses it)
find_package(SQLite3 REQUIRED)                   # SQLite::SQLite3 (the C API calls SQLiteCpp does not wrap)
find_package(fmt CONFIG REQUIRED)                # fmt's headers (Emco::fmt below)
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
pkg_check_modules(NETTLE REQUIRED IMPORTED_TARGET nettle)         # PkgConfig::NETTLE (SHA-256: core/util/sha256.cpp)
include(Catch)
find_library(CRYPT_LIBRARY NAMES crypt REQUIRED)
add_library(Crypt::Crypt UNKNOWN IMPORTED)       # Crypt::Crypt (libxcrypt: htpasswd's bcrypt)
set_target_properties(Crypt::Crypt PROPERTIES IMPORTED_LOCATION ${CRYPT_LIBRARY})

# SQLite, RE2, zlib, libcrypt and Nettle (SHA-256) serve most commands, so
# they cannot wait for first use (below); linked from the static archives
# Debian ships, they cost the dynamic loader nothing at start-up.
# EMCO_STATIC_DEPS=OFF, or an archive that is not installed, links the shared
# library.
option(EMCO_STATIC_DEPS "Link SQLite, RE2, zlib, libcrypt and Nettle from their static archives where installed" ON)
# emco_link_static(TARGET ARCHIVE [DEPS...]): TARGET (an imported target)
# links libARCHIVE.a and DEPS, what the archive needs, instead.
function(emco_link_static target archive)
  if(NOT EMCO_STATIC_DEPS)
    return()
  endif()
  find_library(EMCO_STATIC_${archive} NAMES lib${archive}.a)
  if(NOT EMCO_STATIC_${archive})
    message(STATUS "EMCO_STATIC_DEPS: no lib${archive}.a; linking the shared library")
    return()
  endif()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")  # pkg-config's targets list the library files
    set_property(TARGET ${target} PROPERTY INTERFACE_LINK_LIBRARIES ${EMCO_STATIC_${archive}} ${ARGN})
  else()
    foreach(suffix "" _RELEASE _RELWITHDEBINFO _DEBUG _MINSIZEREL _NOCONFIG)
      set_property(TARGET ${target} PROPERTY IMPORTED_LOCATION${suffix} ${EMCO_STATIC_${archive}})
    endforeach()
    set_property(TARGET ${target} APPEND PROPERTY INTERFACE_LINK_LIBRARIES ${ARGN})
  endif()
endfunction()
emco_link_static(SQLite::SQLite3 sqlite3 m Threads::Threads ${CMAKE_DL_LIBS})
emco_link_static(PkgConfig::RE2 re2 Threads::Threads)
emco_link_static(ZLIB::ZLIB z)
emco_link_static(Crypt::Crypt crypt)
emco_link_static(PkgConfig::NETTLE nettle)

# fmt's compiled part built into emco (cmake/fmt/fmt.cpp) rather than
# libfmt.so, which Debian ships alone and which loads libstdc++.so: emco
# links libstdc++ statically (cli/CMakeLists.txt). Its users compile as
# libfmt's did (FMT_SHARED: its API has default visibility).
add_library(emco_fmt STATIC ${CMAKE_CURRENT_LIST_DIR}/fmt/fmt.cpp)
target_include_directories(emco_fmt SYSTEM PUBLIC $<TARGET_PROPERTY:fmt::fmt,INTERFACE_INCLUDE_DIRECTORIES>)
target_compile_definitions(emco_fmt PUBLIC $<TARGET_PROPERTY:fmt::fmt,INTERFACE_COMPILE_DEFINITIONS>)
add_library(Emco::fmt ALIAS emco_fmt)

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
