// Starts N (default 500) children with posix_spawn, each running /bin/true, one after the
// other: the cost memtrack adds to every short-lived process of a test suite.
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>

extern char** environ;

int main(int argc, char** argv) {
  int count = argc > 1 ? atoi(argv[1]) : 500;
  char* child_argv[] = {"/bin/true", NULL};
  for (int i = 0; i < count; ++i) {
    pid_t pid;
    if (posix_spawn(&pid, "/bin/true", NULL, NULL, child_argv, environ) != 0) return 1;
    int status;
    if (waitpid(pid, &status, 0) != pid || status != 0) return 2;
  }
  return 0;
}
