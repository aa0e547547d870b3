// Fixed workload for memory per live block: allocates COUNT small blocks, keeps every one
// reachable from a global array, and exits without freeing them, so peak RSS under a tool
// minus the plain run's, divided by COUNT, is the tool's metadata per live block.
// Usage: live_blocks [count=1000000] [size=32]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char** blocks;  // a root: the blocks are still reachable at exit, not leaked

int main(int argc, char** argv) {
  long count = argc > 1 ? atol(argv[1]) : 1000000;
  size_t size = argc > 2 ? strtoul(argv[2], NULL, 10) : 32;
  if (count < 1 || size < 1) {
    fprintf(stderr, "usage: live_blocks [count >= 1] [size >= 1]\n");
    return 2;
  }
  blocks = malloc((size_t)count * sizeof(char*));
  if (blocks == NULL) return 1;
  for (long i = 0; i < count; ++i) {
    blocks[i] = malloc(size);
    if (blocks[i] == NULL) return 1;
    memset(blocks[i], (int)(i & 0x7f), size);  // resident, as live data is
  }
  printf("%ld live blocks of %zu bytes\n", count, size);
  return 0;
}
