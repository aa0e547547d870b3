// realloc: a block grown twice and held by a global (still reachable, at its last size) and
// a block grown once whose pointer is dropped (definitely lost, at its last size). memcheck's
// realloc always moves; the old blocks are freed either way.
// MEMCHECK: reachable 4096 1
// MEMCHECK: definite 48 1
// REACHABLE: compare
#include "memcheck_case.h"

char* g_buffer;

NOINLINE static void setup(void) {
  g_buffer = malloc(32);
  g_buffer = realloc(g_buffer, 64);
  g_buffer = realloc(g_buffer, 4096);
  char* q = malloc(16);
  q = realloc(q, 48);
  lose(q);
}

int main(void) {
  setup();
  scrub_stack();
  return 0;
}
