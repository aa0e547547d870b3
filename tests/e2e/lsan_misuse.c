// LeakSanitizer's interface called the wrong way: each call is one warning and changes
// nothing (LSan aborts on an unmatched __lsan_enable; memtrack never ends a program for that).
// PLAIN-COMPARE: none
// EXPECT-LEAKED: 32 bytes in 1 block
// EXPECT-GROUP: 32 bytes in 1 block | lose@lose main
// EXPECT-DIAGNOSTIC: warning: __lsan_enable without a matching __lsan_disable
// EXPECT-DIAGNOSTIC: warning: __lsan_ignore_object: not the start of a live heap block; ignored
// EXPECT-DIAGNOSTIC: warning: __lsan_unregister_root_region: no region was registered
#include <sanitizer/lsan_interface.h>

#include "e2e_util.h"

#pragma weak __lsan_enable
#pragma weak __lsan_ignore_object
#pragma weak __lsan_unregister_root_region

static char g_area[64];

__attribute__((noinline)) void lose(void) {
  ESCAPE(malloc(32));  // @lose
}

int main(void) {
  __lsan_enable();
  __lsan_ignore_object(g_area);
  __lsan_unregister_root_region(g_area, sizeof g_area);
  lose();
  ESCAPE(0);
  return 0;
}
