// A global holds an interior pointer into A; A holds the only (start) pointer to B. A is
// possibly lost, and so is B: memcheck marks what it reaches through a possibly lost block
// as possibly lost too, even through a start pointer.
// MEMCHECK: possible 96 2
// REACHABLE: compare
#include "memcheck_case.h"

char* g_inside;

NOINLINE static void setup(void) {
  void** a = calloc(1, 64);
  a[0] = malloc(32);  // B; A's first word is a heap pointer, not a vtable
  g_inside = (char*)a + 16;
}

int main(void) {
  setup();
  scrub_stack();
  return 0;
}
