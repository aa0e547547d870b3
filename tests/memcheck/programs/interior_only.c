// The only pointer to a block points 16 bytes into it: possibly lost. The block is zeroed,
// so none of memcheck's heuristics (which look at offsets 8 and 24 and at the words there)
// can apply.
// MEMCHECK: possible 64 1
// REACHABLE: compare
#include "memcheck_case.h"

char* g_inside;

NOINLINE static void setup(void) {
  g_inside = (char*)calloc(1, 64) + 16;
}

int main(void) {
  setup();
  scrub_stack();
  return 0;
}
