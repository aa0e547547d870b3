// exit(5) called from a second thread while main waits in pthread_join: the report is still
// printed (from the exiting thread) and the status passes through.
// EXPECT-EXIT: 5
// EXPECT-HOW: exit
// EXPECT-LEAKED: 192 bytes in 2 blocks
// EXPECT-GROUPS: 2
// EXPECT-GROUP: 64 bytes in 1 block | leak_in_main@alloc_main main@call
// EXPECT-GROUP: 128 bytes in 1 block | exiting_thread@alloc_thread !main
#include <pthread.h>

#include "e2e_util.h"

__attribute__((noinline)) void leak_in_main(void) {
  ESCAPE(malloc(64));  // @alloc_main
}

static void* exiting_thread(void* arg) {
  ESCAPE(malloc(128));  // @alloc_thread
  printf("thread calls exit(5)\n");
  exit(5);
  return arg;
}

int main(void) {
  leak_in_main();  // @call
  printf("main starts the thread\n");
  fflush(stdout);
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, exiting_thread, NULL) == 0);
  pthread_join(thread, NULL);  // never returns: the thread ends the process
  printf("not reached\n");
  return 0;
}
