// Aligned allocations leaked, each recorded with the size asked for (not the alignment or
// the size the allocator rounded up to): posix_memalign 1000, aligned_alloc 512, memalign 300.
// EXPECT-LEAKED: 1812 bytes in 3 blocks
// EXPECT-GROUPS: 3
// EXPECT-GROUP: 1000 bytes in 1 block | leak_posix_memalign@alloc_posix main@call_posix
// EXPECT-GROUP: 512 bytes in 1 block | leak_aligned_alloc@alloc_aligned main@call_aligned
// EXPECT-GROUP: 300 bytes in 1 block | leak_memalign@alloc_memalign main@call_memalign
#include <malloc.h>
#include <stdint.h>

#include "e2e_util.h"

__attribute__((noinline)) void leak_posix_memalign(void) {
  void* p = NULL;
  CHECK(posix_memalign(&p, 64, 1000) == 0);  // @alloc_posix
  CHECK((uintptr_t)p % 64 == 0);
  ESCAPE(p);
}

__attribute__((noinline)) void leak_aligned_alloc(void) {
  void* p = aligned_alloc(256, 512);  // @alloc_aligned
  CHECK(p != NULL && (uintptr_t)p % 256 == 0);
  ESCAPE(p);
}

__attribute__((noinline)) void leak_memalign(void) {
  void* p = memalign(32, 300);  // @alloc_memalign
  CHECK(p != NULL && (uintptr_t)p % 32 == 0);
  ESCAPE(p);
}

int main(void) {
  leak_posix_memalign();  // @call_posix
  leak_aligned_alloc();   // @call_aligned
  leak_memalign();        // @call_memalign
  ESCAPE(0);
  return 0;
}
