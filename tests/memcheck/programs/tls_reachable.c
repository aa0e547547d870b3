// A thread_local pointer holds a block in the main thread (static TLS next to the main
// thread's TCB) and in a worker that is still running (blocked in a barrier) when main calls
// exit(): both still reachable, because every thread's TLS is a root.
// MEMCHECK: reachable 112 2
// REACHABLE: compare
#include <pthread.h>

#include "memcheck_case.h"

static _Thread_local void* t_block;
static pthread_barrier_t g_started;
static pthread_barrier_t g_never;

NOINLINE static void keep(size_t size) {
  t_block = malloc(size);
}

NOINLINE static void* worker(void* arg) {
  (void)arg;
  keep(48);
  pthread_barrier_wait(&g_started);
  pthread_barrier_wait(&g_never);
  return NULL;
}

int main(void) {
  pthread_barrier_init(&g_started, NULL, 2);
  pthread_barrier_init(&g_never, NULL, 2);
  keep(64);
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, worker, NULL) == 0);
  pthread_barrier_wait(&g_started);
  scrub_stack();
  exit(0);
}
