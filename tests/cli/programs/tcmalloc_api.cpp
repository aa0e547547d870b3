// tcmalloc's own names (gperftools' tcmalloc.h) under memtrack, linked with -ltcmalloc: each
// allocation function leaks a known block, each free function frees one. Leaks: 777 bytes
// (tc_malloc), 100 (tc_calloc), 300 (tc_realloc), 256 aligned to 256 (tc_memalign), 48
// (tc_new), 96 (tc_newarray), 128 aligned to 128 (tc_new_aligned). tcmalloc itself keeps an
// 8-byte block it never frees (MallocExtension::Register, which memcheck reports too) and
// libunwind's pipe. C++: the header declares tc_new and the rest for C++ only.
#include <gperftools/tcmalloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <new>

#include "cli_util.h"

static void* volatile keep;

#define CHECK(cond)                                                     \
  do {                                                                  \
    if (!(cond)) {                                                      \
      fprintf(stderr, "check failed: %s (line %d)\n", #cond, __LINE__); \
      exit(2);                                                          \
    }                                                                   \
  } while (0)

__attribute__((noinline)) static void leaks(void) {
  keep = tc_malloc(777);                  // LEAK-malloc
  keep = tc_calloc(1, 100);               // LEAK-calloc
  keep = tc_realloc(tc_malloc(10), 300);  // LEAK-realloc
  void* aligned = tc_memalign(256, 256);  // LEAK-memalign
  CHECK(aligned != NULL && ((uintptr_t)aligned & 255) == 0);
  keep = aligned;
  keep = tc_new(48);                                        // LEAK-new
  keep = tc_newarray(96);                                   // LEAK-newarray
  void* over = tc_new_aligned(128, std::align_val_t{128});  // LEAK-new-aligned
  CHECK(((uintptr_t)over & 127) == 0);
  keep = over;
  keep = NULL;
}

int main(void) {
  leaks();
  void* p = tc_malloc(64);
  CHECK(tc_malloc_size(p) >= 64);
  tc_free(p);
  tc_free_sized(tc_malloc(32), 32);
  tc_cfree(tc_calloc(4, 4));
  void* q = NULL;
  CHECK(tc_posix_memalign(&q, 64, 100) == 0 && ((uintptr_t)q & 63) == 0);
  tc_free(q);
  tc_free(tc_valloc(10));
  tc_free(tc_pvalloc(10));
  tc_delete(tc_new(20));
  tc_deletearray(tc_newarray(20));
  tc_delete_sized(tc_new(24), 24);
  tc_deletearray_sized(tc_newarray(24), 24);
  tc_delete_aligned(tc_new_aligned(64, std::align_val_t{64}), std::align_val_t{64});
  tc_deletearray_aligned(tc_newarray_aligned(64, std::align_val_t{64}), std::align_val_t{64});
  tc_delete_nothrow(tc_new_nothrow(8, std::nothrow), std::nothrow);
  free(tc_malloc(16));  // tcmalloc's free and memtrack's are one
  tc_free(malloc(16));
  printf("tcmalloc_api: done\n");
  return 0;
}
