// How libmemtrack.so finds the real functions: dlsym past itself (real_functions.h). Calls
// libc (dlsym) but never malloc itself (dlsym's calloc is served by the bootstrap arena).
#include <dlfcn.h>

#include "runtime/alloc_guard.h"
#include "runtime/hooks/real_functions.h"
#include "runtime/link_mode.h"
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
