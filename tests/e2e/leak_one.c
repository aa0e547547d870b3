// The simplest leak: one 1234-byte block from make_buffer(), never freed.
// EXPECT-LEAKED: 1234 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 1234 bytes in 1 block | make_buffer@alloc main@call
#include "e2e_util.h"

__attribute__((noinline)) char* make_buffer(void) {
  char* p = malloc(1234);  // @alloc
  ESCAPE(p);
  return p;
}

int main(void) {
  char* buffer = make_buffer();  // @call
  ESCAPE(buffer);                // the last pointer to it dies with main's frame
  return 0;
}
