// How libmemtrack.so finds the real functions: dlsym past itself (real_functions.h). Calls
// libc (dlsym) but never malloc itself (dlsym's calloc is served by the bootstrap arena).
#include <dlfcn.h>

#include "runtime/alloc_guard.h"
#include "runtime/link/link_mode.h"
#include "runtime/link/real_functions.h"
#include "runtime/runtime.h"

namespace memtrack::rt {

void* resolve_next(const char* name) {
  RuntimeScope scope;
  AllowAllocation allowed("dlsym");
  return dlsym(RTLD_NEXT, name);
}

void* resolve_default(const char* name) {
  RuntimeScope scope;
  AllowAllocation allowed("dlsym");
  return dlsym(RTLD_DEFAULT, name);
}

LinkMode link_mode() {
  return LinkMode::kPreload;
}

bool process_ready() {
  return true;
}

bool linked_code_range(uintptr_t*, uintptr_t*) {
  return false;
}

bool linked_globals_range(uintptr_t*, uintptr_t*) {
  return false;
}

}  // namespace memtrack::rt

// The runtime's own registrations of destructors for its globals (mapped tables) come here
// (libmemtrack.so is linked with --wrap=__cxa_atexit; the link-time archive renames them to
// memtrack_keep_runtime_globals): they are never destroyed, since the exit report runs after
// every library's finalization, this one's included (exit_hooks.cpp).
extern "C" __attribute__((visibility("hidden"))) int __wrap___cxa_atexit(void (*)(void*), void*,
                                                                         void*) {
  return 0;
}
