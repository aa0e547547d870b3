// Whole-process workload: N malloc+free pairs at a fixed call depth with a non-LIFO working
// set, the pattern the overhead ratios in docs/performance.md are measured on.
// Usage: churn [pairs=1000000] [depth=10]
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WORKING_SET 1024

static void* slots[WORKING_SET];

__attribute__((noinline)) static void churn_at_depth(int depth, long pairs) {
  if (depth > 1) {
    churn_at_depth(depth - 1, pairs);
    __asm__ volatile("" ::: "memory");  // keeps the recursion from becoming a loop
    return;
  }
  uint32_t x = 12345;
  for (long i = 0; i < pairs; ++i) {
    x = x * 1103515245u + 12345u;
    uint32_t slot = (x >> 8) % WORKING_SET;
    free(slots[slot]);
    slots[slot] = malloc(16 + (x >> 24) % 240);
  }
}

int main(int argc, char** argv) {
  long pairs = argc > 1 ? atol(argv[1]) : 1000000;
  int depth = argc > 2 ? atoi(argv[2]) : 10;
  churn_at_depth(depth, pairs);
  for (int i = 0; i < WORKING_SET; ++i) free(slots[i]);
  printf("%ld pairs at depth %d\n", pairs, depth);
  return 0;
}
