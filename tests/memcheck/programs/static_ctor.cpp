// Allocations in a static constructor, before main: one held by a global (still reachable)
// and one whose pointer is dropped (definitely lost). The constructed object is trivially
// destructible, so nothing runs for it at exit.
// MEMCHECK: definite 176 1
// MEMCHECK: reachable 160 1
// REACHABLE: compare
#include "memcheck_case.h"

void* g_kept;

struct Init {
  Init() {
    g_kept = malloc(160);
    lose(malloc(176));
  }
};
Init g_init;

int main() {
  scrub_stack();
  return 0;
}
