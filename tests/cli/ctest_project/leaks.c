// Two blocks definitely lost and one still reachable (a global keeps it); setenv's copies are
// glibc's own state, no leak.
#include <stdlib.h>

void* g_kept;

static void lose(size_t size) {
  void* volatile p = malloc(size);
  (void)p;
}

int main(void) {
  lose(112);
  lose(208);
  g_kept = malloc(48);
  setenv("MEMTRACK_SAMPLE_A", "1", 1);
  setenv("MEMTRACK_SAMPLE_B", "2", 1);
  return 0;
}
