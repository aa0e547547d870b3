// Ten 100-byte blocks leaked from the same line: one group of 1000 bytes in 10 blocks.
// EXPECT-LEAKED: 1000 bytes in 10 blocks
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 1000 bytes in 10 blocks | leak_ten@alloc main@call
#include "e2e_util.h"

__attribute__((noinline)) void leak_ten(void) {
  for (int i = 0; i < 10; ++i) {
    char* p = malloc(100);  // @alloc: every iteration has the same stack
    ESCAPE(p);
  }
}

int main(void) {
  leak_ten();  // @call
  ESCAPE(0);   // no tail call: main stays on the stack
  return 0;
}
