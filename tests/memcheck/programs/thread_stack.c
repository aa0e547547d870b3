// The only pointer to a block is a local variable of a thread that is still running (blocked
// in a barrier no one else will reach) when main calls exit(): still reachable, because
// every live thread's stack from its stack pointer up is a root.
// MEMCHECK: reachable 304 1
// REACHABLE: compare
#include <pthread.h>

#include "memcheck_case.h"

static pthread_barrier_t g_started;  // main and the worker
static pthread_barrier_t g_never;    // needs 2, only the worker arrives

NOINLINE static void* worker(void* arg) {
  (void)arg;
  char* volatile local = malloc(304);  // volatile: a stack slot, at any optimisation level
  pthread_barrier_wait(&g_started);
  pthread_barrier_wait(&g_never);
  ESCAPE(local);
  return NULL;
}

int main(void) {
  pthread_barrier_init(&g_started, NULL, 2);
  pthread_barrier_init(&g_never, NULL, 2);
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, worker, NULL) == 0);
  pthread_barrier_wait(&g_started);
  exit(0);
}
