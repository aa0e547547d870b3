# The emulated tests of a cross build (cmake/toolchains, presets aarch64 and armhf): the
# runtime and the e2e programs built for the target run under qemu-user, named on every run
# (no binfmt_misc), and the host build's `memtrack report` reads and symbolizes their result
# files. Included by the top-level CMakeLists.txt before tests/e2e and tests/unwind, which
# register their cases through memtrack_emulated_case and MEMTRACK_EMULATED_UNWIND_VARIANTS.
if(NOT MEMTRACK_EMULATOR OR NOT MEMTRACK_TARGET_ROOT)
  message(FATAL_ERROR "A runtime-only build needs MEMTRACK_EMULATOR and MEMTRACK_TARGET_ROOT "
                      "(set by the toolchain files in cmake/toolchains)")
endif()
find_package(Threads REQUIRED)

# A single argument: run_e2e.py and run_unwind_check.py split it.
set(MEMTRACK_EMULATOR_COMMAND "${MEMTRACK_EMULATOR} -L ${MEMTRACK_TARGET_ROOT}")
set(MEMTRACK_HOST_MEMTRACK "${PROJECT_SOURCE_DIR}/build/release/cli/memtrack" CACHE FILEPATH
    "The host's memtrack, whose `memtrack report` reads the emulated programs' result files")

# 32-bit ARM unwinds with EHABI tables (.ARM.exidx), which gcc writes for C only with
# -funwind-tables (C++ has them for exceptions): without them libgcc's unwinder stops at the
# first C frame. Debian's armhf libraries have them.
if(CMAKE_SYSTEM_PROCESSOR STREQUAL "arm")
  add_compile_options(-funwind-tables)
endif()

# The unwinder cross-check's builds (tests/unwind): every e2e program as the e2e build makes
# it (-O2, no frame pointers) and at -O0 with frame pointers.
# On 32-bit ARM the fast unwinder follows EHABI rules (runtime/unwind/fast_unwind_arm.cpp)
# and is checked against libgcc's EHABI unwinder the same way.
set(MEMTRACK_EMULATED_UNWIND_VARIANTS O0_fp O2_nofp)
# untracked makes 600,000 allocations of one stack shape (a test of full tables): two minutes
# of libgcc unwinding under qemu that check nothing the other programs do not.
set(MEMTRACK_EMULATED_UNWIND_SKIP untracked)

# e2e cases that do not run emulated, and why:
# - stress_fork_threads: its children exec /bin/true, and an exec from inside qemu-user runs
#   the host's program natively, whose loader cannot preload the target's libmemtrack.so.
#   Forking (fork.c) and threads (threads.c, fd_threads.c, exit_thread.c) do run.
# - lsan_interface: its __lsan_do_leak_check writes the process's one report while it still
#   runs, so that file holds no exit status; under memtrack run the CLI takes the status from
#   waitpid, which this harness (qemu started directly, the files read by memtrack report)
#   does not have. Its leaks, roots and ignored blocks are checked on the host.
set(MEMTRACK_EMULATED_SKIP stress_fork_threads lsan_interface)
# - On 32-bit ARM, the cases whose expectations are sizes of 64-bit objects or address spaces:
#   new_delete's 16-byte class, nothrow_new's 2^62-byte request, unwind_through_libstdcxx's
#   32-byte std::string, errno's allocation that must fail (it fits in 32-bit qemu's 4 GiB),
#   big_reservation's 64 GiB reservation.
# - On 32-bit ARM, libc_internal: the stacks of the blocks libc's strdup and realpath
#   allocate stop inside libc (its frames there unwind no further), so the rule for blocks the
#   C runtime keeps for itself takes them for libc's own and leaves them out of the leaks.
if(CMAKE_SYSTEM_PROCESSOR STREQUAL "arm")
  list(APPEND MEMTRACK_EMULATED_SKIP new_delete nothrow_new unwind_through_libstdcxx errno
       big_reservation libc_internal)
endif()

# Reuse: run_e2e.py --cli HOST_MEMTRACK --emulator "$MEMTRACK_EMULATOR_COMMAND" runs any e2e
# program built for the target; --runtime names its libmemtrack.so, or is `linked` for a
# program that carries the runtime itself (nothing is preloaded then).

# Registers emulated.<arch>.<name> for an e2e case (tests/e2e/CMakeLists.txt): `run` is its
# run_e2e.py command; a case the CLI skips is skipped here too (the results go through the
# host's `memtrack report`).
function(memtrack_emulated_case name source run)
  file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/${source} cli_skip REGEX "^// CLI: skip ")
  if(cli_skip)
    return()
  endif()
  set(test emulated.${CMAKE_SYSTEM_PROCESSOR}.${name})
  add_test(NAME ${test}
    COMMAND ${run} --cli ${MEMTRACK_HOST_MEMTRACK} --emulator ${MEMTRACK_EMULATOR_COMMAND})
  set_tests_properties(${test} PROPERTIES TIMEOUT 300 LABELS emulated)
endfunction()

# The unwinder's cost per frame against libgcc's under emulation (a program to run by hand,
# not a test: docs/performance.md, "Other architectures").
add_executable(memtrack_emulated_unwind_bench ${PROJECT_SOURCE_DIR}/bench/emulated_unwind_bench.cpp
               ${PROJECT_SOURCE_DIR}/runtime/unwind/fast_unwind.cpp
               ${PROJECT_SOURCE_DIR}/runtime/unwind/fast_unwind_arm.cpp
               $<TARGET_OBJECTS:memtrack_core_rt>)
target_include_directories(memtrack_emulated_unwind_bench PRIVATE ${PROJECT_SOURCE_DIR})
target_compile_options(memtrack_emulated_unwind_bench PRIVATE -O2 -fomit-frame-pointer
                       ${MEMTRACK_WARNINGS})
set_source_files_properties(${PROJECT_SOURCE_DIR}/runtime/unwind/fast_unwind.cpp
                            ${PROJECT_SOURCE_DIR}/runtime/unwind/fast_unwind_arm.cpp
                            TARGET_DIRECTORY memtrack_emulated_unwind_bench
                            PROPERTIES COMPILE_OPTIONS
                            "-fno-omit-frame-pointer;${MEMTRACK_RUNTIME_FLAGS}")
