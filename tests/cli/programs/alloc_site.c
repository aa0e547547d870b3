// The leak site that tests suppress by source file name (leak:*alloc_site.c).
#include "cli_util.h"

void* alloc_in_site(size_t n);

__attribute__((noinline)) void* alloc_in_site(size_t n) {
  void* p = malloc(n);
  ESCAPE(p);
  return p;
}
