// A 64 GiB MAP_NORESERVE reservation with one touched page: the leak scan must find the
// pointer stored deep inside it (the 77-byte block is still reachable, so not reported)
// without reading, and so backing, the untouched gigabytes; the 55-byte block is lost.
// EXPECT-LEAKED: 55 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 55 bytes in 1 block | lose_one@alloc main@call
#include <sys/mman.h>

#include "e2e_util.h"

__attribute__((noinline)) void lose_one(void) {
  ESCAPE(malloc(55));  // @alloc
}

int main(void) {
  char* big = mmap(0, 64UL << 30, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  CHECK(big != MAP_FAILED);
  void** slot = (void**)(big + (5UL << 30));
  *slot = malloc(77);
  lose_one();  // @call
  ESCAPE(0);
  return 0;
}
