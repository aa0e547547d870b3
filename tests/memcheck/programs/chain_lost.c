// global -> A -> B, then the global is cleared: A is definitely lost and B, reachable only
// from A, indirectly lost (A's clique).
// MEMCHECK: definite 48 1
// MEMCHECK: indirect 32 1
// REACHABLE: compare
#include "memcheck_case.h"

struct a {
  char* b;
  char pad[40];
};
struct a* g_head;

NOINLINE static void setup(void) {
  g_head = malloc(sizeof(struct a));  // 48 bytes
  g_head->b = malloc(32);
}

NOINLINE static void drop(void) {
  g_head = NULL;
}

int main(void) {
  setup();
  drop();
  scrub_stack();
  return 0;
}
