// Threads that end while the exit report starts: 16 detached threads that leave at once,
// and one that blocks every signal and sleeps (sigwait-style). main exits without waiting
// for any of them. The leak scan must give up on the ones that exited or cannot take its
// stop signal at once, never waiting out its one-second deadline.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "cli_util.h"

static void* leave(void* arg) {
  return arg;
}

static void* sleeper(void* arg) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, NULL);
  for (;;) pause();
  return arg;
}

int main(void) {
  pthread_attr_t detached;
  pthread_attr_init(&detached);
  pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  pthread_create(&thread, &detached, sleeper, NULL);
  for (int i = 0; i < 16; ++i) pthread_create(&thread, &detached, leave, NULL);
  ESCAPE(malloc(21));
  return 0;
}
