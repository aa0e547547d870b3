// The only copy of a block's address is stored at an address that is not a multiple of 8
// (inside a packed global): both tools read only aligned words, so the block is definitely
// lost.
// MEMCHECK: definite 48 1
// REACHABLE: compare
#include <string.h>

#include "memcheck_case.h"

_Alignas(8) unsigned char g_bytes[32];

NOINLINE static void setup(void) {
  void* block = malloc(48);
  memcpy(g_bytes + 3, &block, sizeof(block));
}

int main(void) {
  setup();
  scrub_stack();
  return 0;
}
