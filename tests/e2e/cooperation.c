// include/memtrack/memtrack.h: an ignored block is never reported (it counts as still
// reachable), and the program's memtrack_default_options() sets runtime defaults
// (show_reachable=1 here, so the ignored block is listed).
// EXPECT-LEAKED: 222 bytes in 1 block
// EXPECT-GROUPS: 2
// TEXT-EXPECT-GROUP: 222 bytes in 1 block | lose_one main
// TEXT-EXPECT-GROUP: 111 bytes in 1 block | keep_cache main
// CLI: skip the CLI renders reachable blocks only with --show-leak-kinds
#include <memtrack/memtrack.h>

#include "e2e_util.h"

const char* memtrack_default_options(void) {
  return "show_reachable=1";
}

__attribute__((noinline)) void keep_cache(void) {
  void* cache = malloc(111);
  memtrack_ignore_object(cache);  // no pointer to it survives, but it is not a leak
  ESCAPE(cache);
}

__attribute__((noinline)) void lose_one(void) {
  ESCAPE(malloc(222));
}

int main(void) {
  keep_cache();
  ESCAPE(0);
  lose_one();
  ESCAPE(0);
  return 0;
}
