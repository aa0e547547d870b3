// Two threads churn malloc/calloc/free of 8-1,000 bytes, each interrupted every 50 µs by a
// timer of its own whose handler frees and allocates too: inside the hooks, their fast path
// included, often. That is not async-signal-safe: run plainly, or with glibc_malloc=1, it
// deadlocks sooner or later, when the handler takes glibc's arena lock again. Under
// memtrack's own heap glibc serves only the calls of a handler that interrupted the runtime
// (hooks/fast_path.h), and this program's runtime calls never hold glibc's lock, so it runs
// to its end; the runtime must hand out each chunk once, keep its lists and counts whole,
// not crash, and not take the handler's glibc blocks for invalid frees
// (runtime/record/forwarded.h). At the end each thread leaks exactly 10 blocks of 24 bytes
// from leak_ten, and the handler's last block is freed. Prints how often the handler ran.
// Usage: signal_churn [pairs per thread]
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"

#ifndef sigev_notify_thread_id  // glibc before 2.35 names it only in the union
#define sigev_notify_thread_id _sigev_un._tid
#endif

enum { kThreads = 2, kSlots = 256 };

static _Thread_local void* handler_slot;
static atomic_long handler_runs;

static void on_signal(int sig) {
  (void)sig;
  free(handler_slot);
  handler_slot = malloc(40 + (size_t)(atomic_fetch_add(&handler_runs, 1) % 200));
  if (handler_slot != NULL) memset(handler_slot, 0x5a, 40);
}

__attribute__((noinline)) static void leak_ten(void) {
  for (int i = 0; i < 10; ++i) ESCAPE(malloc(24));  // LEAK-HERE
}

// A 50 µs timer that signals the calling thread (a monotonic clock: high resolution).
static timer_t start_timer(void) {
  struct sigevent event;
  memset(&event, 0, sizeof(event));
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = SIGUSR1;
  event.sigev_notify_thread_id = gettid();
  timer_t timer;
  if (timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) abort();
  struct itimerspec every = {{0, 50000}, {0, 50000}};
  if (timer_settime(timer, 0, &every, NULL) != 0) abort();
  return timer;
}

static void* churn(void* arg) {
  long pairs = *(long*)arg;
  timer_t timer = start_timer();
  void* slots[kSlots] = {0};
  unsigned x = 12345u + (unsigned)(size_t)&slots;
  for (long i = 0; i < pairs; ++i) {
    x = x * 1103515245u + 12345u;
    unsigned slot = (x >> 8) % kSlots;
    free(slots[slot]);
    size_t size = 8 + (x >> 20) % 1000;
    slots[slot] = (x & 1) != 0 ? malloc(size) : calloc(1, size);
    if (slots[slot] == NULL) abort();
    memset(slots[slot], 0xa5, 8);
  }
  for (int i = 0; i < kSlots; ++i) free(slots[i]);
  leak_ten();
  // The handler's block goes before the thread does: nothing else of it may be left.
  timer_delete(timer);
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, NULL);
  free(handler_slot);
  handler_slot = NULL;
  return NULL;
}

int main(int argc, char** argv) {
  long pairs = argc > 1 ? atol(argv[1]) : 1000000;
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = on_signal;
  action.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &action, NULL);
  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t) {
    if (pthread_create(&threads[t], NULL, churn, &pairs) != 0) abort();
  }
  for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);
  printf("handler ran %ld times\n", atomic_load(&handler_runs));
  return 0;
}
