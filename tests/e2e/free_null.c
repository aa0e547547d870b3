// free(NULL) does nothing, however often: no crash, no report entry. The 16-byte control leak
// shows that tracking is on.
// EXPECT-LEAKED: 16 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 16 bytes in 1 block | control_leak@alloc main@call
#include "e2e_util.h"

__attribute__((noinline)) void control_leak(void) {
  ESCAPE(malloc(16));  // @alloc
}

int main(void) {
  void* volatile nothing = NULL;  // volatile: gcc would drop a free of a known NULL
  for (int i = 0; i < 3; ++i) free(nothing);
  control_leak();  // @call
  printf("free(NULL) three times\n");
  return 0;
}
