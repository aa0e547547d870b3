// The same library as dlopen_loaded.c, closed with dlclose before exit: its writable segment
// is unmapped, the block it held has no pointer left and is definitely lost.
// MEMCHECK: definite 272 1
// REACHABLE: compare
#include <dlfcn.h>

#include "memcheck_case.h"

NOINLINE static void load_and_close(void) {
  void* handle = dlopen(MEMCHECK_LIB_PATH, RTLD_NOW);
  CHECK(handle != NULL);
  void (*keep)(size_t) = (void (*)(size_t))dlsym(handle, "lib_keep");
  CHECK(keep != NULL);
  keep(272);
  CHECK(dlclose(handle) == 0);
  // Really unloaded: a no-load open finds nothing.
  CHECK(dlopen(MEMCHECK_LIB_PATH, RTLD_NOW | RTLD_NOLOAD) == NULL);
}

int main(void) {
  load_and_close();
  scrub_stack();
  return 0;
}
