// The allocator entry points leave errno alone when they succeed (a program may read errno
// after a malloc it did not expect to touch it), and a failing malloc sets ENOMEM.
// EXPECT-LEAKED: 0 bytes in 0 blocks
// EXPECT-GROUPS: 0
#include <errno.h>
#include <malloc.h>
#include <stdint.h>

#include "e2e_util.h"

int main(void) {
  errno = EDOM;
  char* a = malloc(100);
  CHECK(errno == EDOM);
  char* b = calloc(4, 25);
  CHECK(errno == EDOM);
  a = realloc(a, 4000);
  CHECK(errno == EDOM);
  void* c = NULL;
  CHECK(posix_memalign(&c, 128, 256) == 0);
  CHECK(errno == EDOM);
  void* d = aligned_alloc(64, 128);
  CHECK(errno == EDOM);
  CHECK(malloc_usable_size(a) >= 4000);
  CHECK(errno == EDOM);
  free(a);
  free(b);
  free(c);
  free(d);
  free(NULL);
  CHECK(errno == EDOM);

  // More than PTRDIFF_MAX, which glibc refuses on every target (SIZE_MAX / 2 would be tried
  // on 32-bit ARM, and fit in the 4 GiB a 32-bit program has under qemu-user). volatile: no
  // compile-time size warning.
  volatile size_t huge = SIZE_MAX / 2 + 1;
  errno = 0;
  char* impossible = malloc(huge);
  ESCAPE(impossible);  // gcc may otherwise fold "malloc(n) == NULL" to false
  CHECK(impossible == NULL && errno == ENOMEM);
  printf("errno preserved\n");
  return 0;
}
