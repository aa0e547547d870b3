// How the runtime got into the process: preloaded (libmemtrack.so) or linked into the program
// (libmemtrack_static.a, docs/static-link.md). Runtime-safe: a declaration only.
#pragma once

#include <cstdint>

namespace memtrack::rt {

enum class LinkMode {
  kPreload,      // LD_PRELOAD=libmemtrack.so: hooks found by the dynamic loader
  kStaticLink,   // the archive in a -static or -static-pie program: every object was wrapped
  kDynamicLink,  // the archive in a dynamically linked program: shared libraries are not seen
};

// Defined once per build of the runtime: by link/resolve_dlsym.cpp in libmemtrack.so, by
// link/resolve_linked.cpp in the archive. Thread safe; constant after the first call.
LinkMode link_mode();

// False while a static program's C library is still setting itself up (__libc_init_first
// allocates before dl_iterate_phdr knows the executable, so no stack can be unwound yet):
// the runtime starts on the first call after. Always true for libmemtrack.so. Thread safe.
bool process_ready();

// The runtime's own code when it is linked into the executable (one section, see
// make_static_archive.py), whose frames the unwinder skips; false for libmemtrack.so, whose
// whole mapping is the runtime's.
bool linked_code_range(uintptr_t* /*out*/ begin, uintptr_t* /*out*/ end);
// Likewise its zero-initialised globals, which the leak scan must not take as roots.
bool linked_globals_range(uintptr_t* /*out*/ begin, uintptr_t* /*out*/ end);

}  // namespace memtrack::rt
