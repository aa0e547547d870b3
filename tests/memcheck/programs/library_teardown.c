// A program linked with a library (teardown_lib.c) whose destructor frees the state its
// constructor built and leaks a block of its own. memcheck checks after every destructor has
// run: the state is gone (nothing still reachable) and the teardown's leak is definitely
// lost. A report made before the libraries' destructors would call the state reachable and
// miss the leak.
// MEMCHECK: definite 176 1
// REACHABLE: compare
#include "memcheck_case.h"

int teardown_lib_blocks(void);

int main(void) {
  CHECK(teardown_lib_blocks() == 8);
  return 0;
}
