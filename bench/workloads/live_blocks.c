// Fixed workload for memory per live block: allocates COUNT small blocks, keeps every one
// reachable from a global array, and exits without freeing them, so peak RSS under a tool
// minus the plain run's, divided by COUNT, is the tool's metadata per live block.
// Usage: live_blocks [count=1000000] [size=32]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The root that keeps the blocks reachable at exit. Volatile, so the pointer is stored here:
// without it, nothing reads it and the compiler kept it in a register, so the leak scan
// found the array definitely lost and the blocks indirectly lost, not reachable.
static char** volatile blocks;

int main(int argc, char** argv) {
  long count = argc > 1 ? atol(argv[1]) : 1000000;
  size_t size = argc > 2 ? strtoul(argv[2], NULL, 10) : 32;
  if (count < 1 || size < 1) {
    fprintf(stderr, "usage: live_blocks [count >= 1] [size >= 1]\n");
    return 2;
  }
  char** array = malloc((size_t)count * sizeof(char*));
  if (array == NULL) return 1;
  blocks = array;
  for (long i = 0; i < count; ++i) {
    array[i] = malloc(size);
    if (array[i] == NULL) return 1;
    memset(array[i], (int)(i & 0x7f), size);  // resident, as live data is
  }
  printf("%ld live blocks of %zu bytes\n", count, size);
  return 0;
}
