// nothrow new of an impossible size returns nullptr instead of throwing; nothrow new of a
// normal size is tracked like any other (the 24-byte block is leaked).
// EXPECT-LEAKED: 24 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 24 bytes in 1 block | nothrow_leak@alloc main@call
#include <cstdint>
#include <new>

#include "e2e_util.h"

// More than PTRDIFF_MAX (2^63 bytes, or 2 GiB on 32-bit ARM): no allocator serves it, whatever
// the address space (a 32-bit program under qemu-user has the whole 4 GiB).
static volatile size_t g_huge = SIZE_MAX / 2 + 1;

__attribute__((noinline)) void nothrow_leak() {
  char* p = new (std::nothrow) char[24];  // @alloc
  CHECK(p != nullptr);
  ESCAPE(p);
}

int main() {
  char* array = new (std::nothrow) char[g_huge];
  ESCAPE(array);
  CHECK(array == nullptr);
  void* object = ::operator new(g_huge, std::nothrow);
  ESCAPE(object);
  CHECK(object == nullptr);
  printf("nothrow new of %zu bytes returned nullptr\n", g_huge);
  nothrow_leak();  // @call
  return 0;
}
