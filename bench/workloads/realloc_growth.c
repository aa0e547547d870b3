// Whole-process workload: many buffers grown step by step with realloc, interleaved so a
// neighbour usually blocks growth in place (realloc then moves the block), freed when they
// reach their final size and started again, as string builders and dynamic arrays do.
// Usage: realloc_growth [rounds=1] [buffers=1024] [final size=4096] [step=64]
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 1;
  int buffers = argc > 2 ? atoi(argv[2]) : 1024;
  size_t final_size = argc > 3 ? strtoul(argv[3], NULL, 10) : 4096;
  size_t step = argc > 4 ? strtoul(argv[4], NULL, 10) : 64;
  if (rounds < 0 || buffers < 1 || step < 1 || final_size < step) {
    fprintf(stderr, "usage: realloc_growth [rounds] [buffers >= 1] [final size] [step]\n");
    return 2;
  }
  char** bufs = calloc((size_t)buffers, sizeof(char*));
  unsigned long checksum = 0, reallocs = 0;
  for (int r = 0; r < rounds; ++r) {
    for (size_t size = step; size <= final_size; size += step) {
      for (int i = 0; i < buffers; ++i) {
        char* grown = realloc(bufs[i], size);
        if (grown == NULL) {
          perror("realloc");
          return 1;
        }
        grown[size - 1] = (char)(size + i);  // touch the new end
        checksum += (unsigned char)grown[size - step];
        bufs[i] = grown;
        ++reallocs;
      }
    }
    for (int i = 0; i < buffers; ++i) {
      free(bufs[i]);
      bufs[i] = NULL;
    }
  }
  free(bufs);
  printf("%lu reallocs, checksum %lu\n", reallocs, checksum);
  return 0;
}
