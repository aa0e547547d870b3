// _exit(3) skips atexit handlers and destructors, where the report normally comes from; the
// report is printed anyway, says how the program ended, and the status passes through.
// EXPECT-EXIT: 3
// EXPECT-HOW: _exit with status 3
// EXPECT-LEAKED: 33 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 33 bytes in 1 block | leak_before_exit@alloc main@call
#include <unistd.h>

#include "e2e_util.h"

__attribute__((noinline)) void leak_before_exit(void) {
  ESCAPE(malloc(33));  // @alloc
}

int main(void) {
  leak_before_exit();  // @call
  printf("calling _exit(3)\n");
  fflush(stdout);  // _exit does not flush stdio
  _exit(3);
}
