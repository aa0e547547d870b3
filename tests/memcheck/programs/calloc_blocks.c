// calloc'd blocks count with their full size (count * size): one held by a global (still
// reachable), one whose pointer is dropped (definitely lost).
// MEMCHECK: reachable 128 1
// MEMCHECK: definite 48 1
// REACHABLE: compare
#include "memcheck_case.h"

void* g_table;

NOINLINE static void setup(void) {
  g_table = calloc(4, 32);
  lose(calloc(3, 16));
}

int main(void) {
  setup();
  scrub_stack();
  return 0;
}
