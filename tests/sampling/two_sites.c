// The sampled mode's estimates (tests/sampling/check_estimates.py): two allocation sites, the
// first allocating 100 times the bytes of the second, each over sizes from 16 B to 1 MiB,
// all leaked. Truth per site: big_site 100 x (16 B x 4,096 + 1 KiB x 64 + 16 KiB x 4 +
// 1 MiB x 1), small_site 1 x the same.
#include <stdio.h>
#include <stdlib.h>

struct SizeClass {
  size_t size;
  int count;
};
static const struct SizeClass kClasses[] = {{16, 4096}, {1024, 64}, {16384, 4}, {1 << 20, 1}};

// Allocates `rounds` times every class, interleaved, and drops every pointer.
static void allocate(int rounds) {
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < 4096; ++i) {
      for (size_t c = 0; c < sizeof(kClasses) / sizeof(kClasses[0]); ++c) {
        if (i < kClasses[c].count) {
          volatile char* p = malloc(kClasses[c].size);
          if (p != NULL) p[0] = 1;
        }
      }
    }
  }
}

__attribute__((noinline)) void big_site(void) {
  allocate(100);
}

__attribute__((noinline)) void small_site(void) {
  allocate(1);
}

int main(void) {
  small_site();
  big_site();
  printf("done\n");
  return 0;
}
