// The only pointer to a block points one past its end: it matches no block, so the block is
// definitely lost. The block's size (20) is not a multiple of 8, so the pointer lies inside
// glibc's usable size of the chunk (24): a tool that matched usable rather than requested
// sizes would call it possibly lost. A block allocated after it keeps glibc's top chunk
// pointer (which would point inside it, see allocator_metadata.c) away.
// MEMCHECK: definite 20 1
// MEMCHECK: reachable 64 1
// REACHABLE: compare
#include "memcheck_case.h"

char* g_end;
void* g_guard;

NOINLINE static void setup(void) {
  char* block = malloc(20);
  g_guard = malloc(64);
  g_end = block + 20;
}

int main(void) {
  setup();
  scrub_stack();
  return 0;
}
