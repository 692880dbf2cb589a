# Shared libraries loaded on first use instead of at start-up.
#
# emco links libcurl, libgit2, libpq, libarchive and libevent, which pull in
# some forty more libraries (Kerberos, LDAP, GnuTLS, ICU, mbedTLS, ...), and
# OpenSSL. The dynamic loader maps and relocates every one of them, and runs
# their constructors, in every emco process, although `emco --version`, `emco
# get` and `emco dig status` call none of them: that was most of emco's
# start-up time (ARCHITECTURE.md, "What loads when").
#
# emco_lazy_library(NAME REAL) makes the target Lazy::NAME to link instead of
# the imported target REAL. It has REAL's headers, but in place of REAL's
# shared libraries an object of stubs generated from the libraries' exported
# functions (cmake/lazy/stubs.S.in): each stub jumps through its entry of a
# table, and while the entry is empty, to the binder (cmake/lazy/lazy_bind.c).
# The first call of any of them dlopen()s the library by its SONAME, fills
# the whole table with dlsym() and continues into the real function; later
# calls cost a load, a test and an indirect jump, about what a PLT call
# costs. A library that is missing, or lacks the function called, stops emco
# with "emco: error: cannot load ..." and a hint (exit code 1). Only
# functions are stubbed: code that used a library's exported variable would
# fail to link, never misbehave at run time.
#
# EMCO_LAZY_LIBS=OFF (and any processor but x86-64, for which the stubs are
# written) links the libraries as usual.

option(EMCO_LAZY_LIBS "Load libcurl, libgit2, libpq, libarchive, libevent and OpenSSL on first use" ON)

set(EMCO_LAZY_SUPPORTED OFF)
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(EMCO_LAZY_SUPPORTED ON)
endif()
if(EMCO_LAZY_LIBS AND NOT EMCO_LAZY_SUPPORTED)
  message(STATUS "EMCO_LAZY_LIBS: no stubs for ${CMAKE_SYSTEM_PROCESSOR}; linking every library at start-up")
endif()

set(EMCO_LAZY_DIR ${CMAKE_CURRENT_LIST_DIR}/lazy)

if(EMCO_LAZY_LIBS AND EMCO_LAZY_SUPPORTED)
  enable_language(ASM)  # the stubs: .S files, through the C compiler
  find_program(EMCO_NM NAMES ${CMAKE_NM} nm REQUIRED)
  find_program(EMCO_READELF NAMES ${CMAKE_READELF} readelf REQUIRED)
  add_library(emco_lazy_bind STATIC ${EMCO_LAZY_DIR}/lazy_bind.c)
  target_link_libraries(emco_lazy_bind PRIVATE emco_warnings ${CMAKE_DL_LIBS} Threads::Threads)
endif()

