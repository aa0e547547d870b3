// Prints LD_PRELOAD and MEMTRACK_OPTIONS as it sees them ("LD_PRELOAD=..." lines on stdout,
// "(unset)" if absent) and leaks 100 bytes from make_leak().
#include <stdio.h>

#include "cli_util.h"

__attribute__((noinline)) void* make_leak(void) {
  void* p = malloc(100);
  ESCAPE(p);
  return p;
}

int main(void) {
  const char* names[] = {"LD_PRELOAD", "MEMTRACK_OPTIONS"};
  for (int i = 0; i < 2; ++i) {
    const char* value = getenv(names[i]);
    printf("%s=%s\n", names[i], value != NULL ? value : "(unset)");
  }
  void* p = make_leak();
  ESCAPE(p);
  return 0;
}
