// max_frames=4 cuts the stack of a leak made six calls deep to frames #0..#3: the four
// innermost functions, and neither level2 nor main.
// RUN-OPTIONS: max_frames=4
// EXPECT-LEAKED: 100 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-FRAMES: 4
// EXPECT-GROUP: 100 bytes in 1 block | level6@alloc level5@in5 level4@in4 level3@in3 !level2 !main
#include "e2e_util.h"

// Each level calls the next and then escapes its result, so no call is a tail call.
__attribute__((noinline)) void* level6(size_t n) {
  void* p = malloc(n);  // @alloc
  ESCAPE(p);
  return p;
}
__attribute__((noinline)) void* level5(size_t n) {
  void* p = level6(n);  // @in5
  ESCAPE(p);
  return p;
}
__attribute__((noinline)) void* level4(size_t n) {
  void* p = level5(n);  // @in4
  ESCAPE(p);
  return p;
}
__attribute__((noinline)) void* level3(size_t n) {
  void* p = level4(n);  // @in3
  ESCAPE(p);
  return p;
}
__attribute__((noinline)) void* level2(size_t n) {
  void* p = level3(n);
  ESCAPE(p);
  return p;
}
__attribute__((noinline)) void* level1(size_t n) {
  void* p = level2(n);
  ESCAPE(p);
  return p;
}

int main(void) {
  void* p = level1(100);
  ESCAPE(p);
  return 0;
}
