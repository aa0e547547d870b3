// malloc(100) grown with realloc to 200 bytes, then leaked: one block of the new size,
// recorded at the realloc call. The 100-byte block was freed by realloc.
// EXPECT-LEAKED: 200 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 200 bytes in 1 block | grow_buffer@alloc main@call !make_buffer
#include <string.h>

#include "e2e_util.h"

__attribute__((noinline)) char* make_buffer(void) {
  char* p = malloc(100);
  ESCAPE(p);
  return p;
}

__attribute__((noinline)) char* grow_buffer(char* p) {
  p = realloc(p, 200);  // @alloc
  ESCAPE(p);
  return p;
}

int main(void) {
  char* buffer = make_buffer();
  memset(buffer, 'a', 100);
  buffer = grow_buffer(buffer);  // @call
  ESCAPE(buffer);
  return 0;
}
