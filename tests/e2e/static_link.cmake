# The same e2e programs linked statically with the link-time runtime (docs/static-link.md):
# e2e_static.<name> runs the program alone (the runtime's text report), cli_static.<name>
# through `memtrack run`, both checked against the program's unchanged EXPECT lines. LD_PRELOAD
# cannot reach a static program, so whatever run_e2e.py preloads is ignored: every hook seen is
# the linked one. The plain run, which stdout, stderr and exit status are compared with, is
# the dynamic build's (e2e_<name>): the static one always carries the runtime. A representative set: C and C++, each leak kind, allocator misuse through
# the libc functions that allocate, descriptors and streams, threads, fork, every exit path.
set(MEMTRACK_STATIC_ARCHIVE ${PROJECT_BINARY_DIR}/runtime/libmemtrack_static.a)
set(MEMTRACK_STATIC_WRAP ${PROJECT_BINARY_DIR}/runtime/libmemtrack_static.wrap)

function(memtrack_e2e_static_case source)
  cmake_parse_arguments(PARSE_ARGV 1 CASE "THREADS" "" "")
  get_filename_component(name ${source} NAME_WE)
  if(MEMTRACK_EMULATED AND (NOT name IN_LIST MEMTRACK_EMULATED_STATIC
                                 OR name IN_LIST MEMTRACK_EMULATED_SKIP))
    return()  # not in the emulated static set (tests/emulated/emulated.cmake says why)
  endif()
  set(target e2e_static_${name})
  add_executable(${target} ${source})
  add_dependencies(${target} memtrack_static)
  add_dependencies(memtrack_e2e_programs ${target})
  target_compile_options(${target} PRIVATE -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  # What $(memtrack link-flags) prints, after the program's objects.
  target_link_options(${target} PRIVATE -static -Wl,--eh-frame-hdr -Wl,@${MEMTRACK_STATIC_WRAP})
  target_link_libraries(${target} PRIVATE ${MEMTRACK_STATIC_ARCHIVE})
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${MEMTRACK_STATIC_ARCHIVE})
  if(CASE_THREADS)
    target_link_libraries(${target} PRIVATE Threads::Threads)
  endif()
  # Emulated: nothing is preloaded (qemu-user's loader could not reach a static program
  # either), the results are read back by the host's memtrack report.
  set(runtime $<TARGET_FILE:memtrack_rt>)
  if(MEMTRACK_EMULATED)
    set(runtime linked)
  endif()
  set(run ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/run_e2e.py
          --runtime ${runtime} --program $<TARGET_FILE:${target}>
          --source ${CMAKE_CURRENT_SOURCE_DIR}/${source}
          --plain-program $<TARGET_FILE:e2e_${name}>)
  if(MEMTRACK_EMULATED)
    memtrack_emulated_case(static.${name} ${source} "${run}")
    return()
  endif()
  add_test(NAME e2e_static.${name} COMMAND ${run})
  set_tests_properties(e2e_static.${name} PROPERTIES TIMEOUT 300 LABELS e2e)
  file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/${source} cli_skip REGEX "^// CLI: skip ")
  if(NOT cli_skip)
    add_test(NAME cli_static.${name} COMMAND ${run} --cli $<TARGET_FILE:memtrack>)
    set_tests_properties(cli_static.${name} PROPERTIES TIMEOUT 300 LABELS cli SKIP_RETURN_CODE 77)
  endif()
endfunction()

foreach(case aligned.c bad_alloc.cpp calloc.c constructor.cpp cooperation.c errno.c
             exceptions.cpp exit_underscore.c exit_upper.c fd_dup.c fd_files.c fd_sockets.c
             fd_streams.c fork.c free_null.c heap_release.c inlined.c leak_loop.c leak_one.c
             libc_internal.c mallinfo.c new_delete.cpp no_leaks.cpp nothrow_new.cpp realloc_grow.c
             realloc_zero.c reallocarray.c recursion.c static_function.c usable_size.c)
  memtrack_e2e_static_case(${case})
endforeach()
foreach(case exit_thread.c fd_threads.c threads.c)
  memtrack_e2e_static_case(${case} THREADS)
endforeach()
