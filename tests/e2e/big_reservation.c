// A 64 GiB MAP_NORESERVE reservation with one touched page: the leak scan must find the
// pointer stored deep inside it (the 77-byte block is still reachable, so not reported)
// without reading, and so backing, the untouched gigabytes; the 55-byte block is lost. A
// 32-bit program has 4 GiB of address space in all: 1 GiB there, the pointer 768 MiB in.
// EXPECT-LEAKED: 55 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 55 bytes in 1 block | lose_one@alloc main@call
#include <stdint.h>
#include <sys/mman.h>

#include "e2e_util.h"

#if UINTPTR_MAX > 0xffffffffu
#define RESERVED (64UL << 30)
#define SLOT_OFFSET (5UL << 30)
#else
#define RESERVED (1UL << 30)
#define SLOT_OFFSET (768UL << 20)
#endif

__attribute__((noinline)) void lose_one(void) {
  ESCAPE(malloc(55));  // @alloc
}

int main(void) {
  char* big =
      mmap(0, RESERVED, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  CHECK(big != MAP_FAILED);
  void** slot = (void**)(big + SLOT_OFFSET);
  *slot = malloc(77);
  lose_one();  // @call
  ESCAPE(0);
  return 0;
}
