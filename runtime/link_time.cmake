# libmemtrack_static.a: the same runtime, linked into a static program instead of preloaded
# (docs/static-link.md). Built from the sources of memtrack_rt with two exchanged: the real
# functions come from the linker's __real_ names (link/resolve_linked.cpp), not dlsym.
# Two members: the runtime, and its operator new/delete hooks, which only a C++ program pulls
# in (they need libstdc++). make_static_archive.py renames each hook NAME to __wrap_NAME and
# writes the matching -Wl,--wrap list, taking the names from libmemtrack.so's exports, which
# must be exactly link/interposed.inc's, so the two modes hook the same functions.
get_target_property(memtrack_static_sources memtrack_rt SOURCES)
list(FILTER memtrack_static_sources EXCLUDE REGEX "TARGET_OBJECTS|resolve_dlsym|new_delete_hooks")
add_library(memtrack_static_core OBJECT ${memtrack_static_sources} link/resolve_linked.cpp
                                         hooks/static_entry.cpp)
add_library(memtrack_static_cxx OBJECT hooks/new_delete_hooks.cpp hooks/cxx_anchors.cpp)
foreach(part memtrack_static_core memtrack_static_cxx)
  target_include_directories(${part} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_options(${part} PRIVATE ${MEMTRACK_WARNINGS} ${MEMTRACK_RUNTIME_FLAGS})
  target_compile_definitions(${part} PRIVATE MEMTRACK_VERSION="${PROJECT_VERSION}")
  if(MEMTRACK_ALLOC_GUARD)
    target_compile_definitions(${part} PRIVATE MEMTRACK_ALLOC_GUARD=1)
  endif()
endforeach()

set(memtrack_static_archive ${CMAKE_CURRENT_BINARY_DIR}/libmemtrack_static.a)
set(memtrack_static_wrap ${CMAKE_CURRENT_BINARY_DIR}/libmemtrack_static.wrap)
add_custom_command(
  OUTPUT ${memtrack_static_archive} ${memtrack_static_wrap}
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/make_static_archive.py
          --ld ${CMAKE_LINKER} --objcopy ${CMAKE_OBJCOPY} --ar ${CMAKE_AR} --nm ${CMAKE_NM}
          --preload $<TARGET_FILE:memtrack_rt> --supcxx ${MEMTRACK_LIBSUPCXX}
          --names ${CMAKE_CURRENT_SOURCE_DIR}/link/interposed.inc
          --archive ${memtrack_static_archive} --wrap ${memtrack_static_wrap}
          --core "$<TARGET_OBJECTS:memtrack_static_core>" "$<TARGET_OBJECTS:memtrack_core_rt>"
          --cxx "$<TARGET_OBJECTS:memtrack_static_cxx>"
  DEPENDS memtrack_rt memtrack_static_core memtrack_static_cxx memtrack_core_rt
          $<TARGET_OBJECTS:memtrack_static_core> $<TARGET_OBJECTS:memtrack_static_cxx>
          $<TARGET_OBJECTS:memtrack_core_rt> make_static_archive.py
          link/interposed.inc
  COMMAND_EXPAND_LISTS VERBATIM
  COMMENT "Linking the link-time runtime libmemtrack_static.a")
add_custom_target(memtrack_static ALL DEPENDS ${memtrack_static_archive} ${memtrack_static_wrap})
