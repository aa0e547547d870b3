// One 100-byte leak from make_leak(); exits with the status given as argv[1] (default 0).
// No stdio, so the report holds nothing but the program's own block (the golden test).
#include "cli_util.h"

__attribute__((noinline)) void* make_leak(void) {
  void* p = malloc(100);
  ESCAPE(p);
  return p;
}

int main(int argc, char** argv) {
  void* p = make_leak();
  ESCAPE(p);
  return status_arg(argc, argv, 1);
}
