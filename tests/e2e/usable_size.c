// malloc_usable_size on tracked blocks returns at least the size asked for, and the report
// still shows the requested size (100), not the usable one.
// EXPECT-LEAKED: 100 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 100 bytes in 1 block | leak_checked_block@alloc main@call
#include <malloc.h>
#include <string.h>

#include "e2e_util.h"

__attribute__((noinline)) void leak_checked_block(void) {
  char* p = malloc(100);  // @alloc
  CHECK(malloc_usable_size(p) >= 100);
  memset(p, 1, malloc_usable_size(p));  // all of it is usable
  ESCAPE(p);
}

__attribute__((noinline)) void check_other_families(void) {
  char* c = calloc(3, 70);
  CHECK(malloc_usable_size(c) >= 210);
  char* r = realloc(NULL, 10);
  r = realloc(r, 3000);
  CHECK(malloc_usable_size(r) >= 3000);
  void* a = aligned_alloc(64, 640);
  CHECK(malloc_usable_size(a) >= 640);
  CHECK(malloc_usable_size(NULL) == 0);
  free(c);
  free(r);
  free(a);
}

int main(void) {
  leak_checked_block();  // @call
  check_other_families();
  printf("malloc_usable_size >= requested size\n");
  return 0;
}
