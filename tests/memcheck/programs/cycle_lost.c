// A ring of 3 equal blocks (a -> b -> c -> a) with no pointer from outside. memcheck visits
// unreached blocks in address order, so the lowest-addressed block becomes the clique leader
// (definitely lost) and the other two join its clique (indirectly lost). The blocks have
// equal sizes, so the totals per kind do not depend on which one is lowest.
// MEMCHECK: definite 32 1
// MEMCHECK: indirect 64 2
// REACHABLE: compare
#include "memcheck_case.h"

struct ring {
  struct ring* next;
  char pad[24];
};
struct ring* g_ring;

NOINLINE static void setup(void) {
  struct ring* a = malloc(sizeof(struct ring));  // 32 bytes each
  struct ring* b = malloc(sizeof(struct ring));
  struct ring* c = malloc(sizeof(struct ring));
  a->next = b;
  b->next = c;
  c->next = a;
  g_ring = a;
}

NOINLINE static void drop(void) {
  g_ring = NULL;
}

int main(void) {
  setup();
  drop();
  scrub_stack();
  return 0;
}
