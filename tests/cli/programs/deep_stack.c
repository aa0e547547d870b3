// A 64-byte leak made four calls deep: level4 <- level3 <- level2 <- level1 <- main, so a
// stack limit (max_frames, --num-callers) visibly cuts it.
#include "cli_util.h"

// Each level calls the next and then escapes its result, so no call is a tail call.
__attribute__((noinline)) void* level4(void) {
  void* p = malloc(64);
  ESCAPE(p);
  return p;
}
__attribute__((noinline)) void* level3(void) {
  void* p = level4();
  ESCAPE(p);
  return p;
}
__attribute__((noinline)) void* level2(void) {
  void* p = level3();
  ESCAPE(p);
  return p;
}
__attribute__((noinline)) void* level1(void) {
  void* p = level2();
  ESCAPE(p);
  return p;
}

int main(void) {
  void* p = level1();
  ESCAPE(p);
  return 0;
}
