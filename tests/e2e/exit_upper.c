// _Exit(4), the C99 spelling of _exit: report printed, status passed through.
// EXPECT-EXIT: 4
// EXPECT-HOW: _Exit with status 4
// EXPECT-LEAKED: 44 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 44 bytes in 1 block | leak_before_exit@alloc main@call
#include "e2e_util.h"

__attribute__((noinline)) void leak_before_exit(void) {
  ESCAPE(malloc(44));  // @alloc
}

int main(void) {
  leak_before_exit();  // @call
  printf("calling _Exit(4)\n");
  fflush(stdout);  // _Exit does not flush stdio
  _Exit(4);
}
