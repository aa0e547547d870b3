// Frees one block twice: one invalid free for memcheck and memtrack alike (neither passes the
// second call on, so the program goes on and exits 0).
#include <stdlib.h>

int main(void) {
  void* volatile p = malloc(32);
  free(p);
  free(p);
  return 0;
}
