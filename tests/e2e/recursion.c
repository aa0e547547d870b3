// A leak at the bottom of a 20-deep recursion: the default max_frames (32) keeps every
// recursion frame, and main below them.
// EXPECT-LEAKED: 200 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 200 bytes in 1 block | recurse@alloc recurse@recurse*19 main@call
#include "e2e_util.h"

// depth 19 .. 0: twenty frames. The escape after the recursive call keeps gcc from turning
// the recursion into a loop.
__attribute__((noinline)) void* recurse(int depth) {
  void* p = depth == 0 ? malloc(200) : recurse(depth - 1);  // @alloc @recurse
  ESCAPE(p);
  return p;
}

int main(void) {
  void* p = recurse(19);  // @call
  ESCAPE(p);
  return 0;
}
