// log_file=DIR/memtrack.%p.log writes the report to a file named with the pid (the runner
// checks that the pid in the name is the reporting process's), and nothing to stderr.
// CLI: skip the CLI writes the text report itself (--log-file); log_file has no effect
// RUN-OPTIONS: log_file=%t/memtrack.%p.log
// EXPECT-REPORT-FILE: memtrack.%p.log
// EXPECT-LEAKED: 777 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 777 bytes in 1 block | leak_to_log@alloc main@call
#include "e2e_util.h"

__attribute__((noinline)) void leak_to_log(void) {
  ESCAPE(malloc(777));  // @alloc
}

int main(void) {
  leak_to_log();  // @call
  printf("the report goes to a file\n");
  return 0;
}
