// Daemonizes the classic way: forks, the child calls setsid() and forks again, and both
// parents exit at once (the middle one as soon as the daemon runs). The daemon (the
// grandchild) leaks 64 bytes from daemon_leak(), prints "daemon PID" on stdout, sleeps
// argv[1] milliseconds (default 300) and exits 0.
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"

__attribute__((noinline)) void* daemon_leak(void) {
  void* p = malloc(64);
  ESCAPE(p);
  return p;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

int main(int argc, char** argv) {
  long ms = argc > 1 ? atol(argv[1]) : 300;
  pid_t child = fork();
  if (child < 0) return 1;
  if (child > 0) {
    int status = 0;
    waitpid(child, &status, 0);
    return 0;
  }
  setsid();
  // The middle process leaves once the daemon runs (a daemon that has not run at all when
  // memtrack run ends is daemon_unscheduled.c's case).
  int started[2];
  if (pipe(started) != 0) _exit(1);
  if (fork() != 0) {
    char byte;
    close(started[1]);
    while (read(started[0], &byte, 1) < 0) {
    }
    _exit(0);
  }
  close(started[0]);
  if (write(started[1], "s", 1) != 1) _exit(1);
  close(started[1]);
  void* p = daemon_leak();
  ESCAPE(p);
  printf("daemon %d\n", (int)getpid());
  fflush(stdout);
  sleep_ms(ms);
  return 0;
}
