// realloc(NULL, 64) is malloc(64): leaked, recorded at the realloc call.
// EXPECT-LEAKED: 64 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 64 bytes in 1 block | realloc_from_null@alloc main@call
#include "e2e_util.h"

__attribute__((noinline)) void realloc_from_null(void) {
  char* p = realloc(NULL, 64);  // @alloc
  CHECK(p != NULL);
  ESCAPE(p);
}

int main(void) {
  realloc_from_null();  // @call
  ESCAPE(0);
  return 0;
}
