// The shared library library_teardown links: its constructor builds state that its
// destructor frees again (as GnuTLS and libtasn1 do), and its destructor leaks one block of
// its own. Both happen after the program's exit handlers, in the dynamic linker's
// finalization of every library, which the exit report must wait for.
#include <stdlib.h>

#include "memcheck_case.h"

static void* g_state[8];

__attribute__((constructor)) static void build_state(void) {
  for (int i = 0; i < 8; ++i) g_state[i] = malloc(112);
}

__attribute__((destructor)) static void free_state(void) {
  for (int i = 0; i < 8; ++i) {
    free(g_state[i]);
    g_state[i] = NULL;
  }
  lose(malloc(176));  // a leak in the teardown itself
  scrub_stack();
}

int teardown_lib_blocks(void) {
  int live = 0;
  for (int i = 0; i < 8; ++i) live += g_state[i] != NULL;
  return live;
}
