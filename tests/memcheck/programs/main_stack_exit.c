// main calls exit() while its own local variable holds a block: main's frame is still live
// (exit never returns), so the block is still reachable from the main thread's stack.
// MEMCHECK: reachable 96 1
// REACHABLE: compare
#include "memcheck_case.h"

NOINLINE static char* make(void) {
  return malloc(96);
}

int main(void) {
  char* volatile local = make();
  scrub_stack();
  exit(local != NULL ? 0 : 1);
}
