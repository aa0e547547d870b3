// fork: each process prints its own report with its own pid and numbers. The 100-byte block
// allocated before the fork exists, unfreed, in both; the child also leaks 300 bytes and the
// parent, after the child has exited, 50 bytes.
// EXPECT-REPORTS: 2
// EXPECT-PROCESS-LEAKED: main 150 bytes in 2 blocks
// EXPECT-PROCESS-GROUPS: main 2
// EXPECT-PROCESS-GROUP: main 100 bytes in 1 block | leak_before_fork@alloc_before main@call_before
// EXPECT-PROCESS-GROUP: main 50 bytes in 1 block | leak_in_parent@alloc_parent main@call_parent
// EXPECT-PROCESS-LEAKED: child 400 bytes in 2 blocks
// EXPECT-PROCESS-GROUPS: child 2
// EXPECT-PROCESS-GROUP: child 300 bytes in 1 block | leak_in_child@alloc_child main@call_child
// EXPECT-PROCESS-GROUP: child 100 bytes in 1 block | leak_before_fork@alloc_before main@call_before
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_util.h"

__attribute__((noinline)) void leak_before_fork(void) {
  ESCAPE(malloc(100));  // @alloc_before
}
__attribute__((noinline)) void leak_in_child(void) {
  ESCAPE(malloc(300));  // @alloc_child
}
__attribute__((noinline)) void leak_in_parent(void) {
  ESCAPE(malloc(50));  // @alloc_parent
}

int main(void) {
  leak_before_fork();  // @call_before
  fflush(stdout);      // nothing buffered may be written twice
  pid_t child = fork();
  CHECK(child >= 0);
  if (child == 0) {
    leak_in_child();  // @call_child
    printf("child done\n");
    return 0;  // the child's report is complete before the parent goes on
  }
  int status = 0;
  CHECK(waitpid(child, &status, 0) == child);
  leak_in_parent();  // @call_parent
  printf("parent done; child exited with %d\n", WEXITSTATUS(status));
  return 0;
}
