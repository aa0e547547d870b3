// Four threads each leak 100 bytes from the same place: one group of 400 bytes in 4 blocks
// whose stack starts in the thread function. The threads' own bookkeeping (their TLS blocks
// from ld.so) is runtime internal and not shown.
// EXPECT-LEAKED: 400 bytes in 4 blocks
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 400 bytes in 4 blocks | worker@alloc !main
#include <pthread.h>

#include "e2e_util.h"

static void* worker(void* arg) {
  char* scratch = malloc(100);  // @alloc: leaked by every thread
  ESCAPE(scratch);
  return arg;
}

int main(void) {
  pthread_t threads[4];
  for (int i = 0; i < 4; ++i) CHECK(pthread_create(&threads[i], NULL, worker, NULL) == 0);
  for (int i = 0; i < 4; ++i) CHECK(pthread_join(threads[i], NULL) == 0);
  return 0;
}