# The shared library files an imported target links (full paths).
function(_emco_lazy_files real out)
  get_target_property(type ${real} TYPE)
  set(candidates)
  if(type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(candidates ${real} INTERFACE_LINK_LIBRARIES)
  else()
    foreach(prop IMPORTED_LOCATION_RELEASE IMPORTED_LOCATION_RELWITHDEBINFO IMPORTED_LOCATION_NOCONFIG IMPORTED_LOCATION)
      get_target_property(loc ${real} ${prop})
      if(loc)
        set(candidates ${loc})
        break()
      endif()
    endforeach()
  endif()
  set(files)
  foreach(c IN LISTS candidates)
    if(c MATCHES "\\.so(\\.[0-9]+)*$" AND EXISTS "${c}")
      list(APPEND files ${c})
    endif()
  endforeach()
  if(NOT files)
    message(FATAL_ERROR "emco_lazy_library: no shared library found behind ${real} (${candidates})")
  endif()
  set(${out} ${files} PARENT_SCOPE)
endfunction()

function(emco_lazy_library name real)
  if(NOT (EMCO_LAZY_LIBS AND EMCO_LAZY_SUPPORTED))
    add_library(emco_lazy_${name} INTERFACE)
    target_link_libraries(emco_lazy_${name} INTERFACE ${real})
    add_library(Lazy::${name} ALIAS emco_lazy_${name})
    return()
  endif()

  _emco_lazy_files(${real} files)
  set(sources)
  # _emco_lazy_seen_<function>: a function two of the files export is
  # stubbed for the first only.
  set(index 0)
  foreach(file IN LISTS files)
    execute_process(COMMAND ${EMCO_READELF} -d ${file} OUTPUT_VARIABLE dyn COMMAND_ERROR_IS_FATAL ANY)
    if(NOT dyn MATCHES "\\(SONAME\\)[^\n]*\\[([^]\n]+)\\]")
      message(FATAL_ERROR "emco_lazy_library: ${file} has no SONAME")
    endif()
    set(soname ${CMAKE_MATCH_1})
    execute_process(COMMAND ${EMCO_NM} -D --defined-only ${file} OUTPUT_VARIABLE syms COMMAND_ERROR_IS_FATAL ANY)
    string(REPLACE "\n" ";" lines "${syms}")
    set(functions)
    foreach(line IN LISTS lines)
      # "0000000000025190 T curl_easy_cleanup@@CURL_OPENSSL_4": functions
      # (T), weak ones (W) and GNU indirect functions (i).
      if(line MATCHES "^[0-9a-fA-F]+ [TWi] ([A-Za-z_][A-Za-z0-9_]*)(@.*)?$")
        set(sym ${CMAKE_MATCH_1})
        if(NOT DEFINED _emco_lazy_seen_${sym})
          list(APPEND functions ${sym})
          set(_emco_lazy_seen_${sym} 1)
        endif()
      endif()
    endforeach()
    list(REMOVE_DUPLICATES functions)
    list(SORT functions)
    list(LENGTH functions count)
    if(count EQUAL 0)
      message(FATAL_ERROR "emco_lazy_library: ${file} exports no function")
    endif()

    # Per library: the table (one entry per function, zero until bound),
    # the names and their offsets, the descriptor lazy_bind.c reads, and
    # the stubs.
    set(p "emco_lazy_${name}_${index}")
    set(stubs "")
    set(names "")
    set(offsets "")
    set(i 0)
    foreach(sym IN LISTS functions)
      math(EXPR off "${i} * 8")
      string(APPEND stubs "  .globl ${sym}\n  .type ${sym}, @function\n${sym}:\n  .cfi_startproc\n"
        "  movq ${p}_table+${off}(%rip), %r11\n  testq %r11, %r11\n  jz 1f\n  jmp *%r11\n"
        "1:\n  leaq ${p}_table+${off}(%rip), %r11\n  jmp ${p}_bind\n  .cfi_endproc\n  .size ${sym}, .-${sym}\n")
      string(APPEND names "${p}_name_${i}: .asciz \"${sym}\"\n")
      string(APPEND offsets "  .long ${p}_name_${i} - ${p}_names\n")
      math(EXPR i "${i} + 1")
    endforeach()
    set(out ${CMAKE_BINARY_DIR}/lazy/${p}.S)
    # @ONLY placeholders: the template is assembly, full of other characters.
    set(LAZY_PREFIX ${p})
    set(LAZY_SONAME ${soname})
    set(LAZY_COUNT ${count})
    set(LAZY_STUBS "${stubs}")
    set(LAZY_NAMES "${names}")
    set(LAZY_OFFSETS "${offsets}")
    configure_file(${EMCO_LAZY_DIR}/stubs.S.in ${out} @ONLY)
    list(APPEND sources ${out})
    math(EXPR index "${index} + 1")
  endforeach()

  add_library(emco_lazy_${name} STATIC ${sources})
  target_link_libraries(emco_lazy_${name} PRIVATE emco_lazy_bind)
  # The real target's headers and definitions, not its libraries.
  target_include_directories(emco_lazy_${name} SYSTEM INTERFACE $<TARGET_PROPERTY:${real},INTERFACE_INCLUDE_DIRECTORIES>)
  target_compile_definitions(emco_lazy_${name} INTERFACE $<TARGET_PROPERTY:${real},INTERFACE_COMPILE_DEFINITIONS>)
  target_compile_options(emco_lazy_${name} INTERFACE $<TARGET_PROPERTY:${real},INTERFACE_COMPILE_OPTIONS>)
  add_library(Lazy::${name} ALIAS emco_lazy_${name})
endfunction()
