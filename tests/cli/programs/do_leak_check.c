// memtrack_do_leak_check() reports while the program runs and returns the lost bytes; the
// exit report follows. Without memtrack it returns -1 and does nothing.
#include <memtrack/memtrack.h>

#include <stdio.h>

#include "cli_util.h"

__attribute__((noinline)) void lose_one(void) {
  ESCAPE(malloc(333));
}

int main(void) {
  lose_one();
  ESCAPE(0);
  long lost = memtrack_do_leak_check();
  printf("lost %ld\n", lost);
  return 0;
}
