// Stacks must be right in code without frame pointers. Here the allocation happens in a
// qsort comparison callback, so the unwinder must step through glibc's qsort (built without
// frame pointers) to find the program's caller above it: a frame-pointer walk loses
// sort_and_leak and main. (glibc's qsort is a tail call to qsort_r, which libc's debug info,
// when installed, names __GI___qsort_r: the CLI's group leaves it out.)
// EXPECT-LEAKED: 32 bytes in 1 block
// TEXT-EXPECT-GROUP: 32 bytes in 1 block | compare_and_leak qsort_r sort_and_leak main
// CLI-EXPECT-GROUP: 32 bytes in 1 block | compare_and_leak@alloc sort_and_leak@call_qsort main@call
#include "e2e_util.h"

static int leaked = 0;

__attribute__((noinline)) static int compare_and_leak(const void* a, const void* b) {
  if (!leaked) {
    leaked = 1;
    ESCAPE(malloc(32));  // @alloc
  }
  return *(const int*)a - *(const int*)b;
}

__attribute__((noinline)) void sort_and_leak(int* values, size_t n) {
  qsort(values, n, sizeof *values, compare_and_leak);  // @call_qsort
  ESCAPE(values);
}

int main(void) {
  int values[] = {5, 3, 9, 1, 7};
  sort_and_leak(values, 5);  // @call
  printf("%d %d %d %d %d\n", values[0], values[1], values[2], values[3], values[4]);
  return 0;
}
