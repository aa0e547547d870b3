// The library unwind_torture loads and unloads: its allocation frames must symbolize and
// unwind correctly each time it is mapped again.
#include <stdlib.h>

__attribute__((noinline)) static void* allocate_inner(int n) {
  return malloc((size_t)n + 1);
}

void* torture_library_allocate(int n) {
  void* p = allocate_inner(n);
  __asm__ volatile("" ::: "memory");
  return p;
}
