// How libmemtrack.so finds the real functions: dlsym past itself (real_functions.h). Calls
// libc (dlsym) but never malloc itself (dlsym's calloc is served by the bootstrap arena).
#include <dlfcn.h>
#include <link.h>

#include "runtime/alloc_guard.h"
#include "runtime/link/link_mode.h"
#include "runtime/link/real_functions.h"
#include "runtime/runtime.h"

namespace memtrack::rt {

namespace {

bool g_global_scope = false;

bool in_own_image(void* address) {
  dl_find_object own{};
  dl_find_object found{};
  return _dl_find_object(reinterpret_cast<void*>(&resolve_next), &own) == 0 &&
         _dl_find_object(address, &found) == 0 && own.dlfo_map_start == found.dlfo_map_start;
}

}  // namespace

void resolve_in_global_scope() {
  g_global_scope = true;
}

void* resolve_next(const char* name) {
  RuntimeScope scope;
  AllowAllocation allowed("dlsym");
  if (!g_global_scope) return dlsym(RTLD_NEXT, name);
  // A C program has no operator new but memtrack's, which the global scope does not hold
  // and the local one (searched next) does: that is no real function.
  void* found = dlsym(RTLD_DEFAULT, name);
  return found != nullptr && in_own_image(found) ? nullptr : found;
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
