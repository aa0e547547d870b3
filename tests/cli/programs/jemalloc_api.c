// jemalloc's own entry points (jemalloc.h) under memtrack, linked with -ljemalloc: each leaks
// a known block, and each is given blocks malloc made (from memtrack's own heap), which
// jemalloc itself does not own: sallocx, xallocx, rallocx, dallocx and sdallocx of them must
// work, not crash. Leaks: 333 bytes (mallocx), 4,096 aligned to 4 KiB zeroed (mallocx), 600
// (rallocx of a malloc'd block), 50 (mallocx with the thread cache off).
#include <jemalloc/jemalloc.h>
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
  keep = mallocx(333, 0);                                                     // LEAK-mallocx
  unsigned char* zeroed = mallocx(4096, MALLOCX_ALIGN(4096) | MALLOCX_ZERO);  // LEAK-zeroed
  CHECK(zeroed != NULL && ((uintptr_t)zeroed & 4095) == 0 && zeroed[100] == 0 && zeroed[4095] == 0);
  keep = zeroed;
  char* grown = malloc(10);
  strcpy(grown, "abcdefghi");
  grown = rallocx(grown, 600, MALLOCX_ZERO);  // LEAK-rallocx
  CHECK(grown != NULL && strcmp(grown, "abcdefghi") == 0 && grown[599] == 0);
  keep = grown;
  keep = mallocx(50, MALLOCX_TCACHE_NONE);  // LEAK-tcache
  keep = NULL;
}

int main(void) {
  leaks();
  // Blocks of memtrack's heap, handed to jemalloc's functions.
  void* small = malloc(100);
  CHECK(sallocx(small, 0) >= 100);
  CHECK(xallocx(small, 50, 0, 0) >= 100);
  CHECK(nallocx(100, 0) >= 100);
  dallocx(small, 0);
  void* sized = malloc(64);
  sdallocx(sized, 64, 0);
  void* moved = rallocx(malloc(32), 20000, 0);
  CHECK(moved != NULL && sallocx(moved, 0) >= 20000);
  dallocx(moved, MALLOCX_TCACHE_NONE);
  void* aligned = rallocx(malloc(16), 256, MALLOCX_LG_ALIGN(8));
  CHECK(aligned != NULL && ((uintptr_t)aligned & 255) == 0);
  free(aligned);
  // jemalloc's own, freed by free().
  free(mallocx(70000, 0));
  printf("jemalloc_api: done\n");
  return 0;
}
