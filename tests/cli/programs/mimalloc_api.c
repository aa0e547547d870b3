// mimalloc's own names (mimalloc.h) under memtrack, linked with -lmimalloc: each allocation
// function leaks a known block, each free function frees one. Leaks: 444 bytes (mi_malloc),
// 200 zeroed (mi_zalloc), 120 (mi_mallocn), 512 aligned to 512 (mi_malloc_aligned), 6
// (mi_strdup). Its heaps (mi_heap_*) are not interposed: their block is not seen, and the
// report says so; with an argument, no heap is made (and the report has no such note).
#include <mimalloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  keep = mi_malloc(444);                 // LEAK-malloc
  unsigned char* zero = mi_zalloc(200);  // LEAK-zalloc
  CHECK(zero != NULL && zero[0] == 0 && zero[199] == 0);
  keep = zero;
  keep = mi_mallocn(10, 12);                    // LEAK-mallocn
  void* aligned = mi_malloc_aligned(512, 512);  // LEAK-aligned
  CHECK(aligned != NULL && ((uintptr_t)aligned & 511) == 0);
  keep = aligned;
  keep = mi_strdup("hello");  // LEAK-strdup
  keep = NULL;
}

int main(int argc, char** argv) {
  (void)argv;
  leaks();
  void* p = mi_malloc(64);
  CHECK(mi_usable_size(p) >= 64);
  CHECK(mi_expand(p, 32) == p);
  mi_free(p);
  mi_free(mi_calloc(3, 7));
  char* s = mi_malloc(8);
  strcpy(s, "abc");
  s = mi_realloc(s, 4000);
  CHECK(s != NULL && strcmp(s, "abc") == 0);
  s = mi_reallocf(s, 9000);
  CHECK(s != NULL && strcmp(s, "abc") == 0);
  mi_free_size(s, 9000);
  void* a = mi_realloc_aligned(mi_malloc(10), 1000, 128);
  CHECK(a != NULL && ((uintptr_t)a & 127) == 0);
  mi_free_aligned(a, 128);
  unsigned char* z = mi_zalloc_aligned(300, 64);
  CHECK(z != NULL && z[299] == 0);
  mi_free(z);
  mi_free(mi_calloc_aligned(5, 5, 32));
  mi_free(mi_strndup("abcdef", 3));
  mi_free(mi_reallocn(NULL, 4, 4));
  free(mi_malloc(16));  // mimalloc's free and memtrack's are one
  mi_free(malloc(16));
  if (argc < 2) {
    mi_heap_t* heap = mi_heap_new();
    keep = mi_heap_malloc(heap, 1000);  // not seen
    mi_heap_destroy(heap);
  }
  printf("mimalloc_api: done\n");
  return 0;
}
