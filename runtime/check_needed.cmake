# Fails unless libmemtrack.so depends on libc and libgcc_s only: anything else (libstdc++,
# libunwind) would be forced into every program it is preloaded into.
execute_process(COMMAND readelf -d ${LIBRARY} OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d ${LIBRARY} failed")
endif()
string(REGEX MATCHALL "Shared library: \\[[^]]+\\]" needed "${dynamic}")
foreach(entry IN LISTS needed)
  if(NOT entry MATCHES "\\[(libc\\.so\\.6|libgcc_s\\.so\\.1)\\]")
    message(FATAL_ERROR "unexpected dependency of libmemtrack.so: ${entry}")
  endif()
endforeach()
list(LENGTH needed count)
if(NOT count EQUAL 2)
  message(FATAL_ERROR "expected exactly libc and libgcc_s, got: ${needed}")
endif()

# The demangler linked in from libsupc++.a (unwind/elf_symbols.cpp) stays local: exported, its
# __cxa_demangle would interpose the program's own.
execute_process(COMMAND readelf --dyn-syms -W ${LIBRARY} OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf --dyn-syms ${LIBRARY} failed")
endif()
if(symbols MATCHES "[0-9a-f]+ +[0-9]+ FUNC +GLOBAL +DEFAULT +[0-9]+ (__cxa_demangle|__gcclibcxx_demangle_callback)")
  message(FATAL_ERROR "libmemtrack.so exports ${CMAKE_MATCH_1}")
endif()
