// realloc(p, 0) frees p in glibc (and returns NULL): the 500-byte block is not a leak. The
// 10-byte control leak shows that tracking is on.
// EXPECT-LEAKED: 10 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 10 bytes in 1 block | control_leak@alloc main@call
#include "e2e_util.h"

__attribute__((noinline)) void shrink_to_nothing(void) {
  char* p = malloc(500);
  ESCAPE(p);
  char* q = realloc(p, 0);
  ESCAPE(q);
  free(q);  // NULL with glibc; a C library that returns a block would need this
}

__attribute__((noinline)) void control_leak(void) {
  ESCAPE(malloc(10));  // @alloc
}

int main(void) {
  shrink_to_nothing();
  control_leak();  // @call
  ESCAPE(0);
  return 0;
}
