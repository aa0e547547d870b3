// Starts argv[2] (with the remaining arguments) the way argv[1] says, waits for it, and exits
// 0 (1 if it could not be started): "fork" (fork and execv), "spawn" (posix_spawn), "system"
// (system(3): /bin/sh -c), "shell" (/bin/sh -c "PROG; true", so the shell starts it as a
// child of its own, with vfork, rather than exec'ing it in its place).
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.h"

extern char** environ;

static int wait_for(pid_t child) {
  int status = 0;
  return child > 0 && waitpid(child, &status, 0) == child ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc < 3) return 1;
  const char* how = argv[1];
  if (strcmp(how, "fork") == 0) {
    pid_t child = fork();
    if (child == 0) {
      execv(argv[2], argv + 2);
      _exit(127);
    }
    return wait_for(child);
  }
  if (strcmp(how, "spawn") == 0) {
    pid_t child = 0;
    if (posix_spawn(&child, argv[2], NULL, NULL, argv + 2, environ) != 0) return 1;
    return wait_for(child);
  }
  char command[4096];
  const char* format = strcmp(how, "shell") == 0 ? "%s; true" : "%s";
  if ((size_t)snprintf(command, sizeof command, format, argv[2]) >= sizeof command) return 1;
  if (strcmp(how, "system") == 0) return system(command) == 0 ? 0 : 1;
  if (strcmp(how, "shell") == 0) {
    pid_t child = fork();
    if (child == 0) {
      execl("/bin/sh", "sh", "-c", command, (char*)NULL);
      _exit(127);
    }
    return wait_for(child);
  }
  return 1;
}
