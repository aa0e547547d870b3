// A program that defines LeakSanitizer's __lsan_is_turned_off() to return 1 has no leak
// check: neither LSan nor memtrack reports its leak (tests/lsan compares the two).
// PLAIN-COMPARE: stdout exit
// EXPECT-LEAKED: 0 bytes in 0 blocks
// EXPECT-GROUPS: 0
// EXPECT-DIAGNOSTIC: __lsan_is_turned_off() returned nonzero: no leak check
#include <sanitizer/lsan_interface.h>

#include "e2e_util.h"

__attribute__((used)) int __lsan_is_turned_off(void) {
  return 1;
}

__attribute__((noinline)) void lose(void) {
  ESCAPE(malloc(100));
}

int main(void) {
  lose();
  ESCAPE(0);
  printf("done\n");
  return 0;
}
