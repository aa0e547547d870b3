// Zero-size blocks are blocks: malloc(0) held by a global is still reachable (0 bytes in 1
// block), malloc(0) and realloc(NULL, 0) whose pointers are dropped are definitely lost (0
// bytes in 2 blocks). memcheck treats a zero-size block as 1 byte wide when it matches
// pointers, so the global's start pointer finds it.
// MEMCHECK: reachable 0 1
// MEMCHECK: definite 0 2
// REACHABLE: compare
#include "memcheck_case.h"

void* g_empty;

NOINLINE static void setup(void) {
  g_empty = malloc(0);
  CHECK(g_empty != NULL);
  void* a = malloc(0);
  CHECK(a != NULL);
  lose(a);
  void* b = realloc(NULL, 0);
  CHECK(b != NULL);
  lose(b);
}

int main(void) {
  setup();
  scrub_stack();
  return 0;
}
