// A 100 µs interval timer whose SIGALRM handler frees the block a global points to and
// allocates a new one, still running while the program exits. The exit report must see a
// stable heap: the one block `slot` points to is still reachable, and only the 100 bytes
// from lost_site() are lost (no handler may run in the middle of the leak scan).
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#include "cli_util.h"

static void* volatile slot;

static void on_alarm(int sig) {
  (void)sig;
  free(slot);
  slot = malloc(48);
}

__attribute__((noinline)) static void* lost_site(void) {
  void* p = malloc(100);
  ESCAPE(p);
  return p;
}

int main(void) {
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  action.sa_handler = on_alarm;
  action.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &action, NULL);
  slot = malloc(48);
  ESCAPE(lost_site());
  // The handler allocates: the main thread must not be inside malloc when it runs, so it
  // only spins from here on.
  struct itimerval every = {{0, 100}, {0, 100}};
  setitimer(ITIMER_REAL, &every, NULL);
  for (volatile long i = 0; i < 20000000; ++i) {
  }
  return 0;
}
