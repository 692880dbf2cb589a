# Build settings shared by every emco target.
#
# emco_warnings: INTERFACE target with our warning set; only our code links it,
#   so third-party headers (all under /usr/include, i.e. system) stay quiet.
# EMCO_SANITIZE=ON builds everything with ASan+UBSan (CI runs the suite so).
# EMCO_WERROR=OFF lets packagers build with a newer compiler.

option(EMCO_WERROR "Treat warnings as errors in emco's own code" ON)
option(EMCO_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)

add_library(emco_warnings INTERFACE)
# Designated initialisers leave fields at their defaults on purpose. Beyond
# -Wall -Wextra: a name that hides another (-Wshadow), a polymorphic class
# deleted through a base without a virtual destructor, and an override that
# hides the base's other overloads.
target_compile_options(emco_warnings INTERFACE -Wall -Wextra -Wno-missing-field-initializers
  -Wshadow $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Woverloaded-virtual>)
if(EMCO_WERROR)
  target_compile_options(emco_warnings INTERFACE -Werror)
endif()

# Disk: every test and bench program links the same static libraries, so
# full debug info in each executable came to ~17 GB across the release and
# sanitizer builds, and CI ran out of disk. -gz compresses the debug
# sections (gdb, perf, addr2line and the sanitizers read them as before),
# and thin archives list their objects instead of copying them. Split DWARF
# would save more, but addr2line and the sanitizers' symbolizer then lose
# file:line. The sanitizer build keeps line tables only (-g1): its stack
# traces need no more, and at -O0 nothing is inlined.
option(EMCO_COMPRESS_DEBUG_INFO "Compress debug sections (-gz)" ON)
if(EMCO_COMPRESS_DEBUG_INFO)
  add_compile_options(-gz)
  add_link_options(-gz)
endif()
foreach(lang C CXX)
  set(CMAKE_${lang}_ARCHIVE_CREATE "<CMAKE_AR> qcT <TARGET> <LINK_FLAGS> <OBJECTS>")
  set(CMAKE_${lang}_ARCHIVE_APPEND "<CMAKE_AR> qT <TARGET> <LINK_FLAGS> <OBJECTS>")
endforeach()

if(EMCO_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g1)
  # Not position-independent: UBSan's per-check records would otherwise
  # need millions of load-time relocations, a third of each executable.
  add_link_options(-fsanitize=address,undefined -no-pie)
endif()

# emco_module(NAME DIR [DEPS ...]) — a static library from DIR/*.cpp with
# DIR's parent chain as include root: code includes "core/util/error.hpp".
function(emco_module name)
  cmake_parse_arguments(M "" "" "DEPS;PRIVATE_DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(NOT srcs)
    # A header-only module (or one whose sources are still being written).
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} INTERFACE ${M_DEPS})
    return()
  endif()
  add_library(${name} STATIC ${srcs})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${M_DEPS} PRIVATE emco_warnings ${M_PRIVATE_DEPS})
endfunction()

# emco_test_suite(NAME [BOTH_STORES] [DEPS ...]) — one Catch2 executable
# from the calling directory's *.cpp, registered with CTest test by test.
# BOTH_STORES: the suite keeps workspaces (tests/test_store.hpp), so it is
# registered twice: "NAME:..." labelled store-sqlite, and "pg:NAME:..."
# labelled store-postgresql, run with EMCO_TEST_STORE naming the throwaway
# server of the fixture "pg" (tests/CMakeLists.txt) and skipped (exit 77,
# not counted as passed) when that server is not there. Cases tagged
# [postgresql] run only in the second, [sqlite] only in the first.
function(emco_test_suite name)
  cmake_parse_arguments(T "BOTH_STORES" "" "DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  add_executable(${name} ${srcs})
  target_link_libraries(${name} PRIVATE ${T_DEPS} Catch2::Catch2WithMain emco_warnings)
  target_compile_definitions(${name} PRIVATE
    EMCO_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    EMCO_BINARY_DIR="${PROJECT_BINARY_DIR}")
  # -w NoTests: a test filter that matches nothing fails instead of passing
  # (ctest splits discovered names at ';', which would leave such a filter).
  if(NOT T_BOTH_STORES)
    catch_discover_tests(${name} TEST_PREFIX "${name}:" EXTRA_ARGS -w NoTests PROPERTIES TIMEOUT 600)
    return()
  endif()
  # Cases tagged [postgresql] need the server, cases tagged [sqlite] read
  # the SQLite file itself: each registration leaves the other's out.
  catch_discover_tests(${name} TEST_PREFIX "${name}:" TEST_SPEC "~[postgresql]" EXTRA_ARGS -w NoTests
    PROPERTIES TIMEOUT 600 LABELS store-sqlite)
  catch_discover_tests(${name} TEST_PREFIX "pg:${name}:" TEST_SPEC "~[sqlite]" EXTRA_ARGS -w NoTests
    TEST_LIST ${name}_PG_TESTS PROPERTIES TIMEOUT 600 LABELS store-postgresql SKIP_RETURN_CODE 77
    FIXTURES_REQUIRED pg ENVIRONMENT "EMCO_TEST_STORE=${EMCO_TEST_PG_URL}")
endfunction()
