// The only pointer to a block is inside a block that has been freed: definitely lost, as
// freed memory is never scanned. The pointer sits at offset 32 of the freed block, past the
// 16 bytes glibc's tcache overwrites on free, so it is really still there in native runs.
// MEMCHECK: definite 48 1
// REACHABLE: compare
#include "memcheck_case.h"

NOINLINE static void setup(void) {
  void** holder = malloc(64);
  for (int i = 0; i < 8; ++i) holder[i] = NULL;
  holder[4] = malloc(48);
  free(holder);
}

int main(void) {
  setup();
  scrub_stack();
  return 0;
}
