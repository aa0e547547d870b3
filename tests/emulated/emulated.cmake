# The emulated tests of a cross build (cmake/toolchains, presets aarch64 and armhf): the
# runtime and the e2e programs built for the target run under qemu-user, named on every run
# (no binfmt_misc), and the host build's `memtrack report` reads and symbolizes their result
# files (in the aarch64-full preset, the target's own memtrack report under qemu-user). Included by the top-level CMakeLists.txt before tests/e2e and tests/unwind, which
# register their cases through memtrack_emulated_case and MEMTRACK_EMULATED_UNWIND_VARIANTS.
if(NOT MEMTRACK_EMULATOR OR NOT MEMTRACK_TARGET_ROOT OR NOT MEMTRACK_EMULATOR_OPTIONS)
  message(FATAL_ERROR "A cross build needs MEMTRACK_EMULATOR, MEMTRACK_TARGET_ROOT and "
                      "MEMTRACK_EMULATOR_OPTIONS (set by the toolchain files in cmake/toolchains)")
endif()
find_package(Threads REQUIRED)

# A single argument: run_e2e.py and run_unwind_check.py split it.
list(JOIN MEMTRACK_EMULATOR_OPTIONS " " emulator_options)
set(MEMTRACK_EMULATOR_COMMAND "${MEMTRACK_EMULATOR} ${emulator_options}")
if(MEMTRACK_RUNTIME_ONLY)
  set(MEMTRACK_HOST_MEMTRACK "${PROJECT_SOURCE_DIR}/build/release/cli/memtrack" CACHE FILEPATH
      "The host's memtrack, whose `memtrack report` reads the emulated programs' result files")
endif()

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
# - stress_fork_threads: its 20 children exec /bin/true. qemu-user does not emulate execve:
#   the host's kernel runs the host's /bin/true natively, whose loader cannot open the
#   target's libmemtrack.so ("cannot be preloaded ... ignored"), so 20 of the 21 reports it
#   expects are never written (checked by hand: only the parent's result file appears).
#   Forking with threads running does run: fork.c, threads.c, fd_threads.c, exit_thread.c,
#   and their static builds below.
# - heap_release: it checks that freed memory leaves the process's resident set, and the
#   plain run's glibc gives it back by lowering the program break, which qemu-user only
#   records: the emulator keeps the pages, so the plain run fails (checked by hand: under
#   memtrack the aarch64 run passes, madvise reaches the host). The unit tests of the heap's
#   release run natively.
# - sigwait_thread: a live thread that blocks every signal is told from a dead thread's cached
#   stack by the tid in its glibc descriptor, which is found from the descriptor's x86-64
#   layout (tcbhead_t at the top of the stack); on ARM the descriptor lies below the thread
#   pointer and the scan does not find it yet, so such a thread's stack is still skipped there.
set(MEMTRACK_EMULATED_SKIP stress_fork_threads heap_release sigwait_thread)
# - On 32-bit ARM, libc_internal: Debian's armhf libc has no unwind entries for strdup (its
#   .ARM.exidx marks the whole range from 0x6b058 to 0x7a9a8 of Debian 12's libc.so.6, string
#   functions included, EXIDX_CANTUNWIND; libc.a's objects likewise), so the stacks of the
#   blocks strdup allocates, for the program or for realpath, stop at strdup. Preloaded, the
#   rule for blocks the C runtime keeps for itself then takes them for libc's own and leaves
#   them out of the leaks; linked statically, they are leaks of strdup alone. getline's
#   stack, through getdelim, which has entries, is whole in both modes.
if(CMAKE_SYSTEM_PROCESSOR STREQUAL "arm")
  list(APPEND MEMTRACK_EMULATED_SKIP libc_internal)
endif()

# The static link mode (docs/static-link.md) under emulation: the archive built for the
# target with its binutils (runtime/link_time.cmake), the programs linked with `-static` and
# the flags of `memtrack link-flags` (tests/e2e/static_link.cmake), run under qemu-user with
# nothing preloaded, their result files read by the host's memtrack report; registered as
# emulated.<arch>.static.<name>. A bounded set of what the link-time mode must get right on
# its own: every operator new/delete form and C++ exceptions from static libstdc++, blocks
# the static libc allocates, descriptors and streams, threads, fork, the exit paths (13 s a
# preset with 2 jobs on the loaded 2-core machine). The other host static cases check only
# what the dynamic emulated cases already check on the same code (cooperation, a "CLI: skip"
# case, could not run here anyway).
set(MEMTRACK_EMULATED_STATIC aligned bad_alloc constructor exceptions new_delete nothrow_new
    leak_one recursion realloc_grow libc_internal fd_files fd_sockets fd_streams exit_upper
    fork threads fd_threads exit_thread exit_underscore)

# The whole project cross-built (aarch64-full): the target's memtrack report, run under the
# emulator, reads the results instead of the host's. A bounded set that the native reading
# must get right on its own (each leak kind from C and C++, inlined and static functions,
# exceptions, libc's own blocks, descriptors, threads, fork): the runtime-only preset runs
# every case, read by the host's memtrack, and the unwinder cross-check.
if(NOT MEMTRACK_RUNTIME_ONLY)
  set(MEMTRACK_EMULATED_NATIVE_REPORT aligned bad_alloc exceptions new_delete leak_one
      leak_loop inlined static_function recursion realloc_grow libc_internal fd_files
      fd_sockets threads fork exit_thread)
  set(MEMTRACK_EMULATED_STATIC "")
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
  if(MEMTRACK_RUNTIME_ONLY)
    add_test(NAME ${test}
      COMMAND ${run} --cli ${MEMTRACK_HOST_MEMTRACK} --emulator ${MEMTRACK_EMULATOR_COMMAND})
  else()
    add_test(NAME ${test} COMMAND ${run} --cli $<TARGET_FILE:memtrack> --emulated-cli
                                  --emulator ${MEMTRACK_EMULATOR_COMMAND})
  endif()
  # 77: the emulator itself could not run the program without memtrack on this host
  # (tests/e2e/emulator_run.py): skipped with the reason, never passed.
  set_tests_properties(${test} PROPERTIES TIMEOUT 300 LABELS emulated SKIP_RETURN_CODE 77)
endfunction()

# The unwinder's cost per frame against libgcc's under emulation (a program to run by hand,
# not a test: docs/performance.md, "Other architectures").
add_executable(memtrack_emulated_unwind_bench ${PROJECT_SOURCE_DIR}/bench/emulated_unwind_bench.cpp
               ${PROJECT_SOURCE_DIR}/runtime/unwind/fast_unwind.cpp
               ${PROJECT_SOURCE_DIR}/runtime/unwind/fast_unwind_arm.cpp
               ${PROJECT_SOURCE_DIR}/runtime/unwind/stack_memo.cpp
               $<TARGET_OBJECTS:memtrack_core_rt>)
target_include_directories(memtrack_emulated_unwind_bench PRIVATE ${PROJECT_SOURCE_DIR})
target_compile_options(memtrack_emulated_unwind_bench PRIVATE -O2 -fomit-frame-pointer
                       ${MEMTRACK_WARNINGS})
set_source_files_properties(${PROJECT_SOURCE_DIR}/runtime/unwind/fast_unwind.cpp
                            ${PROJECT_SOURCE_DIR}/runtime/unwind/fast_unwind_arm.cpp
                            TARGET_DIRECTORY memtrack_emulated_unwind_bench
                            PROPERTIES COMPILE_OPTIONS
                            "-fno-omit-frame-pointer;${MEMTRACK_RUNTIME_FLAGS}")
