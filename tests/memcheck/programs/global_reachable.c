// Blocks held by a global in .bss, a global in .data, a field of a global struct and a
// function-local static are all still reachable (start pointers from the executable's
// writable segments).
// MEMCHECK: reachable 448 4
// REACHABLE: compare
#include "memcheck_case.h"

char* g_bss;             // .bss
void* g_data = &g_data;  // .data (non-zero initialiser), overwritten below
struct config {
  int version;
  char* name;
} g_config = {1, NULL};

NOINLINE static void setup(void) {
  static char* kept;  // function-local static: .bss as well, under a local name
  g_bss = malloc(64);
  g_data = malloc(96);
  g_config.name = malloc(112);
  kept = malloc(176);
  ESCAPE(kept);
}

int main(void) {
  setup();
  scrub_stack();
  return 0;
}
