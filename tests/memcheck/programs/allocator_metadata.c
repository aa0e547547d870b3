// Two lost blocks that glibc's malloc bookkeeping points into in native runs (valgrind
// replaces malloc, so memcheck never sees such pointers): both are definitely lost.
//  - X (24 bytes): the chunk right after it is freed into a fastbin, and the fastbin head
//    (in main_arena, libc's .data) points at that chunk's header, which lies 16 bytes into
//    X's requested range: X's last 8 bytes share memory with the next chunk's prev_size.
//  - Y (40 bytes): the last block carved from the top chunk, so main_arena.top points 32
//    bytes into it (a chunk of 48 bytes starts 16 bytes before the block).
// A scanner that takes libc's .data as a root without knowing these words would call X and
// Y possibly lost. The 7 frees before F fill glibc's tcache bin for 32-byte chunks, so F
// goes to the fastbin.
// MEMCHECK: definite 64 2
// REACHABLE: compare
#include "memcheck_case.h"

NOINLINE static void setup(void) {
  void* fill[7];
  for (int i = 0; i < 7; ++i) fill[i] = malloc(24);
  void* x = malloc(24);
  void* f = malloc(24);
  for (int i = 0; i < 7; ++i) free(fill[i]);
  free(f);
  lose(x);
  lose(malloc(40));  // Y
}

int main(void) {
  setup();
  scrub_stack();
  return 0;
}
