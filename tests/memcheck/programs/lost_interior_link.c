// Two lost blocks, A holding an interior pointer (16 bytes in) to B and nothing else pointing
// to either: A is definitely lost and B indirectly lost. Among unreached blocks memcheck
// follows interior pointers like start pointers (they only matter for reachable blocks).
// MEMCHECK: definite 32 1
// MEMCHECK: indirect 64 1
// REACHABLE: compare
#include "memcheck_case.h"

NOINLINE static void setup(void) {
  char** a = calloc(1, 32);
  a[0] = (char*)calloc(1, 64) + 16;
  lose(a);
}

int main(void) {
  setup();
  scrub_stack();
  return 0;
}
