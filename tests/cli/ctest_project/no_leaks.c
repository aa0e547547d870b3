// Frees what it allocates; setenv's copies are glibc's own state, no leak.
#include <stdlib.h>

int main(void) {
  setenv("MEMTRACK_SAMPLE", "1", 1);
  free(malloc(64));
  return 0;
}
