// A known heap pattern for the heap profile tests (test_profile.py): 1,000 temporary
// allocations of 100 bytes (make_temporary), a steady growth of 10 blocks of 1,000 bytes that
// are never freed (grow_cache), and a peak of 4 x 262,144 bytes (build_peak), held together
// and then freed. One realloc, which is no temporary. With --hold it prints "ready PID" and
// waits for its standard input to close before freeing the 32-byte block and ending
// (test_ui.py reads its profile while it runs).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void* volatile g_sink;  // keeps the compiler from removing malloc/free pairs

__attribute__((noinline)) void* make_temporary(size_t size) {
  void* p = malloc(size);
  g_sink = p;
  return p;
}

__attribute__((noinline)) void grow_cache(void) {
  g_sink = malloc(1000);
}

__attribute__((noinline)) void build_peak(void) {
  void* blocks[4];
  for (int i = 0; i < 4; ++i) {
    blocks[i] = malloc(262144);
    g_sink = blocks[i];
  }
  for (int i = 0; i < 4; ++i) free(blocks[i]);
}

// Without stdio, whose buffers would be allocations of their own.
static void hold(void) {
  char line[32];
  int n = snprintf(line, sizeof line, "ready %d\n", (int)getpid());
  if (write(1, line, (size_t)n) != n) return;
  char buffer[64];
  while (read(0, buffer, sizeof buffer) > 0) {
  }
}

int main(int argc, char** argv) {
  for (int i = 0; i < 1000; ++i) free(make_temporary(100));
  char* kept = malloc(16);
  g_sink = kept;
  for (int i = 0; i < 5; ++i) {
    grow_cache();
    usleep(20000);
  }
  kept = realloc(kept, 32);
  g_sink = kept;
  usleep(50000);  // the window test starts at the peak: nothing before it may fall inside
  build_peak();
  usleep(50000);
  for (int i = 0; i < 5; ++i) {
    grow_cache();
    usleep(20000);
  }
  if (argc > 1 && strcmp(argv[1], "--hold") == 0) hold();
  free(kept);
  return 0;
}
