// A block whose first 8 bytes hold the length of the rest (sqlite's layout), pointed to only
// at start+8: still reachable by memcheck's "length64" heuristic. (The "newarray" heuristic
// accepts the same block, as the length divides itself; either way it is reachable.)
// MEMCHECK: reachable 80 1
// REACHABLE: compare
#include "memcheck_case.h"

char* g_payload;

NOINLINE static void setup(void) {
  unsigned long* block = malloc(80);
  block[0] = 72;
  for (int i = 1; i < 10; ++i) block[i] = 0;
  g_payload = (char*)block + 8;
}

int main(void) {
  setup();
  scrub_stack();
  return 0;
}
