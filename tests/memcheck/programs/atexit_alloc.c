// Allocations in an atexit handler, after main returned: one held by a global (still
// reachable) and one whose pointer is dropped (definitely lost). memcheck checks after the
// process has ended; memtrack reports after the program's atexit handlers.
// MEMCHECK: definite 224 1
// MEMCHECK: reachable 208 1
// REACHABLE: compare
#include "memcheck_case.h"

void* g_late;

static void at_exit(void) {
  g_late = malloc(208);
  lose(malloc(224));
  scrub_stack();  // the handlers and exit code after this one reuse this stack
}

int main(void) {
  CHECK(atexit(at_exit) == 0);
  return 0;
}
