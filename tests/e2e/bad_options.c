// Bad MEMTRACK_OPTIONS entries each give one warning and are ignored; the good ones still
// apply (max_frames=2 here) and the program runs as usual.
// RUN-OPTIONS: max_frames=lots:no_such_option=1:max_frames=2:report_at_exit=maybe
// RUN-OPTIONS: just_a_word
// EXPECT-DIAGNOSTIC: ignoring bad value in 'max_frames=lots': expected an integer
// EXPECT-DIAGNOSTIC: ignoring unknown option 'no_such_option=1'
// EXPECT-DIAGNOSTIC: ignoring bad value in 'report_at_exit=maybe'
// EXPECT-DIAGNOSTIC: ignoring option without a value 'just_a_word'
// EXPECT-LEAKED: 64 bytes in 1 block
// EXPECT-FRAMES: 2
// EXPECT-GROUP: 64 bytes in 1 block | level2@alloc level1@call
#include "e2e_util.h"

__attribute__((noinline)) void level2(void) {
  ESCAPE(malloc(64));  // @alloc
}
__attribute__((noinline)) void level1(void) {
  level2();  // @call
  ESCAPE(0);
}

int main(void) {
  level1();
  ESCAPE(0);
  return 0;
}
