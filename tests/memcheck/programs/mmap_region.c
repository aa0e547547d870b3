// The only pointer to a block is inside an anonymous read-write mmap region: memcheck scans
// every readable and writable client mapping, so the block is still reachable. (LSan would
// call it a direct leak; memtrack aims for memcheck's verdict.)
// MEMCHECK: reachable 256 1
// REACHABLE: compare
#include <sys/mman.h>

#include "memcheck_case.h"

void** g_region;

NOINLINE static void setup(void) {
  g_region = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(g_region != MAP_FAILED);
  g_region[100] = malloc(256);
}

int main(void) {
  setup();
  scrub_stack();
  return 0;
}
