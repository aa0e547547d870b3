// The only pointer to a block is in an anonymous read-write mmap region that the kernel
// merged into one mapping with a large block glibc mmapped on its own (placed right below
// the chunk's mapping, with the same protection). The mapping holds a block, yet it is not a
// malloc arena: memcheck scans the region, and so must memtrack, around the chunk.
// (cc1plus's GC pages next to big malloc blocks are the real-world case.)
// MEMCHECK: reachable 8388864 9
// REACHABLE: compare
#include <stdint.h>
#include <sys/mman.h>

#include "memcheck_case.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

enum { kBigBlocks = 8, kBigSize = 1 << 20 };

void* g_big[kBigBlocks];
void** g_region;

// Maps one page right below the mapping of g_big[i], if that page is free (glibc's chunk
// header is 16 bytes before the block, at the start of its mapping).
static void** map_below(int i) {
  uintptr_t below = (((uintptr_t)g_big[i] - 16) & ~(uintptr_t)4095) - 4096;
  void* p = mmap((void*)below, 4096, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED) return NULL;
  if ((uintptr_t)p == below) return p;
  munmap(p, 4096);  // a kernel that took the flag for a hint
  return NULL;
}

NOINLINE static void setup(void) {
  // Several chunks: memtrack's own table mappings may take the page below some of them.
  for (int i = 0; i < kBigBlocks; ++i) {
    g_big[i] = malloc(kBigSize);  // above the mmap threshold: a mapping of its own
    CHECK(g_big[i] != NULL);
  }
  for (int i = kBigBlocks - 1; i >= 0 && g_region == NULL; --i) g_region = map_below(i);
  if (g_region == NULL) {
    g_region = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  CHECK(g_region != MAP_FAILED);
  g_region[100] = malloc(256);
}

int main(void) {
  setup();
  scrub_stack();
  return 0;
}
