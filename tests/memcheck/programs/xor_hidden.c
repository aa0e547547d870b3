// The only copy of a block's address is xor-encoded in a global: definitely lost, as the
// scan sees no value that points into the block.
// MEMCHECK: definite 64 1
// REACHABLE: compare
#include "memcheck_case.h"

uintptr_t g_hidden;

NOINLINE static void setup(void) {
  g_hidden = (uintptr_t)malloc(64) ^ (uintptr_t)0x5a5a5a5a5a5a5a5aULL;
}

int main(void) {
  setup();
  scrub_stack();
  return 0;
}
