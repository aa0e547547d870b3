// A thread that blocks every signal and waits in sigwait (the usual signal-handling thread)
// cannot take the leak scan's stop signal, so its registers are not captured; its stack is
// still a live thread's and holds the only pointer to its 64-byte block, which must not be
// called lost (its descriptor names a live thread, unlike the cached stack of one that
// exited). Only main's own block leaks.
// EXPECT-LEAKED: 100 bytes in 1 block
// EXPECT-GROUPS: 1
// EXPECT-GROUP: 100 bytes in 1 block | main@lost
#include <pthread.h>
#include <signal.h>

#include "e2e_util.h"

static pthread_barrier_t g_ready;

static void* waiter(void* arg) {
  (void)arg;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  char* volatile state = malloc(64);  // only this frame points at it
  state[0] = 1;
  pthread_barrier_wait(&g_ready);
  sigset_t wait_for;
  sigemptyset(&wait_for);
  sigaddset(&wait_for, SIGUSR2);
  int sig = 0;
  sigwait(&wait_for, &sig);  // never comes: the process exits meanwhile
  return state;
}

int main(void) {
  CHECK(pthread_barrier_init(&g_ready, NULL, 2) == 0);
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, waiter, NULL) == 0);
  pthread_barrier_wait(&g_ready);
  char* lost = malloc(100);  // @lost
  ESCAPE(lost);
  lost = NULL;
  return 0;
}
