// Forks a child that leaks 70 bytes from child_leak() and exits without exec; then, if
// given a program, forks a second child that execs it. The parent leaks 50 bytes from
// parent_leak() once both children have ended, and exits 0 (1 if a child failed).
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"

__attribute__((noinline)) void* child_leak(void) {
  void* p = malloc(70);
  ESCAPE(p);
  return p;
}

__attribute__((noinline)) void* parent_leak(void) {
  void* p = malloc(50);
  ESCAPE(p);
  return p;
}

static int wait_ok(pid_t child) {
  int status = 0;
  return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
         WEXITSTATUS(status) != 127;
}

int main(int argc, char** argv) {
  pid_t child = fork();
  if (child == 0) {
    ESCAPE(child_leak());
    exit(0);
  }
  int ok = wait_ok(child);
  if (argc > 1) {
    pid_t exec_child = fork();
    if (exec_child == 0) {
      execv(argv[1], argv + 1);
      _exit(127);
    }
    ok = ok && wait_ok(exec_child);
  }
  ESCAPE(parent_leak());
  return ok ? 0 : 1;
}
