// A program with an allocator linked in under names of its own, as a statically linked,
// prefixed jemalloc has (je_malloc): memtrack cannot see what goes through them, and the
// report must say so; what goes through malloc is seen as usual. Leaks 80 bytes through
// je_malloc (not seen) and nothing through malloc.
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli_util.h"

static _Alignas(16) unsigned char arena[4096];
static size_t used;

__attribute__((noinline)) void* je_malloc(size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (used + size > sizeof(arena)) return NULL;
  void* p = arena + used;
  used += size;
  return p;
}

static void* volatile keep;

int main(void) {
  keep = je_malloc(80);
  free(malloc(32));
  printf("prefixed_allocator: done\n");
  return 0;
}
