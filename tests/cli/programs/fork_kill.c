// Forks a child that leaks 32 bytes and kills itself with SIGKILL (so it can write no
// report); the parent waits for it and exits 0.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"

int main(void) {
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    void* p = malloc(32);
    ESCAPE(p);
    raise(SIGKILL);
    _exit(1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return 0;
}
