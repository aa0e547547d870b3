// reallocarray(NULL, 5, 40) then grown with reallocarray(p, 10, 40): one 400-byte leak. A
// count x size that overflows fails with ENOMEM and allocates nothing.
// EXPECT-LEAKED: 400 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 400 bytes in 1 block | grow_array@alloc main@call
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>

#include "e2e_util.h"

__attribute__((noinline)) long* grow_array(long* array) {
  array = reallocarray(array, 10, 40);  // @alloc
  ESCAPE(array);
  return array;
}

int main(void) {
  long* array = reallocarray(NULL, 5, 40);
  CHECK(array != NULL);
  array = grow_array(array);  // @call
  CHECK(array != NULL);
  volatile size_t huge = SIZE_MAX / 2;  // volatile: no compile-time overflow warning
  errno = 0;
  long* impossible = reallocarray(NULL, huge, 4);
  ESCAPE(impossible);
  CHECK(impossible == NULL && errno == ENOMEM);
  ESCAPE(array);
  return 0;
}
