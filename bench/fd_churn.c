// Whole-process workload for the descriptor hooks: N open+close pairs of /dev/null (or
// fopen+fclose with "stream") at a fixed call depth, the pattern the fd-tracking cost in
// docs/runtime.md is measured on. Usage: fd_churn [pairs=200000] [depth=10] [open|stream]
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) static int churn_at_depth(int depth, long pairs, int stream) {
  if (depth > 1) {
    int failures = churn_at_depth(depth - 1, pairs, stream);
    __asm__ volatile("" ::: "memory");  // keeps the recursion from becoming a loop
    return failures;
  }
  int failures = 0;
  for (long i = 0; i < pairs; ++i) {
    if (stream) {
      FILE* f = fopen("/dev/null", "r");
      failures += f == NULL || fclose(f) != 0;
    } else {
      int fd = open("/dev/null", O_RDONLY);
      failures += fd < 0 || close(fd) != 0;
    }
  }
  return failures;
}

int main(int argc, char** argv) {
  long pairs = argc > 1 ? atol(argv[1]) : 200000;
  int depth = argc > 2 ? atoi(argv[2]) : 10;
  int stream = argc > 3 && strcmp(argv[3], "stream") == 0;
  int failures = churn_at_depth(depth, pairs, stream);
  printf("%ld %s pairs at depth %d, %d failed\n", pairs, stream ? "fopen+fclose" : "open+close",
         depth, failures);
  return failures != 0;
}
