// libcli_modleak.so: a shared library the three_sites program links, so its leak can be
// suppressed by module name (leak:libcli_modleak.so).
#include "cli_util.h"

void* modleak_alloc(size_t n);

__attribute__((noinline)) void* modleak_alloc(size_t n) {
  void* p = malloc(n);
  ESCAPE(p);
  return p;
}
