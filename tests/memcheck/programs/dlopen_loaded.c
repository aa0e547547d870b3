// A block held by a global of a library loaded with dlopen, still loaded at exit: still
// reachable (every loaded module's writable segments are roots). What ld.so allocates for
// dlopen (link map, scopes) has ld.so frames and counts as the runtime's own.
// MEMCHECK: reachable 272 1
// REACHABLE: compare
#include <dlfcn.h>

#include "memcheck_case.h"

NOINLINE static void load(void) {
  void* handle = dlopen(MEMCHECK_LIB_PATH, RTLD_NOW);
  CHECK(handle != NULL);
  void (*keep)(size_t) = (void (*)(size_t))dlsym(handle, "lib_keep");
  CHECK(keep != NULL);
  keep(272);
}

int main(void) {
  load();
  scrub_stack();
  return 0;
}
