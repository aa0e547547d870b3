// Starts itself again with an empty environment, first with posix_spawn, then with execve
// (so the second child replaces the parent). Each child leaks 33 bytes from child_leak()
// and prints whether LD_PRELOAD reached it. Under memtrack both children are traced.
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"

__attribute__((noinline)) static void* child_leak(void) {
  void* p = malloc(33);
  ESCAPE(p);
  return p;
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "child") == 0) {
    ESCAPE(child_leak());
    printf("child: LD_PRELOAD %s\n", getenv("LD_PRELOAD") != NULL ? "set" : "unset");
    return 0;
  }
  char* empty[] = {NULL};
  char* args[] = {argv[0], "child", NULL};
  pid_t pid;
  if (posix_spawn(&pid, argv[0], NULL, NULL, args, empty) != 0) return 3;
  waitpid(pid, NULL, 0);
  fflush(stdout);
  execve(argv[0], args, empty);
  return 4;
}
