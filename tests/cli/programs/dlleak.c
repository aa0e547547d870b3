// libcli_dlleak.so: dlopen'ed by dlopen_leak.c, leaks 77 bytes on the marked line.
#include "cli_util.h"

void* dlleak_alloc(void);

__attribute__((noinline)) void* dlleak_alloc(void) {
  void* p = malloc(77);  // DLLEAK-LINE
  ESCAPE(p);
  return p;
}
