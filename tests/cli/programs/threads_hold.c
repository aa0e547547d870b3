// Two threads each hold 200 blocks of 500 bytes (100,000 bytes, below the 256 KiB a thread
// publishes its count at: runtime/record/peak.h) at the same time, then free them all and
// exit; main then exits. The report's peak must count the threads' blocks: at least one
// thread's 100,000 bytes, which its exit publishes.
#include <pthread.h>
#include <stdlib.h>

#include "cli_util.h"

enum { kThreads = 2, kBlocks = 200, kSize = 500 };

static pthread_barrier_t g_all_hold;

static void* hold(void* arg) {
  void* blocks[kBlocks];
  for (int i = 0; i < kBlocks; ++i) {
    blocks[i] = malloc(kSize);
    if (blocks[i] == NULL) abort();
    ESCAPE(blocks[i]);
  }
  pthread_barrier_wait(&g_all_hold);
  for (int i = 0; i < kBlocks; ++i) free(blocks[i]);
  return arg;
}

int main(void) {
  pthread_barrier_init(&g_all_hold, NULL, kThreads);
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    if (pthread_create(&threads[t], NULL, hold, NULL) != 0) abort();
  }
  for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);
  return 0;
}
