// Forks; the child execs argv[1] with the remaining arguments while the parent waits for it,
// then leaks 50 bytes from parent_leak() and exits 0 (1 if the child failed to start).
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"

__attribute__((noinline)) void* parent_leak(void) {
  void* p = malloc(50);
  ESCAPE(p);
  return p;
}

int main(int argc, char** argv) {
  if (argc < 2) return 1;
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    execv(argv[1], argv + 1);
    _exit(127);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) return 1;
  void* p = parent_leak();
  ESCAPE(p);
  return WIFEXITED(status) && WEXITSTATUS(status) != 127 ? 0 : 1;
}
