// Leaks 100 bytes, then kills itself with the signal whose number is argv[1] (raise).
#include <signal.h>

#include "cli_util.h"

__attribute__((noinline)) void* leak_before_dying(void) {
  void* p = malloc(100);
  ESCAPE(p);
  return p;
}

int main(int argc, char** argv) {
  void* p = leak_before_dying();
  ESCAPE(p);
  signal(status_arg(argc, argv, 1), SIG_DFL);
  raise(status_arg(argc, argv, 1));
  return 0;  // not reached
}
